"""Compiled shorthands over the model arrays, shared by the compiled dynamics kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_matrix, put_vector
from estimator.constraints import constraint_rate_terms, constraint_terms
from estimator.forces import force_terms
from estimator.linalg import solve


@njit(cache=True)
def constraints(ar, q):
    """Φ(q) and Φq(q)."""
    phi, jac, _ = constraint_terms(q, ar.constants, ar.c_kind, ar.c_idx, ar.c_coef, False)
    return phi, jac


@njit(cache=True)
def constraint_rates(ar, q, qd):
    """Φ, Φq and γ = −Φ̇q q̇."""
    return constraint_rate_terms(q, qd, ar.constants, ar.c_kind, ar.c_idx, ar.c_coef)


@njit(cache=True)
def forces(ar, q, qd, jacobians):
    """Q(q, q̇) and, if asked, ∂Q/∂q and ∂Q/∂q̇."""
    return force_terms(q, qd, ar.constants, ar.q_force, ar.spring_idx, ar.spring_par, ar.torsion_idx,
                       ar.torsion_par, ar.torque_idx, ar.torque_val, jacobians)


@njit(cache=True)
def rk_stages(k0, b):
    """The stages of an explicit Runge-Kutta step (tableau weights ``b``), the first one ``k0``.
    With ``rk_stage_state`` and ``rk_combine``, a module's step of its own derivative is a loop over
    the stages: no shared step takes the derivative as an argument or a closure, as numba caches
    neither on disk."""
    k = np.zeros((b.shape[0], k0.shape[0]))
    put_vector(k[0], k0)
    return k


@njit(cache=True)
def rk_stage_state(y, k, h, a, i):
    """The state at which stage ``i`` is evaluated: y + h Σ_{j<i} a[i, j] k[j] (tableau ``a``)."""
    yi = y.copy()
    for j in range(i):
        if a[i, j] != 0.0:
            yi += h * a[i, j] * k[j]
    return yi


@njit(cache=True)
def rk_combine(y, k, h, b):
    """The explicit Runge-Kutta step's result y + h Σ b[i] k[i] from the stages ``k``."""
    out = y.copy()
    for i in range(b.shape[0]):
        out += h * b[i] * k[i]
    return out


@njit(cache=True)
def saddle_solve(top_left, jac, rhs_top, rhs_bottom):
    """Solve [[A, Φqᵀ], [Φq, 0]] [x; μ] = [r1; r2] (rank-revealing for redundant Φq); returns x, μ."""
    n, m = jac.shape[1], jac.shape[0]
    matrix = np.zeros((n + m, n + m))
    put_matrix(matrix[:n, :n], top_left)
    put_matrix(matrix[:n, n:], jac.T)
    put_matrix(matrix[n:, :n], jac)
    rhs = np.concatenate((rhs_top, rhs_bottom))
    x = solve(matrix, rhs)
    return x[:n], x[n:]
