"""All nonlinear relations of one time step bundled in one error function (one GTSAM callback per step).

Dependent coordinates, over (q, q̇, q̈, λ), S a maximal independent subset of the constraint rows
(λ has |S| entries, so redundant constraints leave no free multiplier):

    e = [Φ_S(q);  Φq_S q̇;  M q̈ + Φq_Sᵀ λ − Q(q, q̇);  Φq_S q̈ − γ_S]       (3|S| + n rows)

with Jacobians (Φqq·x = Σ_j Φqq[:, :, j] x_j, s_r = q̇ᵀ Φqq_r q̇, see constraint_factors):

    ∂/∂q  = [Φq_S;  Φqq_S·q̇;  Σ_r λ_r Φqq_r − ∂Q/∂q;  Φqq_S·q̈ + ∂s_S/∂q],
    ∂/∂q̇ = [0;  Φq_S;  −∂Q/∂q̇;  2 Φqq_S·q̇],   ∂/∂q̈ = [0; 0; M; Φq_S],   ∂/∂λ = [0; 0; Φq_Sᵀ; 0].

Independent coordinates z = q[I], over (q, q̇, q̈), with B = [Φq_S; E_I] and R = B⁻¹ [0; I]
(the Maggi / R-matrix form, García de Jalón and Bayo, ch. 5):

    e = [Φ_S(q);  Φq_S q̇;  Φq_S q̈ − γ_S;  Rᵀ (M q̈ − Q)]                 (3|S| + dof = 3n rows)

    ∂(Rᵀ g)/∂q = −Rᵀ (∂Q/∂q + Σ_r μ_r Φqq_r),  μ = (B⁻ᵀ g)_S,  g = M q̈ − Q
    (from ∂R/∂q_l = −B⁻¹ [Φqq_S,l R; 0]);  ∂/∂q̇ = −Rᵀ ∂Q/∂q̇;  ∂/∂q̈ = Rᵀ M.

With the integrators of I this system is square: a step has exactly one solution, whatever the weights.
"""

from __future__ import annotations

import numpy as np

from estimator.factors.constraint_factors import (acceleration_constraint_terms, constraint_derivatives,
                                                  weighted_hessian)
from estimator.factors.dynamics_factors import generalized_force_terms
from estimator.factors.independent_coordinates import IndependentCoordinates
from estimator.model import Mechanism


def _kept(rows: np.ndarray, m: int, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows S of each array (no copy when S is every row)."""
    return arrays if len(rows) == m else tuple(x[rows] for x in arrays)


def dependent_step_error(mech: Mechanism, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         lam: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q; Φq_S q̈ − γ_S] (see module docstring); Jacobians wrt (q, q̇, q̈, λ)."""
    n, size = mech.n, len(rows)
    phi, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    acc, (acc_q, acc_qd, _) = acceleration_constraint_terms(mech, q, qd, qdd, phi_q, phi_qq)
    phi, phi_q, phi_qq, acc, acc_q, acc_qd = _kept(rows, mech.m, phi, phi_q, phi_qq, acc, acc_q, acc_qd)
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mech.arrays.mass
    error = np.concatenate((phi, phi_q @ qd, mass @ qdd + phi_q.T @ lam - force, acc))
    if not jac:
        return error, None
    total = 3 * size + n
    blocks = [np.zeros((total, n)), np.zeros((total, n)), np.zeros((total, n)), np.zeros((total, size))]
    dyn = slice(2 * size, 2 * size + n)
    last = slice(2 * size + n, total)
    blocks[0][:size] = phi_q
    blocks[0][size:2 * size] = acc_qd / 2.0  # Φ̇q_S = Φqq_S·q̇
    blocks[0][dyn] = weighted_hessian(lam, phi_qq) - d_q
    blocks[0][last] = acc_q
    blocks[1][size:2 * size] = phi_q
    blocks[1][dyn] = -d_qd
    blocks[1][last] = acc_qd
    blocks[2][dyn] = mass
    blocks[2][last] = phi_q
    blocks[3][dyn] = phi_q.T
    return error, blocks


def independent_step_error(ic: IndependentCoordinates, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; Φq_S q̈ − γ_S; Rᵀ (M q̈ − Q)] (see module docstring); Jacobians wrt (q, q̇, q̈)."""
    mech, rows = ic.mech, ic.rows
    n, size = mech.n, len(rows)
    phi, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    acc, (acc_q, acc_qd, _) = acceleration_constraint_terms(mech, q, qd, qdd, phi_q, phi_qq)
    phi, phi_q, phi_qq, acc, acc_q, acc_qd = _kept(rows, mech.m, phi, phi_q, phi_qq, acc, acc_q, acc_qd)
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mech.arrays.mass
    system = np.empty((n, n))
    system[:size] = phi_q
    system[size:] = ic.picker
    inverse = np.linalg.inv(system)
    basis = inverse[:, size:]  # R
    unbalanced = mass @ qdd - force  # g
    error = np.concatenate((phi, phi_q @ qd, acc, basis.T @ unbalanced))
    if not jac:
        return error, None
    mu = (inverse.T @ unbalanced)[:size]
    total = 3 * size + n - size
    red = slice(3 * size, total)
    blocks = [np.zeros((total, n)), np.zeros((total, n)), np.zeros((total, n))]
    blocks[0][:size] = phi_q
    blocks[0][size:2 * size] = acc_qd / 2.0
    blocks[0][2 * size:3 * size] = acc_q
    blocks[0][red] = -basis.T @ (d_q + weighted_hessian(mu, phi_qq))
    blocks[1][size:2 * size] = phi_q
    blocks[1][2 * size:3 * size] = acc_qd
    blocks[1][red] = -basis.T @ d_qd
    blocks[2][2 * size:3 * size] = phi_q
    blocks[2][red] = basis.T @ mass
    return error, blocks
