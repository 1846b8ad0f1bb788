"""A reading's rows in the estimator beyond their Jacobians (estimator.factors.observation_stack): the
whitening of the datasheet σ and of a reading's cov, the robust losses (the one weight function,
sensors.base.robust_weight, against its loss ρ; outliers down-weighted), the bias columns and their
random walk in the process rows, and the wrapped encoder residual."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS

from estimator.factors.estimation_state import EstimationLayout, process_relation
from estimator.factors.observation_stack import Observation, observation_rows, sensor_term
from estimator.mechanism_file import load_mechanism
from sensors.base import RobustLoss, robust_weight
from sensors.config import build_sensors

MECH = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
STEP = 1e-6  # central differences of ρ: truncation O(STEP²) and round-off O(eps/STEP) far below 1e-7


def sensors(**entries):
    return build_sensors({"sensors": entries}, MECH, "s.yaml").sensors


def sensor(**entry):
    return sensors(s=entry)[0]


def term_and_state(sensor):
    """The term of a lone ``sensor`` (kinematic layout, its bias if any) and x with q = q0, q̇ = 0.1, q̈ = 0."""
    layout = EstimationLayout(MECH.n, (), (), (sensor.dimension if sensor.params.bias_state else 0,))
    x = np.zeros(layout.size)
    x[:MECH.n], x[MECH.n:2 * MECH.n] = MECH.q0, 0.1
    return sensor_term(sensor, 0, layout, MECH.m, len(MECH.actuators)), x


def test_datasheet_sigma_and_cov_override() -> None:
    gyro = sensor(kind="gyroscope", body="coupler", rate=400, noise={"density": 1e-3, "quantum": 0.012})
    expected = np.sqrt(1e-6 * 400 + 0.012**2 / 12)  # N²·rate + Δ²/12
    term, x = term_and_state(gyro)
    assert term.sigma == pytest.approx(expected, rel=1e-12)
    h = gyro.measurement(x[:MECH.n], x[MECH.n:2 * MECH.n], jac=False)[0]
    z = h + 0.05
    configured = observation_rows(Observation(term, z, term.whitening(None), 0.0), x)[0]
    given = observation_rows(Observation(term, z, term.whitening(np.array([[4e-4]])), 0.0), x)[0]
    assert configured == pytest.approx([-0.05 / expected], rel=1e-9)
    assert given == pytest.approx([-0.05 / 0.02], rel=1e-9)


def test_a_reading_covariance_whitens_its_rows() -> None:
    """W = L⁻¹ (cov = L Lᵀ): Wᵀ W = cov⁻¹, so |e|² is the Mahalanobis distance of h − z in cov."""
    accel = sensor(kind="accelerometer", body="coupler", position=[1, 0], rate=500, noise={"density": 1e-2})
    term, x = term_and_state(accel)
    cov = np.array([[4e-4, 1e-4], [1e-4, 9e-4]])
    white = term.whitening(cov)
    np.testing.assert_allclose(white.T @ white, np.linalg.inv(cov), rtol=1e-12)
    h = accel.measurement(x[:MECH.n], x[2 * MECH.n:3 * MECH.n], np.zeros(1), jac=False)[0]
    r = np.array([0.03, -0.02])
    e = observation_rows(Observation(term, h - r, white, 0.0), x)[0]
    assert e @ e == pytest.approx(r @ np.linalg.solve(cov, r), rel=1e-12)


def huber(e: float, k: float) -> float:
    return 0.5 * e * e if abs(e) <= k else k * abs(e) - 0.5 * k * k


def cauchy(e: float, k: float) -> float:
    return 0.5 * k * k * np.log1p((e / k) ** 2)


@pytest.mark.parametrize("loss,rho", [("huber", huber), ("cauchy", cauchy)])
def test_the_robust_weight_is_the_derivative_of_its_loss(loss: str, rho) -> None:
    """IRLS: w(|e|) = ρ′(|e|)/|e| for Huber ρ (e²/2 within k, k|e| − k²/2 beyond) and Cauchy
    ρ = k²/2 ln(1 + (e/k)²), ρ′ by central differences; no loss: w = 1."""
    robust = RobustLoss(loss, 1.5)
    for norm in (0.1, 1.0, 1.4, 1.6, 3.0, 50.0):
        slope = (rho(norm + STEP, 1.5) - rho(norm - STEP, 1.5)) / (2.0 * STEP)
        assert robust.weight(norm) == pytest.approx(slope / norm, rel=1e-7)
    assert robust_weight(0, 1.5, 50.0) == 1.0


@pytest.mark.parametrize("loss", ["huber", "cauchy"])
def test_robust_loss_downweights_outliers(loss: str) -> None:
    """The rows of a reading under a loss are the plain rows scaled by √w(|e|) (error and Jacobian
    alike); an outlier of 500 σ then weighs less than 1 % of its plain square."""
    noise = {"density": 0.01}
    robust, plain = sensors(robust={"kind": "gyroscope", "body": "coupler", "rate": 100, "noise": noise,
                                    "loss": {"type": loss, "k": 1.0}},
                            plain={"kind": "gyroscope", "body": "coupler", "rate": 100, "noise": noise})
    (robust_term, x), (plain_term, _) = term_and_state(robust), term_and_state(plain)
    h = plain.measurement(x[:MECH.n], x[MECH.n:2 * MECH.n], jac=False)[0]
    for offset in (0.05, 50.0):  # 0.5 σ and 500 σ off
        z = h + offset
        e, jacobian = observation_rows(Observation(robust_term, z, robust_term.whitening(None), 0.0), x)
        plain_e, plain_jacobian = observation_rows(Observation(plain_term, z, plain_term.whitening(None), 0.0), x)
        scale = np.sqrt(robust.params.loss.weight(np.linalg.norm(plain_e)))
        np.testing.assert_allclose(e, scale * plain_e, rtol=1e-12)
        np.testing.assert_allclose(jacobian, scale * plain_jacobian, rtol=1e-12)
    assert e @ e < 0.01 * (plain_e @ plain_e)


def test_bias_columns_and_their_random_walk() -> None:
    """A sensor with a bias state reads its own columns of x (e shifts by W b) and the process rows
    between steps hold b_k − b_{k−1} with σ = K √h (estimator.factors.estimation_state)."""
    gyro, accel = sensors(gyro={"kind": "gyroscope", "body": "coupler", "rate": 400, "noise": {"density": 1e-3}},
                          accel={"kind": "accelerometer", "body": "coupler", "position": [1, 0], "rate": 500,
                                 "bias_state": True,
                                 "noise": {"density": 1e-3, "random_walk": 3e-3, "bias_sigma": 0.1}})
    layout = EstimationLayout(MECH.n, (), (), (0, accel.dimension))
    assert sensor_term(gyro, 0, layout, MECH.m, len(MECH.actuators)).bias is None
    term = sensor_term(accel, 1, layout, MECH.m, len(MECH.actuators))
    assert term.bias == layout.bias_of(1) == slice(3 * MECH.n, 3 * MECH.n + 2)
    x = np.zeros(layout.size)
    x[:MECH.n] = MECH.q0
    z = np.array([0.2, -0.1])
    biased = x.copy()
    biased[term.bias] = [0.3, 0.4]
    shift = (observation_rows(Observation(term, z, term.whitening(None), 0.0), biased)[0]
             - observation_rows(Observation(term, z, term.whitening(None), 0.0), x)[0])
    np.testing.assert_allclose(shift, np.array([0.3, 0.4]) / term.sigma, rtol=1e-9)
    h = 0.01
    sigma = accel.params.noise.bias_step_sigma(h)
    assert sigma == pytest.approx(3e-3 * np.sqrt(h))  # K √h
    relation = process_relation(layout, h, 2, (1.0, 1.0), [(term.bias, sigma)])
    assert relation.noise.sigmas()[-2:] == pytest.approx([sigma, sigma])
    previous, current = biased.copy(), biased.copy()
    current[term.bias] += [0.01, -0.02]
    walk = sum(block @ state for block, state in zip(relation.blocks, (previous, current)))[-2:]
    np.testing.assert_allclose(walk, [0.01, -0.02], rtol=1e-12)


def test_encoder_residual_wraps_across_pi() -> None:
    encoder = sensor(kind="encoder", body="crank", counts=4096, rate=1000)
    term, x = term_and_state(encoder)
    x[:2] = [np.cos(3.1), np.sin(3.1)]  # crank at 3.1 rad
    error, _ = observation_rows(Observation(term, np.array([-3.1]), 1.0, 0.0), x)  # the reading wrapped past −π
    assert error[0] == pytest.approx(6.2 - 2 * np.pi, abs=1e-12)
