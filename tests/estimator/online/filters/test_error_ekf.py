"""The errorEKF baseline (estimator.online.filters): its maps and Jacobians against finite differences through
the position and velocity problems, its prediction against the forward dynamics, and the filter on a
simulated four-bar against the truth, on the constraint manifold."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import MECHANISMS
from estimator.constraints import constraint_jacobian, constraint_values
from estimator.errors import MbstateError
from estimator.factors.independent_coordinates import choose_independent_coordinates
from estimator.kinematics import solve_position_problem, solve_velocity_problem
from estimator.mechanism_file import load_mechanism
from estimator.node.config import load_node_config
from estimator.node.intake import online_estimator
from estimator.online.config import EstimatorConfig
from estimator.online.filters.error_ekf import Measurement, forward_step, measurement_rows, process_noise
from estimator.online.filters.manifold import change_of_coordinates, corrected, linearize
from estimator.online.filters.online_filter import OnlineFilter
from estimator.section import Section
from replay.clocks import FixedClock
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

FOURBAR = load_mechanism(MECHANISMS / "fourbar_benchmark.yaml")
FIVE_BAR = load_mechanism(MECHANISMS / "five_bar.yaml")
SENSORS = {"sensors": {
    "gyro": {"kind": "gyroscope", "body": "coupler", "rate": 200, "noise": {"sigma": 1e-3}},
    "encoder": {"kind": "encoder", "body": "crank", "rate": 200, "noise": {"sigma": 0.0175}},
    "accelerometer": {"kind": "accelerometer", "body": "rocker", "position": [2.5, 0.1], "rate": 200,
                      "noise": {"sigma": 0.05}}}}


def moving_state(mech, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An assembled q near the file's pose and a consistent, non-zero q̇ (seeded)."""
    rng = np.random.default_rng(seed)
    q = solve_position_problem(mech, mech.q0)
    held = tuple(choose_independent_coordinates(mech, q).coordinates)
    return q, solve_velocity_problem(mech, q, rng.normal(0.0, 1.0, len(held)), held)


def perturbed(mech, state, delta):
    """q, q̇, q̈, z̈ of the state corrected by ``delta`` (the exact maps the derivatives linearize)."""
    q, qd = corrected(mech, state, delta)
    moved = linearize(mech, q, qd, state.ic)
    return q, qd, moved.qdd, moved.zdd


@pytest.mark.parametrize("mech", [FOURBAR, FIVE_BAR], ids=["fourbar", "five_bar"])
def test_maps_match_finite_differences(mech) -> None:
    state = linearize(mech, *moving_state(mech, 3))
    step = 1e-6
    for column in range(2 * state.dof):
        delta = np.zeros(2 * state.dof)
        delta[column] = step
        plus, minus = perturbed(mech, state, delta), perturbed(mech, state, -delta)
        numeric = [(p - m) / (2 * step) for p, m in zip(plus, minus)]
        for analytic, difference in zip((state.d_q, state.d_qd, state.d_qdd, state.d_zdd), numeric):
            np.testing.assert_allclose(analytic[:, column], difference, rtol=1e-5, atol=1e-6)


def test_model_acceleration_solves_the_equations_of_motion() -> None:
    """q̈ of the linearization: on Φq q̈ = γ, and M q̈ − Q is a combination of constraint forces."""
    q, qd = moving_state(FOURBAR, 4)
    state = linearize(FOURBAR, q, qd)
    jacobian = constraint_jacobian(FOURBAR, q)
    np.testing.assert_allclose(jacobian @ state.qd, 0.0, atol=1e-12)
    unbalanced = FOURBAR.arrays.mass @ state.qdd - FOURBAR.arrays.q_force
    residual = unbalanced - jacobian.T @ np.linalg.lstsq(jacobian.T, unbalanced, rcond=None)[0]
    np.testing.assert_allclose(residual, 0.0, atol=1e-9)


def test_measurement_jacobian_matches_finite_differences() -> None:
    sensors = build_sensors(SENSORS, FOURBAR, "test")
    state = linearize(FOURBAR, *moving_state(FOURBAR, 5))
    measurements = [Measurement(s, np.zeros(s.dimension), np.eye(s.dimension)) for s in sensors.sensors]
    _, jacobian, noise = measurement_rows(state, measurements)
    assert noise.shape == (4, 4)
    step = 1e-6
    for column in range(2 * state.dof):
        delta = np.zeros(2 * state.dof)
        delta[column] = step
        values = []
        for sign in (1, -1):
            q, qd = corrected(FOURBAR, state, sign * delta)
            values.append(-measurement_rows(linearize(FOURBAR, q, qd, state.ic), measurements)[0])
        np.testing.assert_allclose(jacobian[:, column], (values[0] - values[1]) / (2 * step), rtol=1e-5, atol=1e-6)


def test_transition_matches_the_forward_dynamics() -> None:
    """F propagates a small error as the forward dynamics does (to O(h³) of the expansion)."""
    mech, dt, step = FOURBAR, 1e-3, 1e-6
    state = linearize(mech, *moving_state(mech, 6))
    transition = state.transition(dt)
    for column in range(2 * state.dof):
        delta = np.zeros(2 * state.dof)
        delta[column] = step
        ends = []
        for sign in (1, -1):
            q, qd = forward_step(mech, *corrected(mech, state, sign * delta), dt)
            ends.append(np.concatenate((q[state.ic.coordinates], qd[state.ic.coordinates])))
        np.testing.assert_allclose((ends[0] - ends[1]) / (2 * step), transition[:, column], atol=1e-5)


def test_change_of_coordinates_maps_an_error_exactly_to_first_order() -> None:
    mech = FIVE_BAR
    state = linearize(mech, *moving_state(mech, 7))
    other = dataclasses.replace(state.ic, coordinates=np.array([6, 7]), picker=np.eye(mech.n)[[6, 7]])
    change = change_of_coordinates(state, other)
    delta = 1e-7 * np.array([1.0, -2.0, 0.5, 3.0])
    q, qd = corrected(mech, state, delta)
    moved = np.concatenate((q[[6, 7]] - state.q[[6, 7]], qd[[6, 7]] - state.qd[[6, 7]]))
    np.testing.assert_allclose(change @ delta, moved, rtol=1e-5, atol=1e-13)


def test_process_noise_is_the_integrated_white_acceleration() -> None:
    """Q_d against the covariance of [∫∫w, ∫w] of white noise sampled finely (independent reference)."""
    rng, dt, density, substeps = np.random.default_rng(1), 0.01, 2.0, 100
    h = dt / substeps
    w = rng.normal(0.0, density / np.sqrt(h), size=(20000, substeps))
    velocity = np.cumsum(w * h, axis=1)
    position = h * (np.sum(velocity, axis=1) - 0.5 * velocity[:, -1])  # trapezoidal, from rest
    samples = np.vstack((position, velocity[:, -1]))
    np.testing.assert_allclose(np.cov(samples), process_noise(density, 1, dt), rtol=0.05)


def simulated(sensors_document: dict, duration: float, seed: int = 1):
    sensors = build_sensors(sensors_document, FOURBAR, "test")
    q0 = solve_position_problem(FOURBAR, FOURBAR.q0)
    truth = forward_truth(FOURBAR, q0, np.zeros(FOURBAR.n), 0.005, duration)
    return sensors, truth, simulate_readings(sensors.sensors, truth, seed)


def run_filter(mech, sensors, readings, kind: str = "error_ekf", **settings):
    config = EstimatorConfig(kind=kind, rate=200, publish_sigmas=True, **settings)
    ekf = OnlineFilter(mech, sensors, config, FixedClock())
    estimates = []
    for reading in readings:
        assert ekf.add(reading) in ("pending", "late")
        estimates += ekf.advance(reading.t)
    return ekf, estimates + ekf.advance(readings[-1].t, final=True)


def test_filter_tracks_the_truth_from_a_wrong_start_on_the_manifold() -> None:
    """Gyroscope on the coupler, exact model, start π/16 off on the crank: the error falls to the
    noise's level, the ±2σ band holds the truth once converged, and every estimate is assembled."""
    sensors, truth, readings = simulated({"sensors": {"gyro": SENSORS["sensors"]["gyro"]}}, 4.0)
    start = FOURBAR.q0.copy()
    start[4] += np.pi / 16
    drawn = dataclasses.replace(FOURBAR, q0=solve_position_problem(FOURBAR, start, [4]))
    ekf, estimates = run_filter(drawn, sensors, readings, position_sigma=0.2, velocity_sigma=0.5,
                                acceleration_noise=1.0)
    assert ekf.started and ekf.counters["steps"] == len(estimates) > 700
    t = np.array([e.t for e in estimates])
    error = np.array([e.q[4] for e in estimates]) - np.interp(t, truth.t, truth.q[:, 4])
    sigma = np.array([e.sigma["q"][4] for e in estimates])
    assert abs(error[0]) > 0.15
    late = t > 2.5
    assert np.sqrt(np.mean(error[late] ** 2)) < 3e-3
    assert np.mean(np.abs(error[late]) < 2 * sigma[late]) > 0.8
    for e in estimates:
        assert np.max(np.abs(constraint_values(FOURBAR, e.q))) < 1e-9
        assert np.max(np.abs(constraint_jacobian(FOURBAR, e.q) @ e.qd)) < 1e-9


def test_filter_interface_late_readings_reset_and_forces() -> None:
    sensors, _, readings = simulated({"sensors": {"encoder": SENSORS["sensors"]["encoder"]}}, 0.3)
    ekf, estimates = run_filter(FOURBAR, sensors, readings)
    assert ekf.add(readings[0]) == "late" and ekf.counters["late"] == 1
    assert [e.step for e in estimates] == list(range(len(estimates)))
    assert estimates[0].flags == ("startup",) and estimates[0].forces == {}
    ekf.reset()
    assert not ekf.started and ekf.counters["resets"] == 1
    with pytest.raises(MbstateError, match="does not estimate forces"):
        OnlineFilter(load_mechanism(MECHANISMS / "fourbar_crank.yaml"),
                     build_sensors({"sensors": {"g": SENSORS["sensors"]["gyro"]}},
                                   load_mechanism(MECHANISMS / "fourbar_crank.yaml"), "test"),
                     EstimatorConfig(kind="error_ekf", unknown_forces=("motor",)))
    for key, value, what in (("gravity_sigma", 0.2, "the gravity error"), ("mass_sigma", 0.1, "the mass errors"),
                             ("length_sigma", 0.01, "the length errors")):
        with pytest.raises(MbstateError, match=f"estimator.{key}: .* does not estimate {what}"):
            OnlineFilter(FOURBAR, build_sensors({"sensors": {"g": SENSORS["sensors"]["gyro"]}}, FOURBAR, "test"),
                         EstimatorConfig(kind="error_ekf", **{key: value}))


def test_kind_is_read_from_the_estimator_section_and_chooses_the_estimator(tmp_path) -> None:
    section = Section("est.yaml", "estimator", {"kind": "error_ekf", "acceleration_noise": 0.5})
    config = EstimatorConfig.from_section(section, FOURBAR)
    assert (config.kind, config.acceleration_noise) == ("error_ekf", 0.5)
    assert EstimatorConfig().kind == "smoother"
    with pytest.raises(MbstateError, match="estimator.kind: must be one of smoother, error_ekf, ukf"):
        EstimatorConfig.from_section(Section("est.yaml", "estimator", {"kind": "dekf"}), FOURBAR)
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text("sensors: {gyro: {kind: gyroscope, body: coupler, rate: 200, noise: {sigma: 0.001}}}\n")
    node = tmp_path / "node.yaml"
    node.write_text(f"mechanism: {MECHANISMS / 'fourbar_benchmark.yaml'}\nsensors: {sensors}\n"
                    "estimator: {kind: error_ekf, rate: 200}\n")
    assert isinstance(online_estimator(load_node_config(node), FixedClock()), OnlineFilter)


def test_sigma_points_reproduce_mean_and_covariance() -> None:
    from estimator.online.filters.ukf import sigma_points

    covariance = np.array([[2.0, 0.3], [0.3, 0.5]])
    points, weights, covariance_weights = sigma_points(covariance)
    assert len(points) == 5 and weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(weights @ points, 0.0, atol=1e-15)
    np.testing.assert_allclose((points.T * weights) @ points, covariance)


def test_ukf_tracks_the_truth_from_a_wrong_start_on_the_manifold() -> None:
    sensors, truth, readings = simulated({"sensors": {"gyro": SENSORS["sensors"]["gyro"],
                                                      "accelerometer": SENSORS["sensors"]["accelerometer"]}}, 3.0)
    start = FOURBAR.q0.copy()
    start[4] += np.pi / 16
    drawn = dataclasses.replace(FOURBAR, q0=solve_position_problem(FOURBAR, start, [4]))
    ukf, estimates = run_filter(drawn, sensors, readings, kind="ukf", position_sigma=0.2, velocity_sigma=0.5)
    t = np.array([e.t for e in estimates])
    error = np.array([e.q[4] for e in estimates]) - np.interp(t, truth.t, truth.q[:, 4])
    assert np.sqrt(np.mean(error[t > 2.0] ** 2)) < 5e-3  # the accelerometer corrects the start at once
    for e in estimates:
        assert np.max(np.abs(constraint_values(FOURBAR, e.q))) < 1e-9
        assert np.max(np.abs(constraint_jacobian(FOURBAR, e.q) @ e.qd)) < 1e-9
