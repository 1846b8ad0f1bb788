"""Joint torque sensors of a URDF (sensors.joint_torque): ∂h/∂q, ∂h/∂q̇, ∂h/∂q̈ against central
differences on every joint, and h against inverse dynamics (the RNEA's joint force without the
joint's friction and armature, which the drive supplies before the sensor). Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from spatial_sensor_cases import ROBOTS, assert_jacobians, random_state, robot

from estimator.spatial.dynamics import inverse_dynamics
from sensors.config import build_sensors


def torque_sensors(model):
    config = {f"tau_{joint}": {"kind": "joint_torque", "joint": joint, "rate": 1000, "noise": {"density": 1e-2},
                               "units": "N" if kind else "N*m"}
              for joint, kind in zip(model.joint_names, model.kind)}
    return build_sensors({"sensors": config}, model, "torque.yaml").sensors


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("seed", range(3))
def test_jacobians(name: str, seed: int) -> None:
    model = robot(name)
    state = random_state(model, seed)
    for sensor in torque_sensors(model):
        assert_jacobians(sensor, state)


@pytest.mark.parametrize("name", ROBOTS + ("puma560",))  # the PUMA's sidecar has armature
def test_against_inverse_dynamics(name: str) -> None:
    """h = Qⱼ(q, q̇, q̈) − Iₐⱼ q̈ⱼ with friction off, ≤ 1e-12 · max(1, |Q|)."""
    model = robot(name)
    sensors = torque_sensors(model)
    for seed in range(5):
        state = random_state(model, seed)
        reference = inverse_dynamics(model, state.q, state.qd, state.qdd, friction=False) - model.armature * state.qdd
        readings = np.array([sensor.measure(state)[0] for sensor in sensors])
        np.testing.assert_allclose(readings, reference, rtol=0, atol=1e-12 * max(1.0, np.abs(reference).max()))
