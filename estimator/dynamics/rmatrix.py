"""Forward dynamics in independent coordinates through the R matrix.

With independent coordinates z = q[I] and dependent d = q[D] (García de Jalón and Bayo, ch. 5):
positions solve Φ(q) = 0 for d given z (Newton), velocities q̇ = R ż with Φq R = 0, R[I] = 1,
accelerations q̈ = R z̈ + S with Φq S = γ, S[I] = 0, and the equations of motion reduce to

    Rᵀ M R z̈ = Rᵀ (Q − M S),

integrated on y = [z, ż] by an explicit Runge-Kutta method. The independent coordinates are
chosen again at every step by QR with column pivoting on Φq (a crank's x coordinate stops being
a good one when the crank turns); the step restarts from the exact q, q̇ so the switch is exact.
Redundant constraints leave Φq[:, D] with more rows than columns: it is solved through the normal
equations.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_vector
from estimator.dynamics.kernels import constraint_rates, constraints, forces, rk_combine, rk_stage_state, rk_stages
from estimator.linalg import pivot_columns, solve


@njit(cache=True)
def _dependent_solve(jac_d, rhs):
    """x with Φq[:, D] x = rhs (consistent, full column rank), via the normal equations."""
    return solve(jac_d.T @ jac_d, jac_d.T @ rhs)


@njit(cache=True)
def split(ar, q, rank_tol):
    """Independent and dependent coordinate indices at q."""
    _, jac = constraints(ar, q)
    dep = np.sort(pivot_columns(jac, rank_tol))
    is_dep = np.zeros(q.shape[0], dtype=np.bool_)
    is_dep[dep] = True
    return np.flatnonzero(~is_dep), dep


@njit(cache=True)
def positions(ar, q_guess, z, indep, dep, tol, max_iter):
    """q with q[I] = z and Φ(q) = 0, Newton on the dependent coordinates from ``q_guess``."""
    q = q_guess.copy()
    q[indep] = z
    for _ in range(max_iter):
        phi, jac = constraints(ar, q)
        if np.max(np.abs(phi)) <= tol:
            break
        q[dep] -= _dependent_solve(np.ascontiguousarray(jac[:, dep]), phi)
    return q


@njit(cache=True)
def accelerations(ar, q, zd, indep, dep):
    """q̇, q̈ and z̈ at (q, ż) from Rᵀ M R z̈ = Rᵀ (Q − M S)."""
    _, jac = constraints(ar, q)
    jac_d = np.ascontiguousarray(jac[:, dep])
    jac_dt = np.ascontiguousarray(jac_d.T)
    normal = jac_dt @ jac_d  # Φq[:, D] has full column rank: R and S come from its normal equations
    r = np.zeros((q.shape[0], indep.shape[0]))
    for j in range(indep.shape[0]):
        r[indep[j], j] = 1.0
        r[dep, j] = -solve(normal, jac_dt @ np.ascontiguousarray(jac[:, indep[j]]))
    qd = r @ zd
    _, _, gamma = constraint_rates(ar, q, qd)
    s = np.zeros(q.shape[0])
    s[dep] = solve(normal, jac_dt @ gamma)
    force, _, _ = forces(ar, q, qd, False)
    rt = np.ascontiguousarray(r.T)
    zdd = solve(rt @ ar.mass @ r, rt @ (force - ar.mass @ s))
    return qd, r @ zdd + s, zdd


@njit(cache=True)
def _derivative(y, context):
    ar, work, indep, dep, tol = context
    f = indep.shape[0]
    q = positions(ar, work, y[:f], indep, dep, tol, 20)
    put_vector(work, q)  # the next Newton solve starts here
    _, _, zdd = accelerations(ar, q, y[f:], indep, dep)
    return np.concatenate((y[f:], zdd))


@njit(cache=True)
def _rk_step(y, k0, h, a, b, context):
    """One explicit Runge-Kutta step (tableau a, b) of y' = [ż, z̈] of the independent coordinates; the first
    stage ``k0`` is given (the caller has it: the last output's rates), which saves an evaluation a
    step. A loop of its own: numba caches no step shared through an argument or a closure."""
    k = rk_stages(k0, b)
    for i in range(1, b.shape[0]):
        put_vector(k[i], _derivative(rk_stage_state(y, k, h, a, i), context))
    return rk_combine(y, k, h, b)


@njit(cache=True)
def simulate(ar, q0, qd0, h, steps, a, b, tol, rank_tol):
    """States at steps 0..steps: q, q̇, q̈ (each (steps+1, n))."""
    n = q0.shape[0]
    qs, qds, qdds = np.zeros((steps + 1, n)), np.zeros((steps + 1, n)), np.zeros((steps + 1, n))
    q, qd = q0.copy(), qd0.copy()
    indep, dep = split(ar, q, rank_tol)
    _, qdd, _ = accelerations(ar, q, qd[indep], indep, dep)
    qs[0], qds[0], qdds[0] = q, qd, qdd
    for k in range(1, steps + 1):
        indep, dep = split(ar, q, rank_tol)
        f = indep.shape[0]
        work = q.copy()
        y = _rk_step(np.concatenate((q[indep], qd[indep])), np.concatenate((qd[indep], qdd[indep])), h, a, b,
                     (ar, work, indep, dep, tol))
        q = positions(ar, work, y[:f], indep, dep, tol, 20)
        qd, qdd, _ = accelerations(ar, q, y[f:], indep, dep)
        put_vector(qs[k], q)
        put_vector(qds[k], qd)
        put_vector(qdds[k], qdd)
    return qs, qds, qdds
