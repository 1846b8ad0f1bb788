"""Independent coordinates z = q[I] (dof entries) of the dependent coordinates q, and the dynamics in z.

Reduced dynamics in z (Maggi/R-matrix form, García de Jalón and Bayo, ch. 5): with the square
B = [Φq_S; E_I] (S a maximal independent subset of the constraint rows, E_I the rows of I picking
q[I]), the accelerations follow from B q̈ = [γ_S; z̈], R = B⁻¹ [0; I] spans the admissible motions
(q̇ = R ż) and

    e = Rᵀ (M q̈(q, q̇, z̈) − Q(q, q̇))        (dof equations).

Exact Jacobians, no approximation: with D = B⁻¹ [I; 0], a = Φq q̈ + s the acceleration-constraint
error (estimator.factors.constraint_factors), g = M q̈ − Q and μ = (B⁻ᵀ g)_S,

    ∂q̈/∂q = −D ∂a_S/∂q,  ∂q̈/∂q̇ = −D ∂a_S/∂q̇,  ∂q̈/∂z̈ = R,
    ∂R/∂q_l = −B⁻¹ [Φqq_S,l R; 0]  ⇒  ∂e/∂q = Rᵀ (M ∂q̈/∂q − ∂Q/∂q − Σ_r μ_r Φqq_r),
    ∂e/∂q̇ = Rᵀ (M ∂q̈/∂q̇ − ∂Q/∂q̇),  ∂e/∂z̈ = Rᵀ M R.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.factors.constraint_factors import (acceleration_constraint_terms, independent_constraint_rows,
                                                  weighted_hessian)
from estimator.forces import generalized_force_terms
from estimator.kinematics import independent_coordinates
from estimator.model import Mechanism


@dataclass(frozen=True, eq=False)
class IndependentCoordinates:
    """z = q[coordinates]; ``rows`` a maximal independent subset of the constraint rows."""

    mech: Mechanism
    coordinates: np.ndarray
    rows: np.ndarray
    picker: np.ndarray  # E_I (dof x n): z = E_I q


def choose_independent_coordinates(mech: Mechanism, q: np.ndarray) -> IndependentCoordinates:
    """Well-conditioned z and constraint rows at an assembled configuration q (choose once, not at
    every step: off the manifold redundant rows look independent)."""
    coordinates = np.array(independent_coordinates(mech, q))
    return IndependentCoordinates(mech, coordinates, independent_constraint_rows(mech, q), np.eye(mech.n)[coordinates])


def reduced_dynamics_error(ic: IndependentCoordinates, q: np.ndarray, qd: np.ndarray, zdd: np.ndarray,
                           jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = Rᵀ (M q̈(q, q̇, z̈) − Q) (dof) [N, N·m]; Jacobians wrt (q, q̇, z̈)."""
    mech, rows = ic.mech, ic.rows
    _, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    size = len(rows)
    kept_q, kept_qq = (phi_q, phi_qq) if size == mech.m else (phi_q[rows], phi_qq[rows])
    system = np.empty((mech.n, mech.n))
    system[:size] = kept_q
    system[size:] = ic.picker
    inverse = np.linalg.inv(system)
    qdd = inverse @ np.concatenate((-(kept_qq @ qd) @ qd, zdd))
    basis = inverse[:, size:]
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mech.arrays.mass
    unbalanced = mass @ qdd - force
    error = basis.T @ unbalanced
    if not jac:
        return error, None
    _, (acc_q, acc_qd, _) = acceleration_constraint_terms(mech, q, qd, qdd, phi_q, phi_qq)
    mu = (inverse.T @ unbalanced)[:size]
    d_qdd = -inverse[:, :size] @ np.hstack((acc_q[rows], acc_qd[rows]))  # [∂q̈/∂q, ∂q̈/∂q̇]
    d_unbalanced = mass @ d_qdd
    d_unbalanced[:, :mech.n] -= d_q + weighted_hessian(mu, kept_qq)
    d_unbalanced[:, mech.n:] -= d_qd
    d_error = basis.T @ d_unbalanced
    return error, [d_error[:, :mech.n], d_error[:, mech.n:], basis.T @ mass @ basis]


