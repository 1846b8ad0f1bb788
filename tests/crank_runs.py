"""An online estimator on a model with errors, fed virtual readings of the true mechanism's free swing:
the crank-angle error of every estimate and its model-error states (tests of ``gravity_sigma``,
``mass_sigma`` and ``length_sigma``)."""

from __future__ import annotations

import numpy as np

from estimator.model import Mechanism
from estimator.online.config import MODEL_STATES, EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock
from replay.lab.suite import Scenario
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

TRUTH_STEP = 1e-3  # [s]
RATE = 200.0  # the literature four-bar's readings [Hz] (configs/lab/fourbar_benchmark.yaml)
CRANK_GYRO = {"sensors": {"gyro": {"kind": "gyroscope", "body": "crank", "rate": RATE, "noise": {"sigma": 9.839e-4}}}}


def states_config(**keys) -> EstimatorConfig:
    """An estimator configuration with the model-error states ``keys`` give and no other (null, not auto)."""
    return EstimatorConfig(**(dict.fromkeys(MODEL_STATES) | keys))


def crank_errors(truth_mech: Mechanism, model: Mechanism, sensors: dict, config: EstimatorConfig, t_end: float,
                 seed: int) -> tuple[np.ndarray, np.ndarray, list[dict[str, float]]]:
    """Times and crank-angle errors of the estimates, and each estimate's model-error states, for the
    truth released at rest from its file's pose and read by ``sensors`` (a sensor file's map) with noise
    ``seed``; no solver recovery on the way."""
    truth = forward_truth(truth_mech, truth_mech.q0, np.zeros(truth_mech.n), TRUTH_STEP, t_end)
    estimator = OnlineEstimator(model, build_sensors(sensors, model, "test"), config, FixedClock())
    crank = truth_mech.coordinate_names.index("crank")
    times, errors, states = [], [], []
    for reading in simulate_readings(build_sensors(sensors, truth_mech, "test").sensors, truth, seed):
        estimator.add(reading)
        for estimate in estimator.advance(reading.t):
            times.append(estimate.t)
            errors.append(estimate.q[crank] - truth.q[int(round(estimate.t / TRUTH_STEP)), crank])
            states.append(estimate.model)
    assert estimator.counters["solver_recoveries"] == 0
    return np.array(times), np.array(errors), states


def crank_gyro_run(scenario: Scenario, config: EstimatorConfig,
                   t_end: float) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """Times and crank-angle errors of the estimates of a lab ``scenario`` (its truth and its model with
    errors) read by the benchmark's crank gyroscope (noise seed 5), and the last estimate's model-error
    states."""
    times, errors, states = crank_errors(scenario.truth_mechanism(), scenario.model_mechanism(), CRANK_GYRO, config,
                                         t_end, 5)
    return times, errors, states[-1]
