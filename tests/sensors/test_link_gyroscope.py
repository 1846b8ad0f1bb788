"""3-axis gyroscopes on URDF links (sensors.link_gyroscope): ∂h/∂q, ∂h/∂q̇ against central
differences, h against Pinocchio's LOCAL frame velocity at the same mount, and against the rotation
rate of the sensor frame's pose differenced in time. Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_sensor_cases import ROBOTS, PinocchioPair, assert_jacobians, random_state, robot

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from sensors.config import build_sensors

MOUNTS = {  # (link, xyz, rpy): a fixed-joint link on UR5 and Panda, a branch of the tree
    "ur5": ("tool0", [0.03, -0.02, 0.05], [0.3, -0.7, 1.9]),
    "panda": ("panda_hand", [0.01, 0.04, -0.02], [-1.2, 0.4, 0.5]),
    "test_tree": ("left_hand", [0.1, 0.0, -0.2], [0.0, 0.5, -0.3]),
}


def gyroscope(name: str, model):
    link, xyz, rpy = MOUNTS[name]
    config = {"kind": "gyroscope", "link": link, "xyz": xyz, "rpy": rpy, "rate": 1000, "noise": {"density": 1e-4}}
    return build_sensors({"sensors": {"gyro": config}}, model, f"{name}.yaml").sensors[0]


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("seed", range(3))
def test_jacobians(name: str, seed: int) -> None:
    model = robot(name)
    assert_jacobians(gyroscope(name, model), random_state(model, seed))


@pytest.mark.parametrize("name", ("ur5", "panda"))
def test_against_pinocchio(name: str) -> None:
    """Pinocchio's getFrameVelocity(LOCAL).angular at a frame added at the mount: ≤ 1e-12 · max(1, |ω|)."""
    pin = pytest.importorskip("pinocchio")
    model = robot(name)
    sensor = gyroscope(name, model)
    pair = PinocchioPair(pin, model, name)
    frame = pair.add_frame("gyro", sensor.mount.body, sensor.mount.rot, sensor.mount.pos)
    for seed in range(10):
        state = random_state(model, seed)
        data = pair.solve(state)
        reference = pin.getFrameVelocity(pair.pm, data, frame, pin.LOCAL).angular
        np.testing.assert_allclose(sensor.measure(state), reference, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(reference).max()))


def test_against_the_pose_differenced_in_time() -> None:
    """ω̃ = R_sᵀ Ṙ_s: the sensor frame's rotation along q(t) = q + q̇ t, central difference of step
    1e-5 s (error O(dt²) ~ 1e-9), to 1e-7."""
    model = robot("panda")
    sensor = gyroscope("panda", model)
    state = random_state(model, 4)
    mount = sensor.mount
    zero = np.zeros(model.dof)

    def rotation(t: float) -> np.ndarray:
        body = kin.body_kinematics(model, state.q + t * state.qd, zero, zero)
        return lie.compose((body.rot[mount.body], body.pos[mount.body]), (mount.rot, mount.pos))[0]

    dt = 1e-5
    rate = rotation(0.0).T @ (rotation(dt) - rotation(-dt)) / (2 * dt)
    omega = np.array([rate[2, 1], rate[0, 2], rate[1, 0]])
    np.testing.assert_allclose(sensor.measure(state), omega, rtol=0, atol=1e-7)
