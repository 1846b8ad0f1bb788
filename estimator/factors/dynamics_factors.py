"""Dynamics factors in dependent coordinates (constant mass matrix M, natural coordinates).

- multipliers as variables:  e = M q̈ + Φqᵀ λ − Q(q, q̇)  (n), linear in q̈ and λ;
  ∂e/∂q = Σ_r λ_r Φqq_r − ∂Q/∂q, ∂e/∂q̇ = −∂Q/∂q̇, ∂e/∂q̈ = M, ∂e/∂λ = Φqᵀ.
  Together with the acceleration constraints this is the augmented system of Lagrange's equations
  (García de Jalón and Bayo, ch. 4); λ gives reaction forces.
- inverse dynamics:  the same minus E F, E (n x a) selecting the actuated coordinates, F the
  unknown actuator forces: ∂e/∂F = −E.
- forward dynamics, λ eliminated:  e = q̈ − q̈*(q, q̇), where [q̈*; λ*] = K⁻¹ [Q; γ_S] solves
  K = [[M, Φq_Sᵀ], [Φq_S, 0]] over an independent subset S of the constraint rows (with redundant
  constraints the full K is singular on the manifold and ill-conditioned next to it). With
  r = K x − [Q; γ_S] = [λ-form error; acceleration-constraint error]_S, dx* = −K⁻¹ ∂r, so
  ∂e/∂(q, q̇) = (K⁻¹ ∂r/∂(q, q̇))[:n] and ∂e/∂q̈ = I.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.errors import MbstateError
from estimator.factors.constraint_factors import acceleration_constraint_terms, weighted_hessian
from estimator.factors.identity import scaled_identity
from estimator.forces import generalized_force_terms
from estimator.model import Mechanism

def actuator_selection(mech: Mechanism, coordinates: Sequence[int] | None = None) -> np.ndarray:
    """E (n x a): column j is the unit vector of the j-th actuated coordinate (default: mech.actuators)."""
    if coordinates is None:
        coordinates = [act.coordinate for act in mech.actuators]
    if not len(coordinates):
        raise MbstateError(f"{mech.source}: inverse dynamics needs actuated coordinates, none given")
    selection = np.zeros((mech.n, len(coordinates)))
    selection[list(coordinates), np.arange(len(coordinates))] = 1.0
    return selection


def multiplier_dynamics_error(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, lam: np.ndarray,
                              jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = M q̈ + Φqᵀ λ − Q [N, N·m]; Jacobians wrt (q, q̇, q̈, λ)."""
    _, phi_q, phi_qq = constraint_derivatives(mech, q, jac)
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mech.arrays.mass
    error = mass @ qdd + phi_q.T @ lam - force
    if not jac:
        return error, None
    return error, [weighted_hessian(lam, phi_qq) - d_q, -d_qd, mass, phi_q.T]


def inverse_dynamics_error(mech: Mechanism, selection: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           lam: np.ndarray, f: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = M q̈ + Φqᵀ λ − Q − E F with E = ``selection`` (see actuator_selection); Jacobians wrt
    (q, q̇, q̈, λ, F)."""
    error, jacobians = multiplier_dynamics_error(mech, q, qd, qdd, lam, jac)
    error -= selection @ f
    if not jac:
        return error, None
    return error, [*jacobians, -selection]


def forward_dynamics_error(mech: Mechanism, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = q̈ − q̈*(q, q̇) [m/s², rad/s²], λ eliminated over the independent constraint ``rows``
    (see constraint_factors.independent_constraint_rows); Jacobians wrt (q, q̇, q̈)."""
    n, size = mech.n, len(rows)
    _, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    kept_q, kept_qq = (phi_q, phi_qq) if size == mech.m else (phi_q[rows], phi_qq[rows])
    system = np.zeros((n + size, n + size))
    system[:n, :n] = mech.arrays.mass
    system[:n, n:] = kept_q.T
    system[n:, :n] = kept_q
    rhs = np.concatenate((force, -(kept_qq @ qd) @ qd))
    if not jac:
        return qdd - np.linalg.solve(system, rhs)[:n], None
    inverse = np.linalg.inv(system)
    solution = inverse @ rhs
    qdd_star = solution[:n]
    _, (acc_q, acc_qd, _) = acceleration_constraint_terms(mech, q, qd, qdd_star, phi_q, phi_qq)
    residual = np.empty((n + size, 2 * n))  # [∂r/∂q, ∂r/∂q̇]
    residual[:n, :n] = weighted_hessian(solution[n:], kept_qq) - d_q
    residual[:n, n:] = -d_qd
    residual[n:, :n] = acc_q[rows]
    residual[n:, n:] = acc_qd[rows]
    d_star = inverse[:n] @ residual
    return qdd - qdd_star, [d_star[:, :n], d_star[:, n:], scaled_identity(n)]
