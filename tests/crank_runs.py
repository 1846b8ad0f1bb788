"""An online estimator on a model with errors, fed virtual readings of the true mechanism's free swing:
the crank-angle error of every estimate and its model-error states (tests of ``gravity_sigma`` and
``mass_sigma``)."""

from __future__ import annotations

import numpy as np

from estimator.model import Mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

TRUTH_STEP = 1e-3  # [s]


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
