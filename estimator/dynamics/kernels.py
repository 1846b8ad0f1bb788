"""Compiled shorthands over the model arrays, shared by the compiled dynamics kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

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


def make_rk_step(derivative):
    """A compiled explicit Runge-Kutta step for y' = derivative(y, context), tableau (a, b), given
    the first stage ``k0`` = derivative(y): the caller has it already (it is the output state's
    acceleration), so every step saves one evaluation.

    A factory rather than a function argument: numba caches closures over compiled functions on
    disk, but not functions that receive one as an argument."""

    @njit(cache=True)
    def rk_step(y, k0, h, a, b, context):
        stages = b.shape[0]
        k = np.zeros((stages, y.shape[0]))
        k[0] = k0
        for i in range(1, stages):
            yi = y.copy()
            for j in range(i):
                if a[i, j] != 0.0:
                    yi += h * a[i, j] * k[j]
            k[i] = derivative(yi, context)
        out = y.copy()
        for i in range(stages):
            out += h * b[i] * k[i]
        return out

    return rk_step


@njit(cache=True)
def saddle_solve(top_left, jac, rhs_top, rhs_bottom):
    """Solve [[A, Φqᵀ], [Φq, 0]] [x; μ] = [r1; r2] (rank-revealing for redundant Φq); returns x, μ."""
    n, m = jac.shape[1], jac.shape[0]
    matrix = np.zeros((n + m, n + m))
    matrix[:n, :n] = top_left
    matrix[:n, n:] = jac.T
    matrix[n:, :n] = jac
    rhs = np.concatenate((rhs_top, rhs_bottom))
    x = solve(matrix, rhs)
    return x[:n], x[n:]
