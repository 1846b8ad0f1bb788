"""The null-jerk Kalman filter (estimator.online.filters.null_jerk, ``estimator.kind: null_jerk``): its
discretized noise against the integral of the white jerk, its refusal of constrained models (and the
planar filters' refusal of a URDF), and the arms' baseline beside the smoother on the same readings
(the smoother knows the dynamics, the filter does not)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
from conftest import MECHANISMS, REPO

from estimator.benchmarks.accuracy import load_matrix, truth_of
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.model_protocol import load_model
from estimator.online.config import EstimatorConfig
from estimator.online.filters.null_jerk import NullJerkKF, jerk_noise, transition
from replay.clocks import FixedClock
from replay.replay import replay_readings
from sensors.config import load_sensors
from sensors.virtual import simulate_readings


def test_the_noise_is_the_integrated_white_jerk() -> None:
    """Q = j² ∫₀ʰ e^{As} b bᵀ e^{Aᵀs} ds, A the triple integrator, b = (0, 0, 1), by adaptive quadrature;
    F = e^{Ah}."""
    h, density = 2e-3, 3.0
    a = np.diag([1.0, 1.0], k=1)
    b = np.array([0.0, 0.0, 1.0])

    def integrand(s: float) -> np.ndarray:
        column = scipy.linalg.expm(a * s) @ b
        return np.outer(column, column).ravel()

    integral = scipy.integrate.quad_vec(integrand, 0.0, h, epsabs=1e-22, epsrel=1e-12)[0].reshape(3, 3)
    np.testing.assert_allclose(jerk_noise(density, h), density ** 2 * integral, rtol=1e-10, atol=1e-24)
    np.testing.assert_allclose(transition(h), scipy.linalg.expm(a * h), rtol=1e-14)


def test_a_model_with_constraints_is_refused_in_one_line() -> None:
    with pytest.raises(MbstateError, match="null_jerk needs free coordinates .* 2 constraint rows"):
        NullJerkKF(load_mechanism(MECHANISMS / "pendulum.yaml"), 1.0)


def rmse_after(estimates: list, truth, key: str, start: float) -> float:
    t = np.array([e.t for e in estimates])
    value = np.array([getattr(e, key) for e in estimates])
    reference = np.array([np.interp(t, truth.t, column) for column in getattr(truth, key).T]).T
    kept = t >= start
    return float(np.sqrt(np.mean((value[kept] - reference[kept]) ** 2)))


def test_the_smoother_beats_the_null_jerk_filter_on_a_falling_arm() -> None:
    """UR5 released at rest from the matrix's working pose, its 2^14-count encoders at 1 kHz, 1.2 s (the
    first 0.5 s left out): both track the angles; the filter, knowing no dynamics, follows the fall's
    accelerations only through the encoders, so the smoother's q̇ and q̈ are far closer (measured: 15× and
    250× on 1.5 s)."""
    matrix = load_matrix()
    scenario = matrix.scenarios["ur5"]
    model = load_model(scenario.mechanism)
    path = matrix.sensor_file("ur5", "enc")
    sensors = load_sensors(path, model)
    truth = truth_of(scenario, "free", model, sensors, 1.2)
    readings = [r.to_map() for r in simulate_readings(sensors.sensors, truth, 1)]
    results = {}
    for kind in ("smoother", "null_jerk"):
        config = dataclasses.replace(matrix.base, mech=model, sensors=sensors, mechanism_path=scenario.mechanism,
                                     sensors_path=path, estimator=EstimatorConfig(rate=1000.0, kind=kind))
        run = replay_readings(config, readings, FixedClock())
        assert run.error is None and len(run.estimates) > 1000
        results[kind] = [rmse_after(run.estimates, truth, key, 0.5) for key in ("q", "qd", "qdd")]
    smoother, baseline = results["smoother"], results["null_jerk"]
    quantum = 2 * np.pi / 16384
    assert smoother[0] < quantum / 5 and baseline[0] < 2 * quantum
    assert baseline[1] > 5 * smoother[1] and baseline[2] > 20 * smoother[2]


def test_the_planar_filters_refuse_a_urdf_in_one_line() -> None:
    from estimator.node.config import load_node_config
    from estimator.node.intake import online_estimator

    config = load_node_config(REPO / "configs" / "estimator" / "ur5.yaml")
    for kind in ("error_ekf", "ukf"):
        with pytest.raises(MbstateError, match="errorEKF and the UKF take planar mechanism files"):
            online_estimator(dataclasses.replace(config, estimator=dataclasses.replace(config.estimator, kind=kind)),
                             lambda: 0.0)


def test_the_kind_runs_in_the_node_configuration() -> None:
    """``kind: null_jerk`` in a URDF arm's node file builds the filter (estimator.node.intake.online_estimator)."""
    from estimator.node.config import load_node_config
    from estimator.node.intake import online_estimator

    config = load_node_config(REPO / "configs" / "estimator" / "ur5.yaml")
    config = dataclasses.replace(config, estimator=dataclasses.replace(config.estimator, kind="null_jerk"))
    estimator = online_estimator(config, lambda: 0.0)
    assert isinstance(estimator._filter, NullJerkKF) and not estimator.started
