"""Pieces shared by the constraint rows of the factors (dependent coordinates):

- S, a maximal independent subset of the constraint rows (redundant rows leave no free multiplier;
  estimator.kinematics.independent_constraint_rows, re-exported);
- Σ_r w_r Φqq_r;
- the acceleration constraints e = Φq q̈ − γ = Φq q̈ + s,  s_r = q̇ᵀ Φqq_r q̇ (γ = −s, scleronomic
  constraints), with ∂e/∂q = Φqq·q̈ + ∂s/∂q, ∂e/∂q̇ = 2 Φqq·q̇, ∂e/∂q̈ = Φq.

∂s/∂q needs third derivatives of Φ: see estimator.constraints.velocity_term_gradient.
"""

from __future__ import annotations

import numpy as np

from estimator.constraints import velocity_term_gradient
from estimator.kinematics import independent_constraint_rows  # noqa: F401 (S: kinematics, re-exported here)
from estimator.model import Mechanism


def weighted_hessian(weights: np.ndarray, phi_qq: np.ndarray) -> np.ndarray:
    """Σ_r w_r Φqq_r (n x n), as one matrix product (np.tensordot costs more in Python overhead here)."""
    n = phi_qq.shape[1]
    return (weights @ phi_qq.reshape(phi_qq.shape[0], n * n)).reshape(n, n)


def acceleration_constraint_terms(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                                  phi_q: np.ndarray, phi_qq: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """e = Φq q̈ + s and (∂e/∂q, ∂e/∂q̇, ∂e/∂q̈) from already evaluated Φq, Φqq."""
    rate = phi_qq @ qd  # Φ̇q
    error = phi_q @ qdd + rate @ qd
    a = mech.arrays
    d_q = phi_qq @ qdd + velocity_term_gradient(q, qd, a.constants, a.c_kind, a.c_idx)
    return error, [d_q, 2.0 * rate, phi_q]
