"""The trapezoidal integrator factor between consecutive steps of a variable x and its rate ẋ
(q/q̇ or q̇/q̈): e = x_{k+1} − x_k − Δt/2 (ẋ_k + ẋ_{k+1})  (second order, A-stable)."""

from __future__ import annotations

import numpy as np

from estimator.factors.identity import scaled_identity


def trapezoidal_error(dt: float, x0: np.ndarray, x1: np.ndarray, rate0: np.ndarray, rate1: np.ndarray,
                      jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = x1 − x0 − dt/2 (rate0 + rate1); Jacobians (−I, I, −dt/2 I, −dt/2 I)."""
    n = x0.shape[0]
    error = x1 - x0 - 0.5 * dt * (rate0 + rate1)
    if not jac:
        return error, None
    half = scaled_identity(n, -0.5 * dt)
    return error, [scaled_identity(n, -1.0), scaled_identity(n), half, half]
