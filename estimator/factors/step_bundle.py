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
from numba import njit

from estimator.constraints import constraint_derivatives, constraint_terms, velocity_term_gradient
from estimator.factors.constraint_factors import acceleration_constraint_terms, weighted_hessian
from estimator.factors.independent_coordinates import IndependentCoordinates
from estimator.forces import force_terms, generalized_force_terms
from estimator.model import Mechanism


def _kept(rows: np.ndarray, m: int, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows S of each array (no copy when S is every row)."""
    return arrays if len(rows) == m else tuple(x[rows] for x in arrays)


@njit(cache=True)
def _dependent_step_kernel(rows, q, qd, qdd, lam, constants, c_kind, c_idx, c_coef, mass, q_force, spring_idx,
                           spring_par, torsion_idx, torsion_par, torque_idx, torque_val, jac):
    """The dependent-coordinate step error and, if ``jac``, its Jacobian [∂/∂q ∂/∂q̇ ∂/∂q̈ ∂/∂λ]
    ((3|S| + n) x (3n + |S|), else 0 rows): the equations of the module docstring, row r of S at a
    time, with Φ̇q_r = Φqq_r q̇ and γ_r = −Φ̇q_r q̇."""
    n, size = q.shape[0], rows.shape[0]
    velocity, dynamics, acceleration = size, 2 * size, 2 * size + n
    phi, phi_q, phi_qq = constraint_terms(q, constants, c_kind, c_idx, c_coef, True)
    force, force_q, force_qd = force_terms(q, qd, constants, q_force, spring_idx, spring_par, torsion_idx,
                                           torsion_par, torque_idx, torque_val, jac)
    error = np.empty(3 * size + n)
    error[dynamics:acceleration] = mass @ qdd - force
    jacobian = np.zeros((3 * size + n if jac else 0, 3 * n + size))
    if jac:
        s_q = velocity_term_gradient(q, qd, constants, c_kind, c_idx)  # ∂s/∂q, s_r = q̇ᵀ Φqq_r q̇
        jacobian[dynamics:acceleration, :n] = -force_q
        jacobian[dynamics:acceleration, n:2 * n] = -force_qd
        jacobian[dynamics:acceleration, 2 * n:3 * n] = mass
    for a in range(size):
        r = rows[a]
        rate = phi_qq[r] @ qd  # Φ̇q_r
        error[a] = phi[r]
        error[velocity + a] = phi_q[r] @ qd
        error[dynamics:acceleration] += lam[a] * phi_q[r]
        error[acceleration + a] = phi_q[r] @ qdd + rate @ qd
        if jac:
            jacobian[a, :n] = phi_q[r]
            jacobian[velocity + a, :n] = rate
            jacobian[velocity + a, n:2 * n] = phi_q[r]
            jacobian[dynamics:acceleration, :n] += lam[a] * phi_qq[r]
            jacobian[dynamics:acceleration, 3 * n + a] = phi_q[r]
            jacobian[acceleration + a, :n] = phi_qq[r] @ qdd + s_q[r]
            jacobian[acceleration + a, n:2 * n] = 2.0 * rate
            jacobian[acceleration + a, 2 * n:3 * n] = phi_q[r]
    return error, jacobian


def dependent_step_error(mech: Mechanism, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         lam: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q; Φq_S q̈ − γ_S] (see module docstring); Jacobians wrt (q, q̇, q̈, λ).

    One compiled kernel instead of the same sums as numpy calls, whose Python overhead dominates on
    small mechanisms (on large ones, such as the 22-coordinate pick-and-place, the Hessian tensor
    does); error and Jacobian are those of the numpy form to round-off."""
    a, n = mech.arrays, mech.n
    error, jacobian = _dependent_step_kernel(np.asarray(rows, np.int64), q, qd, qdd, lam, a.constants, a.c_kind,
                                             a.c_idx, a.c_coef, a.mass, a.q_force, a.spring_idx, a.spring_par,
                                             a.torsion_idx, a.torsion_par, a.torque_idx, a.torque_val, jac)
    if not jac:
        return error, None
    return error, [jacobian[:, :n], jacobian[:, n:2 * n], jacobian[:, 2 * n:3 * n], jacobian[:, 3 * n:]]


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
