"""The rows of one time step in dependent coordinates, compiled: the constraint block and the
equations of motion with optional unknown forces, with their Jacobians. The classical, factor-graph
and online code all evaluate these equations here (the numpy second formulations live in the tests).

S is a maximal independent subset of the constraint rows (λ has |S| entries, so redundant
constraints leave no free multiplier); Φqq·x = Σ_j Φqq[:, :, j] x_j, Φ̇q = Φqq·q̇ and
s_r = q̇ᵀ Φqq_r q̇ = −γ_r (scleronomic constraints, estimator.constraints).

Constraint block (3|S| rows; position, velocity, acceleration):

    c = [Φ_S(q);  Φq_S q̇;  Φq_S q̈ + s_S],
    ∂c/∂q = [Φq_S;  Φqq_S·q̇;  Φqq_S·q̈ + ∂s_S/∂q],  ∂c/∂q̇ = [0;  Φq_S;  2 Φqq_S·q̇],  ∂c/∂q̈ = [0; 0; Φq_S].

Dynamics rows (n rows; the augmented Lagrange equations, García de Jalón and Bayo, ch. 4), with
unknown forces F on the columns of E (n x a; a = 0 without them):

    d = M q̈ + Φq_Sᵀ λ − Q(q, q̇) − E F,
    ∂d/∂q = Σ_r λ_r Φqq_r − ∂Q/∂q,  ∂d/∂q̇ = −∂Q/∂q̇,  ∂d/∂q̈ = M,  ∂d/∂λ = Φq_Sᵀ,  ∂d/∂F = −E.

A step of the dynamics is e = [Φ_S; Φq_S q̇; d; Φq_S q̈ + s_S] (3|S| + n rows), its Jacobian one matrix
over [q, q̇, q̈, λ, F]. One compiled call computes error and Jacobian (as numpy calls the same sums
cost several times more, mostly Python overhead; estimator.factors.step_bundle splits the matrix
into GTSAM's blocks).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_matrix, put_vector
from estimator.constraints import constraint_terms, velocity_term_gradient
from estimator.dynamics.kernels import forces


@njit(cache=True)
def _constraint_block(rows, phi, phi_q, phi_qq, s_q, qd, qdd, jac, error, jacobian, velocity, acceleration):
    """c (module docstring) into ``error``: Φ_S at rows 0 …, Φq_S q̇ from ``velocity``, Φq_S q̈ + s_S from
    ``acceleration``; with ``jac`` its derivatives into columns [q, q̇, q̈] (0 … 3n) of ``jacobian``."""
    n = qd.shape[0]
    for i in range(rows.shape[0]):
        r = rows[i]
        rate = phi_qq[r] @ qd  # row r of Φ̇q
        error[i] = phi[r]
        error[velocity + i] = phi_q[r] @ qd
        error[acceleration + i] = phi_q[r] @ qdd + rate @ qd
        if jac:
            put_vector(jacobian[i, :n], phi_q[r])
            put_vector(jacobian[velocity + i, :n], rate)
            put_vector(jacobian[velocity + i, n:2 * n], phi_q[r])
            put_vector(jacobian[acceleration + i, :n], phi_qq[r] @ qdd + s_q[r])
            put_vector(jacobian[acceleration + i, n:2 * n], 2.0 * rate)
            put_vector(jacobian[acceleration + i, 2 * n:3 * n], phi_q[r])


@njit(cache=True)
def _dynamics_block(ar, rows, selection, phi_q, phi_qq, force, force_q, force_qd, qdd, lam, f, jac, error, jacobian,
                    first):
    """d (module docstring) into ``error`` from row ``first``; with ``jac`` its derivatives into
    columns [q, q̇, q̈, λ, F] of ``jacobian``."""
    n, size = qdd.shape[0], rows.shape[0]
    last = first + n
    balance = ar.mass @ qdd - force
    if jac:
        put_matrix(jacobian[first:last, :n], -force_q)
        put_matrix(jacobian[first:last, n:2 * n], -force_qd)
        put_matrix(jacobian[first:last, 2 * n:3 * n], ar.mass)
    for i in range(size):
        r = rows[i]
        balance += lam[i] * phi_q[r]
        if jac:
            block = jacobian[first:last, :n]
            block += lam[i] * phi_qq[r]
            put_vector(jacobian[first:last, 3 * n + i], phi_q[r])
    for j in range(selection.shape[1]):
        for k in range(n):
            balance[k] -= selection[k, j] * f[j]
            if jac:
                jacobian[first + k, 3 * n + size + j] = -selection[k, j]
    put_vector(error[first:last], balance)


@njit(cache=True)
def constraint_rows(ar, rows, q, qd, qdd, jac):
    """c = [Φ_S; Φq_S q̇; Φq_S q̈ + s_S] over the constraint ``rows`` S and, if ``jac``, ∂c/∂[q, q̇, q̈]
    (3|S| x 3n, else 0 rows)."""
    n, size = q.shape[0], rows.shape[0]
    phi, phi_q, phi_qq = constraint_terms(q, ar.constants, ar.c_kind, ar.c_idx, ar.c_coef, True)
    s_q = velocity_term_gradient(q, qd, ar.constants, ar.c_kind, ar.c_idx) if jac else np.zeros((0, n))
    error = np.empty(3 * size)
    jacobian = np.zeros((3 * size if jac else 0, 3 * n))
    _constraint_block(rows, phi, phi_q, phi_qq, s_q, qd, qdd, jac, error, jacobian, size, 2 * size)
    return error, jacobian


@njit(cache=True)
def step_rows(ar, rows, selection, q, qd, qdd, lam, f, jac):
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E F; Φq_S q̈ + s_S] over the constraint ``rows`` S, with
    E = ``selection`` (n x a) and F = ``f`` (a), and, if ``jac``, ∂e/∂[q, q̇, q̈, λ, F]
    ((3|S| + n) x (3n + |S| + a), else 0 rows)."""
    n, size = q.shape[0], rows.shape[0]
    phi, phi_q, phi_qq = constraint_terms(q, ar.constants, ar.c_kind, ar.c_idx, ar.c_coef, True)
    force, force_q, force_qd = forces(ar, q, qd, jac)
    s_q = velocity_term_gradient(q, qd, ar.constants, ar.c_kind, ar.c_idx) if jac else np.zeros((0, n))
    error = np.empty(3 * size + n)
    jacobian = np.zeros((3 * size + n if jac else 0, 3 * n + size + selection.shape[1]))
    _constraint_block(rows, phi, phi_q, phi_qq, s_q, qd, qdd, jac, error, jacobian, size, 2 * size + n)
    _dynamics_block(ar, rows, selection, phi_q, phi_qq, force, force_q, force_qd, qdd, lam, f, jac, error, jacobian,
                    2 * size)
    return error, jacobian
