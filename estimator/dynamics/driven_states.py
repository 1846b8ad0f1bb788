"""Compiled step-by-step solution of a mechanism whose driven coordinates follow a prescribed motion:
the staged initialization of the factor-graph inverse dynamics (estimator.graph_dynamics.inverse).

With the driven coordinates d fixing the mechanism (k drives = degrees of freedom) and S a maximal
independent subset of the constraint rows (|S| = n − k), the stages of Blanco-Claraco, Leanza and
Reina (2021) reduce, at each time step, to square systems in the free coordinates f:

1. positions:      Φ_S(q) = 0 with q_d = q̄_d                        (Newton on q_f);
2. velocities:     Φq_S[:, f] q̇_f = −Φq_S[:, d] q̇̄_d;
3. accelerations:  Φq_S[:, f] q̈_f = γ_S − Φq_S[:, d] q̈̄_d,  γ = −Φ̇q q̇;
4. forces:         [Φq_Sᵀ | −E_d] [λ_S; Q_d] = Q(q, q̇) − M q̈          (n x n).

The first Newton guess of a step is the Taylor step from the previous solution
(estimator.dynamics.prediction). Every
solve is the complete-pivoting elimination of estimator.linalg.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_matrix, put_vector
from estimator.dynamics.kernels import constraint_rates, constraints, forces
from estimator.dynamics.prediction import predict, taylor_coefficients
from estimator.linalg import solve


@njit(cache=True)
def _newton(ar, q, rows, free, tol, max_iter):
    """Newton on Φ_S(q) = 0 over q[free] in place; returns True when |Φ_S| <= tol."""
    for _ in range(max_iter + 1):
        phi, jac = constraints(ar, q)
        residual = phi[rows]
        if np.max(np.abs(residual)) <= tol:
            return True
        step = solve(np.ascontiguousarray(jac[rows][:, free]), -residual)
        q[free] += step
    return False


@njit(cache=True)
def driven_states(ar, driven, rows, q_start, pos, vel, acc, t, tol, max_iter):
    """q, q̇, q̈ (N, n), λ (N, m; zero on the rows outside S), Q_d (N, k) along the drive samples
    ``pos``, ``vel``, ``acc`` (N, k) at times ``t``, from the assembled ``q_start``, and the index
    of the first step whose position problem did not converge (−1 if none)."""
    count, n, m, k = pos.shape[0], ar.n, ar.c_kind.shape[0], driven.shape[0]
    is_free = np.ones(n, dtype=np.bool_)
    is_free[driven] = False
    free = np.flatnonzero(is_free)
    size = rows.shape[0]
    qs, qds, qdds = np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, n))
    lams, drive_forces = np.zeros((count, m)), np.zeros((count, k))
    q = q_start.copy()
    system = np.zeros((n, n))
    last = np.zeros((1, 3 * n))  # the state of the step before, [q; q̇; q̈]
    for j in range(k):
        system[driven[j], size + j] = -1.0
    for i in range(count):
        q[driven] = pos[i]
        if not _newton(ar, q, rows, free, tol, max_iter):
            return qs, qds, qdds, lams, drive_forces, i
        _, jac = constraints(ar, q)
        jac_s = np.ascontiguousarray(jac[rows])
        jac_f = np.ascontiguousarray(jac_s[:, free])
        jac_d = np.ascontiguousarray(jac_s[:, driven])
        qd = np.zeros(n)
        qd[driven] = vel[i]
        qd[free] = solve(jac_f, -jac_d @ vel[i])
        _, _, gamma = constraint_rates(ar, q, qd)
        qdd = np.zeros(n)
        qdd[driven] = acc[i]
        qdd[free] = solve(jac_f, gamma[rows] - jac_d @ acc[i])
        force, _, _ = forces(ar, q, qd, False)
        put_matrix(system[:, :size], jac_s.T)
        unknowns = solve(system, force - ar.mass @ qdd)
        qs[i], qds[i], qdds[i] = q, qd, qdd
        lams[i, rows] = unknowns[:size]
        drive_forces[i] = unknowns[size:]
        if i + 1 < count:
            put_vector(last[0, :n], q)
            put_vector(last[0, n:2 * n], qd)
            put_vector(last[0, 2 * n:], qdd)
            q = predict(taylor_coefficients(t[i + 1] - t[i]), last, n)[:n]
    return qs, qds, qdds, lams, drive_forces, -1
