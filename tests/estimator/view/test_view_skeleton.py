"""The view's drawing of spatial mechanisms (estimator.view.skeleton): the skeleton's points are the poses of
estimator.spatial.kinematics, its segments join bodies and frames, a closed chain's loop segments close, and a
frame of a URDF's node stream carries the 3-D points and the drive series."""

from __future__ import annotations

import time

import numpy as np
import pytest
import zmq
from conftest import MECHANISMS

from estimator.mechanism_file import load_mechanism
from estimator.spatial.assembly import assemble
from estimator.spatial.kinematics import body_kinematics, frame_pose
from estimator.spatial.model import load_spatial
from estimator.view.feed import Feed, default_series
from estimator.view.scene import Scene, scene_of
from estimator.view.skeleton import Skeleton
from estimator.wire import pack

URDF = MECHANISMS / "urdf"
PANDA = load_spatial(URDF / "panda.urdf")


@pytest.mark.parametrize("name", ["ur5", "panda", "puma560", "delta", "rssr", "five_bar_3d"])
def test_the_skeleton_points_are_the_bodies_and_the_named_frames_where_kinematics_puts_them(name):
    model = load_spatial(URDF / f"{name}.urdf")
    skeleton = Skeleton(model)
    q = np.random.default_rng(1).uniform(-1.0, 1.0, model.dof)
    points = np.array(skeleton.points(q))
    kin = body_kinematics(model, q, np.zeros(model.dof), np.zeros(model.dof))
    assert points[1:model.dof + 1] == pytest.approx(kin.pos)
    for frame in model.frames:
        at = skeleton.point_names.index(frame.name) if frame.name in skeleton.point_names else frame.body + 1
        assert points[at] == pytest.approx(frame_pose(model, kin, frame.name)[1], abs=1e-12)
    layout = skeleton.layout()
    assert layout["kind"] == "spatial" and len(layout["reference"]) == len(layout["point_names"]) == len(points)
    assert len(layout["segments"]) == len(points) - 1  # a tree over the points
    assert len(layout["loops"]) == len(model.loops)


def test_the_panda_skeleton_runs_from_its_base_through_the_seven_joints_to_the_hand():
    layout = Skeleton(PANDA).layout()
    names = layout["point_names"]
    assert names[:8] == ["panda_link0", *(f"panda_link{i}" for i in range(1, 8))]
    assert [names[b] for a, b in layout["segments"] if names[a] == "panda_link7"] == [
        "panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger", "panda_rightfinger"]


@pytest.mark.parametrize(("name", "loops"), [("delta", 5), ("rssr", 1), ("five_bar_3d", 1)])
def test_the_loop_segments_of_a_closed_chain_close_at_an_assembled_configuration_and_open_off_it(name, loops):
    model = load_spatial(URDF / f"{name}.urdf")
    skeleton = Skeleton(model)
    q = assemble(model, model.initial)
    points = np.array(skeleton.points(q))
    lengths = [np.linalg.norm(points[a] - points[b]) for a, b in skeleton.loops]
    assert len(lengths) == loops and max(lengths) < 1e-9
    opened = np.array(skeleton.points(q + np.linspace(0.1, 0.3, model.dof)))
    assert max(np.linalg.norm(opened[a] - opened[b]) for a, b in skeleton.loops) > 1e-3


def test_scene_of_draws_a_planar_mechanism_flat_and_a_urdf_as_a_skeleton():
    assert isinstance(scene_of(load_mechanism(MECHANISMS / "fourbar_crank.yaml")), Scene)
    assert isinstance(scene_of(PANDA), Skeleton)


def test_a_urdf_plots_its_joints_and_its_drives_named_apart_from_them():
    series = default_series(PANDA)
    assert series[:7] == list(PANDA.joint_names) and series[7:] == [f"Q.{name}" for name in PANDA.joint_names]


def test_a_frame_of_a_urdf_stream_carries_the_skeleton_and_the_drive_series():
    context = zmq.Context()
    pub = context.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.bind("tcp://127.0.0.1:*")
    feed = Feed(PANDA, pub.getsockopt_string(zmq.LAST_ENDPOINT), ["panda_joint2", "Q.panda_joint2"])
    q = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    message = {"type": "estimate", "t": 0.5, "q": q, "qd": [0.0] * 7, "qdd": [0.0] * 7, "lam": [],
               "forces": {name: float(k) for k, name in enumerate(PANDA.joint_names)}, "flags": []}
    try:
        for _ in range(250):
            pub.send(pack(message))
            frame = feed.frame()
            if frame["estimate"]:
                break
            time.sleep(0.02)  # the subscription takes a moment to reach the PUB
    finally:
        feed.close()
        context.destroy(linger=0)
    assert frame["estimate"]["series"] == {"panda_joint2": [-0.785, None], "Q.panda_joint2": [1.0, None]}
    assert np.array(frame["estimate"]["points"]) == pytest.approx(np.array(Skeleton(PANDA).points(q)))
    assert len(frame["estimate"]["points"][0]) == 3
