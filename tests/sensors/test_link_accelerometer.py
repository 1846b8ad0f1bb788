"""3-axis accelerometers on URDF links (sensors.link_accelerometer): ∂h/∂q, ∂h/∂q̇, ∂h/∂q̈ against
central differences; h, the specific force R_sᵀ (r̈ − g) at the mount, against Pinocchio's LOCAL
classical acceleration, against the mount point's position differenced twice in time, and at rest.
Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_sensor_cases import ROBOTS, PinocchioPair, assert_jacobians, random_state, robot

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from sensors.base import State
from sensors.config import build_sensors

MOUNTS = {  # (link, xyz, rpy): off the link origin and turned, so that every term of h counts
    "ur5": ("wrist_3_link", [0.05, -0.02, 0.08], [0.3, -0.7, 1.9]),
    "panda": ("panda_hand_tcp", [0.02, 0.01, -0.03], [-1.2, 0.4, 0.5]),
    "test_tree": ("left_tool", [0.1, 0.05, -0.2], [0.0, 0.5, -0.3]),
}


def accelerometer(name: str, model, mount: tuple | None = None):
    link, xyz, rpy = mount or MOUNTS[name]
    config = {"kind": "accelerometer", "link": link, "xyz": xyz, "rpy": rpy, "rate": 500, "noise": {"density": 1e-3}}
    return build_sensors({"sensors": {"accel": config}}, model, f"{name}.yaml").sensors[0]


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("seed", range(3))
def test_jacobians(name: str, seed: int) -> None:
    model = robot(name)
    assert_jacobians(accelerometer(name, model), random_state(model, seed))


@pytest.mark.parametrize("name", ("ur5", "panda"))
def test_against_pinocchio(name: str) -> None:
    """getFrameClassicalAcceleration(LOCAL).linear − R_sᵀ g at a frame added at the mount:
    ≤ 1e-12 · max(1, |h|)."""
    pin = pytest.importorskip("pinocchio")
    model = robot(name)
    sensor = accelerometer(name, model)
    pair = PinocchioPair(pin, model, name)
    frame = pair.add_frame("accel", sensor.mount.body, sensor.mount.rot, sensor.mount.pos)
    for seed in range(10):
        state = random_state(model, seed)
        data = pair.solve(state)
        reference = (pin.getFrameClassicalAcceleration(pair.pm, data, frame, pin.LOCAL).linear
                     - data.oMf[frame].rotation.T @ model.gravity)
        np.testing.assert_allclose(sensor.measure(state), reference, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(reference).max()))


def test_against_the_position_differenced_in_time() -> None:
    """r̈_p by the second central difference of the mount point along q(t) = q + q̇ t + q̈ t²/2, step
    1e-3 s (error dt²/12 |r''''| ~ 1e-6), to 1e-4: the specific force, not the twist acceleration."""
    model = robot("ur5")
    sensor = accelerometer("ur5", model)
    state = random_state(model, 5)
    mount, zero = sensor.mount, np.zeros(model.dof)

    def pose(t: float) -> tuple[np.ndarray, np.ndarray]:
        body = kin.body_kinematics(model, state.q + t * state.qd + 0.5 * t * t * state.qdd, zero, zero)
        return lie.compose((body.rot[mount.body], body.pos[mount.body]), (mount.rot, mount.pos))

    dt = 1e-3
    accel = (pose(dt)[1] - 2.0 * pose(0.0)[1] + pose(-dt)[1]) / dt**2
    np.testing.assert_allclose(sensor.measure(state), pose(0.0)[0].T @ (accel - model.gravity), rtol=0, atol=1e-4)


def test_at_rest_it_reads_gravity_up() -> None:
    """At rest the specific force points up, |g| = 9.81 m/s² (UR5's gravity is −z): R_s h = (0, 0,
    9.81) wherever the mount is; a sensor turned by roll π reads it with y and z reversed."""
    model = robot("ur5")
    zero = np.zeros(model.dof)
    still = State(t=0.0, q=np.array([0.3, -1.0, 0.7, 0.2, -0.4, 1.1]), qd=zero, qdd=zero, lam=np.zeros(0),
                  f=np.zeros(0))
    body = kin.body_kinematics(model, still.q, zero, zero)
    mount = ("forearm_link", [0.1, 0.2, 0.0], (0.0, 0.0, 0.0))
    up = accelerometer("ur5", model, mount)
    rot = lie.compose((body.rot[up.mount.body], body.pos[up.mount.body]), (up.mount.rot, up.mount.pos))[0]
    np.testing.assert_allclose(rot @ up.measure(still), [0.0, 0.0, 9.81], atol=1e-12)
    flipped = accelerometer("ur5", model, (mount[0], mount[1], (np.pi, 0.0, 0.0)))
    np.testing.assert_allclose(flipped.measure(still), up.measure(still) * [1.0, -1.0, -1.0], atol=1e-12)
