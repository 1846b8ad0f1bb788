"""The second-order prediction (estimator.dynamics.prediction) against independent formulations: the
Taylor step written out, polynomial motions it must reproduce exactly, the Adams-Moulton rows its
prediction satisfies, and its matrix form."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.dynamics.integrators import ADAMS_MOULTON
from estimator.dynamics.prediction import (HOLD, QUADRATIC, predict, prediction_coefficients, prediction_matrices,
                                           taylor_coefficients)
from estimator.factors.multistep import adams_moulton_error

N, REST, H = 3, 2, 0.004


def polynomial_states(degree: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """States [q; q̇; q̈; rest] at t_k = k h of q(t) = Σ_d c_d t^d (N coordinates) with a rest that
    follows the same polynomial's second derivative (as λ or F would move with q̈)."""
    coefficients = rng.normal(size=(degree + 1, N))
    t = H * np.arange(steps)[:, None, None]
    powers = np.arange(degree + 1)[None, :, None]
    q = np.sum(coefficients * t**powers, axis=1)
    qd = np.sum(coefficients[1:] * powers[:, 1:] * t ** (powers[:, 1:] - 1), axis=1)
    qdd = np.sum(coefficients[2:] * powers[:, 2:] * (powers[:, 2:] - 1) * t ** (powers[:, 2:] - 2), axis=1)
    return np.hstack((q, qd, qdd, qdd[:, :REST]))


def test_taylor_step_is_the_written_out_formula() -> None:
    """q + h q̇ + h²/2 q̈, q̇ + h q̈, q̈ and the rest held: the same floating-point operations, so equal."""
    rng = np.random.default_rng(1)
    q, qd, qdd, rest = rng.normal(size=(4, N))
    for h in (1e-3, 0.005, 0.0123):
        x = predict(taylor_coefficients(h), np.concatenate((q, qd, qdd, rest))[None], N)
        np.testing.assert_array_equal(x, np.concatenate((q + h * qd + 0.5 * h * h * qdd, qd + h * qdd, qdd, rest)))


@pytest.mark.parametrize("order", [2, 3, 4])
def test_quadratic_extrapolation_predicts_a_cubic_motion(order: int) -> None:
    """q cubic: q̈ is linear (the parabola through three states extrapolates it exactly) and q̇ quadratic
    (integrated exactly by Adams-Moulton of order ≥ 3; the trapezoidal rule leaves h³ q‴/12 per level)."""
    states = polynomial_states(3, 6, np.random.default_rng(order))
    coefficients = prediction_coefficients(H * ADAMS_MOULTON[order], QUADRATIC)
    x = predict(coefficients, states[5 - coefficients.shape[0]:5], N)
    scale = np.abs(states).max()
    np.testing.assert_allclose(x[2 * N:], states[5, 2 * N:], rtol=0, atol=1e-12 * scale)
    if order >= 3:
        np.testing.assert_allclose(x, states[5], rtol=0, atol=1e-12 * scale)
    else:
        assert np.abs(x[:2 * N] - states[5, :2 * N]).max() < 10 * H**3 * scale


@pytest.mark.parametrize("weights", [HOLD, QUADRATIC], ids=["hold", "quadratic"])
@pytest.mark.parametrize("order", [2, 3, 4])
def test_prediction_satisfies_the_adams_moulton_rows(order: int, weights: np.ndarray) -> None:
    """From random past states, the predicted q̇_k and q_k make the Adams-Moulton rows of q̇/q̈ and
    q/q̇ over x_{k+1−p} … x_k vanish (estimator.factors.multistep, an independent formulation)."""
    rng = np.random.default_rng(7)
    coefficients = prediction_coefficients(H * ADAMS_MOULTON[order], weights)
    past = rng.normal(size=(coefficients.shape[0], 3 * N + REST))
    x = predict(coefficients, past, N)
    states = np.vstack((past, x))[-order:]
    for level in (0, N):
        rates = [s[level + N:level + 2 * N] for s in states]
        error, _ = adams_moulton_error(order, H, states[-2][level:level + N], x[level:level + N], *rates, jac=False)
        assert np.abs(error).max() < 1e-14
    expected_tail = sum(w * s[2 * N:] for w, s in zip(weights, past[-len(weights):]))
    np.testing.assert_allclose(x[2 * N:], expected_tail, rtol=0, atol=1e-14)


@pytest.mark.parametrize("weights", [HOLD, QUADRATIC], ids=["hold", "quadratic"])
@pytest.mark.parametrize("order", [2, 3, 4])
def test_matrix_form_gives_the_same_prediction(order: int, weights: np.ndarray) -> None:
    rng = np.random.default_rng(11)
    coefficients = prediction_coefficients(H * ADAMS_MOULTON[order], weights)
    past = rng.normal(size=(coefficients.shape[0], 3 * N + REST))
    matrices = prediction_matrices(coefficients, N, 3 * N + REST)
    np.testing.assert_allclose(sum(p @ x for p, x in zip(matrices, past)), predict(coefficients, past, N), rtol=0,
                               atol=1e-15)
