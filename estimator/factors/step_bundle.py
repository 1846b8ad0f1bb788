"""All nonlinear relations of one time step bundled in one error function (one GTSAM callback per step).

Dependent coordinates, over (q, q̇, q̈, λ[, F]): the step rows of estimator.dynamics.step_rows,

    e = [Φ_S(q);  Φq_S q̇;  M q̈ + Φq_Sᵀ λ − Q(q, q̇) − E F;  Φq_S q̈ − γ_S]       (3|S| + n rows),

S a maximal independent subset of the constraint rows, F the unknown forces on the columns of E
(the driven coordinates of inverse and hybrid dynamics; none in forward dynamics).

Independent coordinates z = q[I], over (q, q̇, q̈), with B = [Φq_S; E_I] and R = B⁻¹ [0; I]
(the Maggi / R-matrix form, García de Jalón and Bayo, ch. 5): the constraint block of
estimator.dynamics.step_rows and the reduced dynamics,

    e = [Φ_S(q);  Φq_S q̇;  Φq_S q̈ − γ_S;  Rᵀ (M q̈ − Q)]                 (3|S| + dof = 3n rows)

    ∂(Rᵀ g)/∂q = −Rᵀ (∂Q/∂q + Σ_r μ_r Φqq_r),  μ = (B⁻ᵀ g)_S,  g = M q̈ − Q
    (from ∂R/∂q_l = −B⁻¹ [Φqq_S,l R; 0]);  ∂/∂q̇ = −Rᵀ ∂Q/∂q̇;  ∂/∂q̈ = Rᵀ M.

With the integrators of I this system is square: a step has exactly one solution, whatever the weights.
"""

from __future__ import annotations

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.factors.constraint_factors import weighted_hessian
from estimator.factors.independent_coordinates import IndependentCoordinates
from estimator.forces import generalized_force_terms
from estimator.model import Mechanism
from estimator.model_protocol import constraint_rows, mass_matrix, step_rows


def dependent_step_error(mech: Mechanism, rows: np.ndarray, selection: np.ndarray | None, q: np.ndarray,
                         qd: np.ndarray, qdd: np.ndarray, lam: np.ndarray, f: np.ndarray | None = None,
                         jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E F; Φq_S q̈ − γ_S] over the constraint ``rows`` S (module
    docstring); E = ``selection`` (n x a) and F = ``f``, or neither (None). Jacobians wrt (q, q̇, q̈, λ)
    and, with forces, F."""
    n = mech.n
    if selection is None:
        selection, f = np.zeros((n, 0)), np.zeros(0)
    error, jacobian = step_rows(mech, rows, selection, q, qd, qdd, lam, f, jac)
    if not jac:
        return error, None
    edges = [0, n, 2 * n, 3 * n, 3 * n + len(rows)] + ([jacobian.shape[1]] if selection.shape[1] else [])
    return error, [jacobian[:, a:b] for a, b in zip(edges[:-1], edges[1:])]


def step_sigmas(n: int, rows: int, position: float, velocity: float, dynamics: float,
                acceleration: float) -> np.ndarray:
    """Standard deviations of the rows of :func:`dependent_step_error` over ``rows`` constraint rows,
    block by block."""
    return np.repeat([position, velocity, dynamics, acceleration], [rows, rows, n, rows])


def _kept(rows: np.ndarray, m: int, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows S of each array (no copy when S is every row)."""
    return arrays if len(rows) == m else tuple(x[rows] for x in arrays)


def independent_step_error(ic: IndependentCoordinates, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; Φq_S q̈ − γ_S; Rᵀ (M q̈ − Q)] (see module docstring); Jacobians wrt (q, q̇, q̈)."""
    mech, rows = ic.mech, ic.rows
    n, size = mech.n, len(rows)
    constraint, d_constraint = constraint_rows(mech, rows, q, qd, qdd, jac)
    phi_q, phi_qq = _kept(rows, mech.m, *constraint_derivatives(mech, q, True)[1:])
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mass_matrix(mech, q)
    system = np.empty((n, n))
    system[:size] = phi_q
    system[size:] = ic.picker
    inverse = np.linalg.inv(system)
    basis = inverse[:, size:]  # R
    unbalanced = mass @ qdd - force  # g
    error = np.concatenate((constraint, basis.T @ unbalanced))
    if not jac:
        return error, None
    mu = (inverse.T @ unbalanced)[:size]
    reduced = [-basis.T @ (d_q + weighted_hessian(mu, phi_qq)), -basis.T @ d_qd, basis.T @ mass]
    return error, [np.vstack((d_constraint[:, i * n:(i + 1) * n], block)) for i, block in enumerate(reduced)]
