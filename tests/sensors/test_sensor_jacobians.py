"""Every sensor kind's measurement Jacobians against central differences, and the GTSAM factor's
linearization against the numpy error, at states from the kinematics of the example mechanisms
(positions, velocities, accelerations solved with random driver inputs, then perturbed off the
constraint manifold as optimizer iterates are). Seeded."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest
from conftest import MECHANISMS

from estimator import kinematics
from estimator.mechanism_file import load_mechanism
from sensors.base import State
from sensors.config import build_sensors

# Central differences with step 1e-6 on these smooth O(1) functions: truncation O(h²) and round-off
# O(eps/h) both below 1e-9 relative; 1e-7 (1 + max|J|) leaves a margin while any wrong term (O(1)) fails.
STEP, TOLERANCE = 1e-6, 1e-7

CONFIGS = {
    "fourbar_crank.yaml": {
        "gyro": {"kind": "gyroscope", "body": "coupler", "rate": 1000, "noise": {"density": 1e-3}},
        "gyro_down": {"kind": "gyroscope", "body": 2, "axis": -1, "rate": 100, "bias_state": True,
                      "noise": {"density": 1e-3, "bias_sigma": 0.01, "random_walk": 1e-4}},
        "accel": {"kind": "accelerometer", "body": "coupler", "position": [0.7, 0.2], "angle": 0.4, "rate": 500,
                  "noise": {"density": 1e-2}},
        "accel_biased": {"kind": "accelerometer", "body": "rocker", "position": [1.0, -0.1], "rate": 500,
                         "bias_state": True, "noise": {"density": 1e-2, "bias_sigma": 0.1}},
        "crank_encoder": {"kind": "encoder", "body": "crank", "counts": 4096, "rate": 1000},
        "relative_encoder": {"kind": "encoder", "bodies": ["coupler", "rocker"], "zero": 0.3, "rate": 1000,
                             "noise": {"density": 1e-4}},
        "linear_encoder": {"kind": "encoder", "point": 2, "reference": 1, "direction": [1, 1], "units": "m",
                           "resolution": 1e-5, "rate": 1000},
        "rocker_cell": {"kind": "load_cell", "link": "rocker", "rate": 100, "noise": {"density": 0.1}},
        "motor_cell": {"kind": "load_cell", "actuator": "motor", "units": "N*m", "rate": 100,
                       "noise": {"density": 0.1}},
    },
    "pick_and_place.yaml": {
        "platform_gyro": {"kind": "gyroscope", "body": "platform", "rate": 1000, "noise": {"density": 1e-3}},
        "platform_accel": {"kind": "accelerometer", "body": "platform", "position": [0.75, -0.25], "rate": 500,
                           "noise": {"density": 1e-2}},
        "elbow": {"kind": "encoder", "bodies": ["left_crank", "left_inner_rod"], "counts": 1000, "rate": 1000},
        "rod_cell": {"kind": "load_cell", "constraint": "left_inner_rod: distance 3-5", "rate": 100,
                     "noise": {"density": 0.1}},
    },
}


def sensors_and_state(file: str, seed: int):
    mech = load_mechanism(MECHANISMS / file)
    rng = np.random.default_rng(seed)
    drivers = [a.coordinate for a in mech.actuators]
    q = kinematics.solve_position_problem(mech, mech.q0 + 0.05 * rng.normal(size=mech.n), drivers)
    qd = kinematics.solve_velocity_problem(mech, q, rng.normal(size=len(drivers)), drivers)
    qdd = kinematics.solve_acceleration_problem(mech, q, qd, rng.normal(size=len(drivers)), drivers)
    state = State(t=0.0, q=q + 1e-3 * rng.normal(size=mech.n), qd=qd + 1e-2 * rng.normal(size=mech.n),
                  qdd=qdd + 1e-2 * rng.normal(size=mech.n), lam=rng.normal(size=mech.m),
                  f=rng.normal(size=len(mech.actuators)))
    return build_sensors({"sensors": CONFIGS[file]}, mech, file).sensors, state, rng


CASES = [(file, name) for file, sensors in CONFIGS.items() for name in sensors]


def blocks_of(sensor, state, rng) -> list[np.ndarray]:
    blocks = [state.block(v) for v in sensor.variables]
    return blocks + [0.01 * rng.normal(size=sensor.dimension)] if sensor.params.bias_state else blocks


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("file,name", CASES)
def test_error_jacobians_match_central_differences(file: str, name: str, seed: int) -> None:
    sensors, state, rng = sensors_and_state(file, seed)
    sensor = next(s for s in sensors if s.params.name == name)
    blocks = blocks_of(sensor, state, rng)
    z = sensor.measure(state) + 0.01 * rng.normal(size=sensor.dimension)
    fn = sensor.error_function(z)
    error, jacobians = fn(*blocks)
    np.testing.assert_allclose(fn(*blocks, jac=False)[0], error, rtol=0, atol=1e-12)
    assert len(jacobians) == len(blocks)
    for i, (block, analytic) in enumerate(zip(blocks, jacobians)):
        numeric = np.zeros((error.shape[0], block.shape[0]))
        for j in range(block.shape[0]):
            plus, minus = [b.copy() for b in blocks], [b.copy() for b in blocks]
            plus[i][j] += STEP
            minus[i][j] -= STEP
            numeric[:, j] = (fn(*plus, jac=False)[0] - fn(*minus, jac=False)[0]) / (2.0 * STEP)
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * (1.0 + np.abs(numeric).max()),
                                   err_msg=f"{name}: d e / d block {i}")


@pytest.mark.parametrize("file,name", CASES)
def test_gtsam_factor_linearizes_the_error_function(file: str, name: str) -> None:
    sensors, state, rng = sensors_and_state(file, 2)
    sensor = next(s for s in sensors if s.params.name == name)
    blocks = blocks_of(sensor, state, rng)
    z = sensor.measure(state) + 0.01 * rng.normal(size=sensor.dimension)
    (factor,) = sensor.factors(z, step=7)
    values = gtsam.Values()
    for key, block in zip(sensor.keys_at(7), blocks):
        values.insert(key, block)
    error, jacobians = sensor.error_function(z)(*blocks)
    sigma = sensor.params.noise.sample_sigma(sensor.params.rate)
    whitened, rhs = factor.linearize(values).jacobian()
    # Isotropic noise: GTSAM divides by σ and stores b = −e/σ; plain floating-point copies.
    np.testing.assert_allclose(whitened * sigma, np.hstack(jacobians), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rhs * sigma, -error, rtol=1e-12, atol=1e-12)
