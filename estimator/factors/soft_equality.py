"""Soft equality between consecutive states: e = x_k − x_{k+1}, weighted by its own noise model.

A random-walk model for slowly varying unknowns (actuator forces, multipliers, biases).
"""

from __future__ import annotations

import numpy as np

from estimator.factors.identity import scaled_identity


def soft_equality_error(x0: np.ndarray, x1: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = x0 − x1; Jacobians (I, −I)."""
    n = x0.shape[0]
    return x0 - x1, [scaled_identity(n), scaled_identity(n, -1.0)] if jac else None
