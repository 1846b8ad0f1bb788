"""6-axis force-torque sensors of a URDF (sensors.force_torque): ∂h/∂q, ∂h/∂q̇, ∂h/∂q̈ against
central differences on every joint; h against Pinocchio's joint wrenches (data.f) carried to the
sensor frame, against the statics of the distal subtree held at rest (its weight, summed from the
model's inertias), and its moment about a revolute axis against the joint torque sensor. Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_sensor_cases import ROBOTS, PinocchioPair, assert_jacobians, random_state, robot

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from estimator.spatial.model import REVOLUTE
from sensors.base import State
from sensors.config import build_sensors

XYZ, RPY = [0.02, -0.03, 0.05], [0.4, -0.3, 1.2]


def force_torque_sensors(model, xyz=XYZ, rpy=RPY):
    config = {f"ft_{joint}": {"kind": "force_torque", "joint": joint, "xyz": xyz, "rpy": rpy, "rate": 1000,
                              "noise": {"density": 1e-2}} for joint in model.joint_names}
    return build_sensors({"sensors": config}, model, "ft.yaml").sensors


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("seed", range(3))
def test_jacobians(name: str, seed: int) -> None:
    model = robot(name)
    state = random_state(model, seed)
    for sensor in force_torque_sensors(model):
        assert_jacobians(sensor, state)


@pytest.mark.parametrize("name", ("ur5", "panda"))
def test_against_pinocchio_joint_wrenches(name: str) -> None:
    """Pinocchio's data.f[joint] (the wrench through the joint onto its body, in its frame, linear
    first) carried to the sensor frame by SE3.actInv: ≤ 1e-12 · max(1, |h|)."""
    pin = pytest.importorskip("pinocchio")
    model = robot(name)
    pair = PinocchioPair(pin, model, name)
    mount = pin.SE3(lie.rotation_rpy(np.array(RPY)), np.array(XYZ))
    sensors = force_torque_sensors(model)
    for seed in range(5):
        state = random_state(model, seed)
        data = pair.solve(state)
        for joint, sensor in enumerate(sensors):
            reference = mount.actInv(data.f[pair.jid[joint]]).vector
            np.testing.assert_allclose(sensor.measure(state), reference, rtol=0,
                                       atol=1e-12 * max(1.0, np.abs(reference).max()))


@pytest.mark.parametrize("name", ("panda", "test_tree"))
def test_at_rest_it_carries_the_weight_beyond_it(name: str) -> None:
    """Held still, the distal side is in equilibrium under the sensor's wrench and gravity:
    f = −m R_sᵀ g and t = −R_sᵀ Σ (c_l − o) × m_l g over the bodies l beyond the joint (COM c_l from
    the model's inertias Mᵇ = [[Θ, m d̃], [−m d̃, m I]]), to 1e-10 N, N·m."""
    model = robot(name)
    zero = np.zeros(model.dof)
    still = State(t=0.0, q=random_state(model, 7).q, qd=zero, qdd=zero, lam=np.zeros(0), f=np.zeros(0))
    body = kin.body_kinematics(model, still.q, zero, zero)
    moves = kin.ancestry(model)
    sensors = force_torque_sensors(model)
    for joint, sensor in enumerate(sensors):
        rot, origin = lie.compose((body.rot[joint], body.pos[joint]), (lie.rotation_rpy(np.array(RPY)), np.array(XYZ)))
        force, moment = np.zeros(3), np.zeros(3)
        for link in np.flatnonzero(moves[:, joint]):
            inertia, mass = model.inertia[link], model.mass[link]
            com = body.rot[link] @ np.array([-inertia[1, 5], inertia[0, 5], -inertia[0, 4]]) / mass + body.pos[link]
            force -= mass * model.gravity
            moment -= np.cross(com - origin, mass * model.gravity)
        np.testing.assert_allclose(sensor.measure(still), np.concatenate((rot.T @ force, rot.T @ moment)), rtol=0,
                                   atol=1e-10)


def test_moment_about_a_revolute_axis_is_the_joint_torque() -> None:
    """With the sensor frame at the joint's child link frame, the moment about the axis is what the
    joint torque sensor reads."""
    model = robot("panda")
    state = random_state(model, 3)
    torques = build_sensors({"sensors": {j: {"kind": "joint_torque", "joint": j, "rate": 1000,
                                             "noise": {"density": 1e-2}} for j in model.joint_names}},
                            model, "tau.yaml").sensors
    for joint, sensor in enumerate(force_torque_sensors(model, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])):
        assert model.kind[joint] == REVOLUTE
        moment = sensor.measure(state)[3:]
        assert moment @ model.axis[joint] == pytest.approx(torques[joint].measure(state)[0], abs=1e-12)
