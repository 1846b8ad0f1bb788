"""Process noise (``acceleration_noise``) and the guessed start (``guess_sigma``).

- The integrator rows' σ: a white acceleration of density A leaves the trapezoidal rule's velocity
  row a residual of variance A² h and its position row one of A² h³/12, uncorrelated; checked
  against a Monte-Carlo integration of the noise on a fine grid (an independent reference).
- A weak absolute sensor: a crank encoder of σ = 1° at 200 Hz on a free-swinging four-bar. With
  the default process noise the estimate follows the readings as a linear Kalman filter on the
  angle alone does (the reference); with none, the model (here the truth's) is trusted exactly and
  the estimate is closer still: the window's once-linearized steps do not drift off it.
- Rate sensors only: the start is a guess with the wide prior, and the estimate converges from a
  crank 0.3 rad away from the release pose (gyroscope on the coupler).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from conftest import MECHANISMS

from estimator.factors.estimation_state import EstimationLayout, process_relation
from estimator.mechanism_file import load_mechanism
from estimator.online.config import EstimatorConfig
from replay.clocks import FixedClock
from replay.scenarios import feed
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

RATE = 200.0
ENCODER_SIGMA = math.radians(1.0)


def trapezoid_residuals(density: float, h: float, substeps: int, samples: int,
                        rng: np.random.Generator) -> np.ndarray:
    """(position, velocity) residuals of the trapezoidal rule over one step h for a white acceleration
    of density ``density``, integrated exactly on ``substeps`` piecewise-constant pieces."""
    dt = h / substeps
    a = rng.normal(scale=density / math.sqrt(dt), size=(samples, substeps))
    v = np.concatenate((np.zeros((samples, 1)), np.cumsum(a * dt, axis=1)), axis=1)
    q = np.sum(0.5 * (v[:, :-1] + v[:, 1:]) * dt, axis=1)  # exact for a piecewise-linear v
    return np.column_stack((q - 0.5 * h * v[:, -1], v[:, -1]))


def test_integrator_rows_sigma_matches_the_integrated_white_acceleration() -> None:
    density, h = 0.7, 5e-3
    residuals = trapezoid_residuals(density, h, 200, 40_000, np.random.default_rng(3))
    covariance = np.cov(residuals.T)
    expected = np.array([density**2 * h**3 / 12.0, density**2 * h])
    assert np.allclose(np.diag(covariance), expected, rtol=0.03)
    assert abs(covariance[0, 1]) / math.sqrt(covariance[0, 0] * covariance[1, 1]) < 0.03
    # the estimator's process factor whitens its q and q̇ rows with exactly these σ
    layout = EstimationLayout(2, (), (), ())
    sigmas = (math.sqrt(expected[0]), math.sqrt(expected[1]))
    relation = process_relation(layout, h, 2, sigmas, [])
    assert np.allclose(relation.noise.sigmas(), np.repeat(sigmas, layout.n))


def fourbar_run(sensor: dict, config: EstimatorConfig, released: float = 0.0, t_end: float = 3.0):
    """A free four-bar released from rest (crank ``released`` rad from the file's pose) read by one
    sensor; the estimator starts from the file's pose. Crank angle errors and the times."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    sensors = build_sensors({"sensors": {"s": sensor}}, mech, "test")
    crank = mech.coordinate_names.index("theta0")
    q0 = mech.q0.copy()
    if released:
        from estimator.online.startup import start_anchor
        q0 = start_anchor(mech, (("theta0", float(mech.q0[crank] + released)),))
    truth = forward_truth(mech, q0, np.zeros(mech.n), 1e-3, t_end)
    readings = simulate_readings(sensors.sensors, truth, 2)
    estimates, counters, _ = feed(mech, sensors, config, readings, FixedClock())
    assert counters["solver_recoveries"] == 0 and len(estimates) > 0.9 * t_end * config.rate
    t = np.array([e.t for e in estimates])
    index = np.rint(t / 1e-3).astype(int)
    return t, np.array([e.q[crank] for e in estimates]) - truth.q[index, crank], truth.q[:, crank]


def kalman_rmse(angles: np.ndarray, readings: np.ndarray, jerk: float) -> float:
    """RMSE of a constant-acceleration Kalman filter on the angle alone (white jerk ``jerk``)."""
    h, r = 1.0 / RATE, ENCODER_SIGMA**2
    f = np.array([[1.0, h, h * h / 2], [0.0, 1.0, h], [0.0, 0.0, 1.0]])
    g = np.array([[h**5 / 20, h**4 / 8, h**3 / 6], [h**4 / 8, h**3 / 3, h**2 / 2], [h**3 / 6, h**2 / 2, h]])
    x, p, errors = np.array([readings[0], 0.0, 0.0]), np.diag([r, 1.0, 1e4]), []
    for k, z in enumerate(readings):
        if k:
            x, p = f @ x, f @ p @ f.T + jerk**2 * g
        gain = p[:, 0] / (p[0, 0] + r)
        x, p = x + gain * (z - x[0]), p - np.outer(gain, p[0])
        errors.append(x[0] - angles[k])
    return float(np.sqrt(np.mean(np.square(errors))))


def test_a_weak_encoder_is_followed_as_a_kalman_filter_follows_it() -> None:
    encoder = {"kind": "encoder", "body": "crank", "turns": "multi", "rate": RATE,
               "noise": {"density": ENCODER_SIGMA / math.sqrt(RATE)}}
    config = EstimatorConfig(rate=RATE)
    _, error, _ = fourbar_run(encoder, config)
    rmse = float(np.sqrt(np.mean(error**2)))
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    truth = forward_truth(mech, mech.q0, np.zeros(mech.n), 1.0 / RATE, 3.0)
    crank = mech.coordinate_names.index("theta0")
    noisy = truth.q[:, crank] + np.random.default_rng(5).normal(scale=ENCODER_SIGMA, size=len(truth.t))
    reference = kalman_rmse(truth.q[:, crank], noisy, jerk=100.0)
    assert rmse < 1.5 * reference
    _, exact, _ = fourbar_run(encoder, dataclasses.replace(config, acceleration_noise=0.0))
    assert np.sqrt(np.mean(exact**2)) < rmse  # the exact model trusted exactly


def test_rate_sensors_only_converge_from_a_wrong_start() -> None:
    """A gyroscope on the coupler: its rate against the crank's depends on the pose, so the wide
    guess prior lets the readings move the start within a fraction of a second."""
    gyro = {"kind": "gyroscope", "body": "coupler", "rate": 1000, "noise": {"density": 8.7e-5}}
    t, error, _ = fourbar_run(gyro, EstimatorConfig(), released=0.3, t_end=2.0)
    assert abs(error[0]) > 0.25  # it starts from the file's pose
    assert np.max(np.abs(error[t >= t[0] + 1.0])) < 1e-2
