"""Every sensor kind's measurement Jacobians against central differences, and the estimator's rows of
a reading (estimator.factors.observation_stack: h and ∂h/∂block placed on the stacked state with the
sensor's bias, whitened, carried to the reading's stamp) against the measurement and against central
differences, at states from the kinematics of the example mechanisms (positions, velocities,
accelerations solved with random driver inputs, then perturbed off the constraint manifold as
optimizer iterates are). Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, central_difference

from estimator import kinematics
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.observation_stack import Observation, observation_rows, sensor_term
from estimator.mechanism_file import load_mechanism
from sensors.base import Sensor, State
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
    return mech, build_sensors({"sensors": CONFIGS[file]}, mech, file).sensors, state, rng


CASES = [(file, name) for file, sensors in CONFIGS.items() for name in sensors]


def assert_close(analytic: np.ndarray, numeric: np.ndarray, what: str) -> None:
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * (1.0 + np.abs(numeric).max()), err_msg=what)


def stacked(mech, sensors, state, rng):
    """The estimator's layout with every block (λ on all rows, every actuator's force, the gravity error,
    every bias) and x = [q; q̇; q̈; f; g; b; λ] of ``state`` (g = 0: its own gravity) with random biases."""
    layout = EstimationLayout(mech.n, tuple(range(mech.m)), tuple(range(len(mech.actuators))),
                              tuple(s.dimension if s.params.bias_state else 0 for s in sensors), gravity=True)
    x = np.concatenate((state.q, state.qd, state.qdd, state.f, np.zeros(1), 0.01 * rng.normal(size=sum(layout.bias)),
                        state.lam))
    return layout, x


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("file,name", CASES)
def test_measurement_jacobians_match_central_differences(file: str, name: str, seed: int) -> None:
    _, sensors, state, _ = sensors_and_state(file, seed)
    sensor = next(s for s in sensors if s.params.name == name)
    assert isinstance(sensor, Sensor)
    blocks = [state.block(v) for v in sensor.variables]
    h, jacobians = sensor.measurement(*blocks)
    np.testing.assert_array_equal(sensor.measurement(*blocks, jac=False)[0], h)
    assert h.shape == (sensor.dimension,) and len(jacobians) == len(blocks)
    for i, analytic in enumerate(jacobians):
        def h_of(block, i=i):
            return sensor.measurement(*blocks[:i], block, *blocks[i + 1:], jac=False)[0]

        assert_close(analytic, central_difference(h_of, blocks[i], STEP), f"{name}: d h / d {sensor.variables[i]}")


@pytest.mark.parametrize("file,name", CASES)
def test_observation_rows_are_the_whitened_measurement_on_the_stacked_state(file: str, name: str) -> None:
    """At the step's own instant (δ = 0) a reading's rows are W (h(blocks) + b − z) and W [∂h/∂block
    on the block's columns, I on the bias's], W = I/σ of the datasheet (the configs have no loss)."""
    mech, sensors, state, rng = sensors_and_state(file, 2)
    index = next(i for i, s in enumerate(sensors) if s.params.name == name)
    sensor = sensors[index]
    layout, x = stacked(mech, sensors, state, rng)
    term = sensor_term(sensor, index, layout, mech.m, len(mech.actuators))
    z = sensor.measure(state) + 0.01 * rng.normal(size=sensor.dimension)
    error, jacobian = observation_rows(Observation(term, z, term.whitening(None), 0.0), x)
    h, blocks = sensor.measurement(*[state.block(v) for v in sensor.variables])
    expected = np.zeros((sensor.dimension, layout.size))
    columns = {"q": slice(0, mech.n), "v": slice(mech.n, 2 * mech.n), "a": slice(2 * mech.n, 3 * mech.n),
               "l": layout.lam, "f": layout.force, "g": layout.gravity_error}
    for variable, block in zip(sensor.variables, blocks):
        expected[:, columns[variable]] = block
    if sensor.params.bias_state:
        h = h + x[layout.bias_of(index)]
        expected[:, layout.bias_of(index)] = np.eye(sensor.dimension)
    sigma = sensor.params.noise.sample_sigma(sensor.params.rate)
    np.testing.assert_allclose(error * sigma, sensor.residual(h, z), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jacobian * sigma, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("delta", [0.0, -4e-4])
@pytest.mark.parametrize("file,name", CASES)
def test_observation_rows_jacobian_matches_central_differences(file: str, name: str, delta: float) -> None:
    """The rows of a reading stamped δ off its step (the Taylor shift), with the bias, on every block."""
    mech, sensors, state, rng = sensors_and_state(file, 3)
    index = next(i for i, s in enumerate(sensors) if s.params.name == name)
    layout, x = stacked(mech, sensors, state, rng)
    term = sensor_term(sensors[index], index, layout, mech.m, len(mech.actuators))
    z = sensors[index].measure(state) + 0.01 * rng.normal(size=sensors[index].dimension)
    observation = Observation(term, z, term.whitening(None), delta)
    error, jacobian = observation_rows(observation, x)
    np.testing.assert_array_equal(observation_rows(observation, x, jac=False)[0], error)
    assert_close(jacobian, central_difference(lambda y: observation_rows(observation, y, False)[0], x, STEP),
                 f"{name}: d e / d x")
