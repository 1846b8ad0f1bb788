"""The URDF reader and the model built from it: what it keeps, and one line for each bad file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.model import PRISMATIC, REVOLUTE, load_spatial

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"

LINK = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="{1}" iyy="1" izz="1"/></inertial></link>'
JOINT = ('<joint name="{0}" type="{1}"><parent link="{2}"/><child link="{3}"/>'
         '<origin xyz="0 0 1"/><axis xyz="0 0 1"/>{4}</joint>')


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "robot.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="r">{body}</robot>')
    return path


def chain(*joints: str, links: str = "abc", ixx: str = "1") -> str:
    return "".join(LINK.format(name, ixx) for name in links) + "".join(joints)


def test_arms_load_with_their_joints_and_masses() -> None:
    ur5 = load_spatial(URDF / "ur5.urdf")
    assert ur5.joint_names == ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                               "wrist_2_joint", "wrist_3_joint")
    assert list(ur5.parent) == [-1, 0, 1, 2, 3, 4]
    # the base link's 4 kg sits on the fixed base; the six moving links' masses from the file
    assert ur5.total_mass == pytest.approx(3.7 + 8.393 + 2.275 + 1.219 + 1.219 + 0.1879, rel=1e-15)
    panda = load_spatial(URDF / "panda.urdf")
    assert panda.dof == 7 and panda.damping.tolist() == [0.003] * 7
    # link7 carries the hand and both fingers through fixed joints
    assert panda.mass[6] == pytest.approx(0.735522 + 0.73 + 2 * 0.015, rel=1e-15)
    assert panda.frame("panda_hand_tcp").body == 6


def test_puma_takes_its_armature_from_the_sidecar_and_kinova_keeps_continuous_joints() -> None:
    puma = load_spatial(URDF / "puma560.urdf")  # puma560.yaml beside it: Jm G² per joint
    np.testing.assert_array_equal(puma.armature, [0.78403, 2.32481, 0.576873, 0.190791, 0.170706, 0.194065])
    assert puma.total_mass == pytest.approx(0.01 + 17.4 + 4.8 + 0.82 + 0.34 + 0.09, rel=1e-15)
    kinova = load_spatial(URDF / "kinova.urdf")
    assert kinova.joint_types == ("continuous", "revolute", "revolute", "continuous", "revolute", "continuous")
    assert kinova.lower[0] == -np.inf and kinova.upper[3] == np.inf and not kinova.armature.any()
    assert kinova.mass[5] == pytest.approx(0.99 + 4 * 0.01, rel=1e-15)  # the fixed fingers ride on link 6


def test_tree_robot_keeps_kinds_limits_and_friction() -> None:
    model = load_spatial(URDF / "test_tree.urdf")
    kinds = dict(zip(model.joint_names, model.kind))
    assert kinds["lift"] == PRISMATIC and kinds["turntable"] == REVOLUTE and kinds["right_extend"] == PRISMATIC
    turntable = model.joint_names.index("turntable")
    assert model.joint_types[turntable] == "continuous"
    assert model.lower[turntable] == -np.inf and model.upper[turntable] == np.inf
    lift = model.joint_names.index("lift")
    assert (model.lower[lift], model.upper[lift], model.damping[lift], model.friction[lift]) == (-0.5, 0.5, 2.0, 0.5)
    assert np.linalg.norm(model.axis[lift]) == pytest.approx(1.0, abs=1e-15)
    assert model.actuator_names == model.joint_names  # default: every movable joint driven
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])


def test_merged_inertia_is_the_sum_of_the_links_about_the_body_origin() -> None:
    """left_hand carries left_tool through a fixed joint: its inertia is the hand's plus the tool's,
    each moved to the hand frame by the parallel-axis theorem (Müller eq. 40)."""
    model = load_spatial(URDF / "test_tree.urdf")
    body = model.joint_names.index("left_wrist")
    hand = lie.spatial_inertia(0.4, np.array([0.05, 0, 0.01]),
                               np.array([[0.0004, 0, 0.00002], [0, 0.0006, 0], [0.00002, 0, 0.0005]]))
    tool_pose = (lie.rotation_rpy(np.array([0, 0.5, 0])), np.array([0.08, 0.01, 0]))
    rot = tool_pose[0]
    com = tool_pose[1] + rot @ np.array([0.01, 0, 0])
    tool = lie.spatial_inertia(0.2, com, rot @ np.diag([0.0001, 0.0002, 0.0002]) @ rot.T)
    np.testing.assert_allclose(model.inertia[body], hand + tool, rtol=0, atol=1e-15)


def test_sidecar_sets_gravity_actuators_and_frames(tmp_path: Path) -> None:
    urdf = write(tmp_path, chain(JOINT.format("j1", "revolute", "a", "b", ""),
                                 JOINT.format("j2", "prismatic", "b", "c", "")))
    (tmp_path / "robot.yaml").write_text(
        "gravity: [0, -9.81, 0]\nactuators: [{joint: j2, name: motor}]\n"
        "frames: [{name: imu, link: c, xyz: [0.1, 0, 0], rpy: [0, 0, 1.5]}]\n")
    model = load_spatial(urdf)
    np.testing.assert_array_equal(model.gravity, [0.0, -9.81, 0.0])
    assert model.actuator_names == ("motor",) and model.actuated.tolist() == [1]
    np.testing.assert_array_equal(model.actuation(), [[0.0], [1.0]])
    imu = model.frame("imu")
    assert imu.body == 1 and imu.pos.tolist() == [0.1, 0.0, 0.0]


@pytest.mark.parametrize("body, problem", [
    (chain(JOINT.format("j", "ball", "a", "b", "")), "joint 'j': type 'ball': unknown joint type"),
    (chain(JOINT.format("j", "floating", "a", "b", "")), "floating and planar joints are not supported"),
    (chain(JOINT.format("j", "revolute", "a", "b", '<mimic joint="k"/>')), "<mimic> joints are not supported"),
    (chain(JOINT.format("j", "revolute", "a", "b", ""), ixx="-1"), "link 'a' inertial: inertia not positive"),
    (chain(JOINT.format("j", "revolute", "x", "b", "")), "joint 'j': parent link 'x' is not defined"),
    (chain(JOINT.format("j", "revolute", "a", "b", ""), JOINT.format("k", "revolute", "c", "b", "")),
     "link 'b' has two parent joints"),
    (chain(JOINT.format("j", "revolute", "a", "b", ""), JOINT.format("k", "revolute", "b", "a", ""), links="ab"),
     "do not form one tree (a loop)"),
    (chain(JOINT.format("j", "revolute", "a", "b", ""), JOINT.format("k", "revolute", "c", "c", "")),
     "not connected to the root 'a' (a loop)"),
    ('<link name="a"/><joint name="j" type="revolute"><parent link="a"/><child link="a"/><axis xyz="0 0 0"/>'
     '</joint>', "zero axis"),
    (chain(JOINT.format("j", "revolute", "a", "b", '<limit lower="x"/>')), "is not 1 numbers"),
    ('<link name="a"/><link name="b"/>' + JOINT.format("j", "revolute", "a", "b", ""),
     "joint 'j' moves no mass (no <inertial> beyond it)"),
])
def test_bad_file_is_one_line_naming_the_problem(tmp_path: Path, body: str, problem: str) -> None:
    with pytest.raises(MbstateError) as caught:
        load_spatial(write(tmp_path, body))
    message = str(caught.value)
    assert problem in message and "\n" not in message


def test_not_xml_and_bad_sidecar_key(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    path.write_text("<robot><link")
    with pytest.raises(MbstateError, match="invalid XML"):
        load_spatial(path)
    urdf = write(tmp_path, chain(JOINT.format("j1", "revolute", "a", "b", ""), links="ab"))
    (tmp_path / "robot.yaml").write_text("gravity: [0, 0]\n")
    with pytest.raises(MbstateError, match="sidecar.gravity: must be a list of 3"):
        load_spatial(urdf)
    (tmp_path / "robot.yaml").write_text("actuators: [{joint: j9}]\n")
    with pytest.raises(MbstateError, match="'j9' is not a movable joint"):
        load_spatial(urdf)
    (tmp_path / "robot.yaml").write_text("gravty: [0, 0, 1]\n")
    with pytest.raises(MbstateError, match="unknown key gravty"):
        load_spatial(urdf)


@pytest.mark.parametrize("armature, problem", [
    ("{j9: 0.1}", "sidecar.armature.j9: 'j9' is not a movable joint of the URDF"),
    ("{f: 0.1}", "sidecar.armature.f: 'f' is not a movable joint of the URDF"),  # a fixed joint has none
    ("{j1: -0.1}", "sidecar.armature.j1: must be at least 0"),
    ("{j1: heavy}", "sidecar.armature.j1: must be a finite number"),
    ("[0.1, 0.2]", "sidecar.armature: expected a map"),
])
def test_bad_armature_is_one_line_naming_the_key(tmp_path: Path, armature: str, problem: str) -> None:
    urdf = write(tmp_path, chain(JOINT.format("j1", "revolute", "a", "b", ""),
                                 JOINT.format("f", "fixed", "b", "c", "")))
    (tmp_path / "robot.yaml").write_text(f"armature: {armature}\n")
    with pytest.raises(MbstateError) as caught:
        load_spatial(urdf)
    message = str(caught.value)
    assert problem in message and "\n" not in message


def test_centres_of_mass_from_the_inertia() -> None:
    """UR5's upper arm has its centre of mass at z = 0.28 m in its link frame; a merged body's is
    the mass-weighted mean (link7 + hand + fingers of the Panda)."""
    from estimator.spatial.energy import centres_of_mass

    ur5 = load_spatial(URDF / "ur5.urdf")
    np.testing.assert_allclose(centres_of_mass(ur5)[ur5.joint_names.index("shoulder_lift_joint")], [0, 0, 0.28],
                               atol=1e-15)
    panda = load_spatial(URDF / "panda.urdf")
    hand_rot = lie.rotation_rpy(np.array([0, 0, -0.7853981633974483]))
    parts = [(0.735522, np.array([1.0517e-02, -4.252e-03, 6.1597e-02])),
             (0.73, np.array([0, 0, 0.107]) + hand_rot @ np.array([-0.01, 0, 0.03])),
             (0.03, np.array([0, 0, 0.107 + 0.0584]))]
    mean = sum(m * c for m, c in parts) / sum(m for m, _ in parts)
    np.testing.assert_allclose(centres_of_mass(panda)[6], mean, atol=1e-15)
