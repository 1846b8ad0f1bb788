"""Butcher's order-6 Runge-Kutta (estimator.spatial.runge_kutta) against a closed-form solution: the
forced oscillator q̈ = −q + sin 2t, q(0) = 0, q̇(0) = 1, whose solution is q = 5/3 sin t − 1/3 sin 2t.
Halving the step divides the global error by 2⁶ = 64 (order 6; RK4's would be 16), and the stages see
the forcing at their own times (a wrong stage fraction c breaks the order)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from estimator.spatial import runge_kutta


def global_error(h: float, end: float = 2.0) -> float:
    q, qd, t = np.array([0.0]), np.array([1.0]), 0.0
    for _ in range(int(round(end / h))):
        def rate(c: float, x: np.ndarray, v: np.ndarray, start: float = t) -> np.ndarray:
            return -x + np.sin(2.0 * (start + c * h))

        q, qd = runge_kutta.step(rate, q, qd, h, rate(0.0, q, qd))
        t += h
    exact = (5 / 3 * np.sin(end) - 1 / 3 * np.sin(2 * end), 5 / 3 * np.cos(end) - 2 / 3 * np.cos(2 * end))
    return max(abs(q[0] - exact[0]), abs(qd[0] - exact[1]))


def test_order_six_against_the_closed_form_solution() -> None:
    errors = [global_error(h) for h in (0.1, 0.05, 0.025)]
    assert errors[0] <= 1e-7
    for coarse, fine in zip(errors, errors[1:]):
        assert 50.0 <= coarse / fine <= 80.0


def test_the_tableau_meets_the_quadrature_conditions() -> None:
    """Σ bᵢ cᵢᵏ = 1/(k + 1) for k ≤ 5 (the bushy trees' order conditions), exactly in rationals."""
    b = [Fraction(x).limit_denominator(200) for x in runge_kutta.B]
    c = [Fraction(x).limit_denominator(200) for x in runge_kutta.C]
    assert [sum(bi * ci ** k for bi, ci in zip(b, c)) for k in range(6)] == [Fraction(1, k + 1) for k in range(6)]
