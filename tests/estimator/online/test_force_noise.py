"""Process noise on the dynamics of named coordinates (``force_noise``).

The literature's five-bar (configs/lab/five_bar_benchmark.yaml, scenario ``friction_error``) swings
freely with a viscous friction of 0.5 N·m·s/rad at the left crank's pivot that the estimator's model
lacks (and gravity −8.81 against −9.81, the gravity error a state). A white generalized force on the
left crank lets its equation of motion off the model where the model is wrong, and the mass matrix
carries it to the right crank: read by gyroscopes on both cranks, both cranks follow the truth tens of
times closer than with the same density of white acceleration on every independent coordinate.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import MECHANISMS, REPO
from crank_runs import states_config

from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.node.intake import online_estimator
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.step_model import dynamics_sigmas
from estimator.yaml_file import read_yaml
from replay.clocks import FixedClock
from replay.lab.suite import load_suite
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

SCENARIO = load_suite(REPO / "configs" / "lab" / "five_bar_benchmark.yaml").scenarios["friction_error"]
TRUTH_STEP = 1e-3  # [s]


def crank_errors(config: EstimatorConfig, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Times and the errors of both cranks' angles (columns left, right) of every estimate, read by the
    scenario's crank gyroscopes (noise seed 1)."""
    truth_mech, model = SCENARIO.truth_mechanism(), SCENARIO.model_mechanism()
    truth = forward_truth(truth_mech, truth_mech.q0, np.zeros(truth_mech.n), TRUTH_STEP, t_end)
    sensors = read_yaml(SCENARIO.sensor_sets["crank_gyros"])
    estimator = OnlineEstimator(model, build_sensors(sensors, model, "test"), config, FixedClock())
    cranks = [truth_mech.coordinate_names.index(name) for name in ("left", "right")]
    times, errors = [], []
    for reading in simulate_readings(build_sensors(sensors, truth_mech, "test").sensors, truth, 1):
        estimator.add(reading)
        for estimate in estimator.advance(reading.t):
            times.append(estimate.t)
            errors.append(estimate.q[cranks] - truth.q[int(round(estimate.t / TRUTH_STEP)), cranks])
    assert estimator.counters["reinitializations"] == 0
    return np.array(times), np.array(errors)


def test_force_noise_on_the_crank_the_model_gets_wrong_keeps_both_cranks() -> None:
    base = states_config(rate=200.0, lag=50, gravity_sigma=0.2, gravity_random_walk=1e-4, startup_span=0.0,
                           initial_velocity=(("left", 0.0), ("right", 0.0)), velocity_sigma=0.02, position_sigma=0.2)
    t, everywhere = crank_errors(dataclasses.replace(base, acceleration_noise=0.3), 4.0)
    t_f, on_left = crank_errors(dataclasses.replace(base, acceleration_noise=0.001, force_noise=(("left", 0.3),)), 4.0)
    rmse, rmse_f = (np.sqrt(np.mean(e[times >= 2.0] ** 2, axis=0)) for e, times in ((everywhere, t), (on_left, t_f)))
    assert np.all(rmse_f < 1e-3) and np.all(rmse > 10 * rmse_f)


def test_the_named_coordinates_equations_of_motion_get_the_density() -> None:
    """σ_i = hypot(dynamics_sigma, S_i √rate) on the coordinate named, or on the actuator's coordinate."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    config = EstimatorConfig(rate=400.0, dynamics_sigma=1e-3, force_noise=(("motor", 0.5), ("x1", 2.0)))
    expected = np.full(mech.n, 1e-3)
    expected[mech.coordinate_names.index("theta0")] = np.hypot(1e-3, 0.5 * 20.0)
    expected[0] = np.hypot(1e-3, 2.0 * 20.0)
    np.testing.assert_allclose(dynamics_sigmas(mech, config), expected)


@pytest.mark.parametrize("config, message", [
    (EstimatorConfig(force_noise=(("elbow", 0.3),)), "estimator.force_noise: unknown coordinate or actuator 'elbow'"),
    (EstimatorConfig(kind="error_ekf", force_noise=(("left", 0.3),)),
     "estimator.force_noise: the error_ekf filter's process noise is acceleration_noise alone"),
])
def test_force_noise_the_estimator_cannot_use_is_an_error_naming_the_key(config: EstimatorConfig,
                                                                          message: str) -> None:
    mech = SCENARIO.model_mechanism()
    sensors = build_sensors(read_yaml(SCENARIO.sensor_sets["crank_gyros"]), mech, "test")
    node = SimpleNamespace(mech=mech, sensors=sensors, estimator=config)
    with pytest.raises(MbstateError, match=message):
        online_estimator(node, FixedClock())  # the smoother or the filter, by kind
