"""Joint torque and force-torque sensors reading the estimator's external wrenches (``with_wrenches``, block
``w``): ∂h/∂q, ∂h/∂q̇, ∂h/∂q̈ and ∂h/∂w against central differences on every joint of the Panda and of the
RSSR (closed chain: its spanning tree's joints), with frames beyond some joints and not others; h against
Pinocchio's RNEA with the frames' forces as external forces (joint torques: its τ; force-torque: its
joint wrenches data.f carried to the mount). Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_sensor_cases import PinocchioPair, assert_jacobians, random_state, robot

from estimator.spatial import lie
from estimator.spatial.frame_wrenches import FrameWrenches
from sensors.config import build_sensors

FRAMES = {"panda": ("panda_hand_tcp", "panda_link3"), "rssr": ("coupler_end", "crank")}
XYZ, RPY = [0.02, -0.03, 0.05], [0.4, -0.3, 1.2]


def sensors(model, frames: FrameWrenches) -> list:
    """A joint torque and a force-torque sensor on every joint, reading the wrenches on ``frames``."""
    config = {}
    for joint, kind in zip(model.joint_names, model.kind):
        config[f"tau_{joint}"] = {"kind": "joint_torque", "joint": joint, "rate": 1000, "noise": {"density": 1e-2},
                                  "units": "N" if kind else "N*m"}
        config[f"ft_{joint}"] = {"kind": "force_torque", "joint": joint, "xyz": XYZ, "rpy": RPY, "rate": 1000,
                                 "noise": {"density": 1e-2}}
    return [s.with_wrenches(frames) for s in build_sensors({"sensors": config}, model, "wrench.yaml").sensors]


@pytest.mark.parametrize("name", tuple(FRAMES))
@pytest.mark.parametrize("seed", range(2))
def test_jacobians_with_the_wrench_block(name: str, seed: int) -> None:
    model = robot(name)
    frames = FrameWrenches.of(model, FRAMES[name])
    state = random_state(model, seed)
    w = np.random.default_rng(seed).uniform(-20.0, 20.0, frames.size)
    for sensor in sensors(model, frames):
        assert sensor.variables == ("q", "v", "a", "w")
        assert_jacobians(sensor, state, [state.q, state.qd, state.qdd, w])


def test_against_pinocchio_with_external_forces() -> None:
    """τ and data.f of Pinocchio's rnea with the frames' wrenches as fext (carried to their joints by the
    frames' placements) against the sensors' readings with w, friction off, ≤ 1e-12 · max(1, |h|)."""
    pin = pytest.importorskip("pinocchio")
    model = robot("panda")
    frames = FrameWrenches.of(model, FRAMES["panda"])
    pair = PinocchioPair(pin, model, "panda")
    mount = pin.SE3(lie.rotation_rpy(np.array(RPY)), np.array(XYZ))
    readers = sensors(model, frames)
    for seed in range(3):
        state = random_state(model, seed)
        w = np.random.default_rng(seed).uniform(-20.0, 20.0, frames.size)
        fext = [pin.Force.Zero() for _ in range(pair.pm.njoints)]
        for k, name in enumerate(frames.names):
            frame = pair.pm.frames[pair.pm.getFrameId(name)]
            fext[frame.parentJoint] += frame.placement.act(pin.Force(w[6 * k + 3:6 * k + 6], w[6 * k:6 * k + 3]))
        data = pair.pm.createData()
        tau = pin.rnea(pair.pm, data, state.q, state.qd, state.qdd, fext)
        for joint in range(model.dof):
            torque, wrench = readers[2 * joint], readers[2 * joint + 1]
            reference = tau[joint] - model.armature[joint] * state.qdd[joint]
            assert abs(torque.measurement(state.q, state.qd, state.qdd, w, jac=False)[0][0] - reference) \
                <= 1e-12 * max(1.0, abs(reference))
            reference = mount.actInv(data.f[pair.jid[joint]]).vector
            np.testing.assert_allclose(wrench.measurement(state.q, state.qd, state.qdd, w, jac=False)[0], reference,
                                       rtol=0, atol=1e-12 * max(1.0, np.abs(reference).max()))
