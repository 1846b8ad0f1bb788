"""Forward dynamics with Lagrange multipliers, Baumgarte stabilization and projection.

    [M  Φqᵀ] [q̈]   [Q                          ]
    [Φq  0 ] [λ] = [γ − 2 ξ ω Φ̇ − ω² Φ          ],   Φ̇ = Φq q̇,  γ = −Φ̇q q̇

(Baumgarte 1972; García de Jalón and Bayo, ch. 5), integrated by an explicit Runge-Kutta method
on y = [q, q̇]. After each step the positions are projected on Φ = 0 (minimum-norm Newton) and the
velocities on Φq q̇ = 0, so the drift Baumgarte leaves is removed too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_vector
from estimator.dynamics.kernels import (constraint_rates, constraints, forces, rk_combine, rk_stage_state, rk_stages,
                                        saddle_solve)


@njit(cache=True)
def accelerations(ar, q, qd, omega, xi):
    """q̈ and λ of the Baumgarte-stabilized index-1 equations."""
    phi, jac, gamma = constraint_rates(ar, q, qd)
    force, _, _ = forces(ar, q, qd, False)
    rhs = gamma - 2.0 * xi * omega * (jac @ qd) - omega * omega * phi
    return saddle_solve(ar.mass, jac, force, rhs)


@njit(cache=True)
def _derivative(y, context):
    ar, omega, xi = context
    n = y.shape[0] // 2
    qdd, _ = accelerations(ar, y[:n], y[n:], omega, xi)
    return np.concatenate((y[n:], qdd))


@njit(cache=True)
def _rk_step(y, k0, h, a, b, context):
    """One explicit Runge-Kutta step (tableau a, b) of y' = [q̇, q̈] of the stabilized equations; the first
    stage ``k0`` is given (the caller has it: the last output's rates), which saves an evaluation a
    step. A loop of its own: numba caches no step shared through an argument or a closure."""
    k = rk_stages(k0, b)
    for i in range(1, b.shape[0]):
        put_vector(k[i], _derivative(rk_stage_state(y, k, h, a, i), context))
    return rk_combine(y, k, h, b)


@njit(cache=True)
def project(ar, q, qd, tol, max_iter):
    """Positions onto Φ(q) = 0 (minimum-norm Newton steps), then velocities onto Φq q̇ = 0."""
    n = q.shape[0]
    eye = np.eye(n)
    q = q.copy()
    for _ in range(max_iter):
        phi, jac = constraints(ar, q)
        if np.max(np.abs(phi)) <= tol:
            break
        step, _ = saddle_solve(eye, jac, np.zeros(n), -phi)
        q += step
    _, jac = constraints(ar, q)
    qd, _ = saddle_solve(eye, jac, qd, np.zeros(jac.shape[0]))
    return q, qd


@njit(cache=True)
def simulate(ar, q0, qd0, h, steps, a, b, omega, xi, projection, tol):
    """States at steps 0..steps: q, q̇, q̈ (each (steps+1, n))."""
    n = q0.shape[0]
    qs, qds, qdds = np.zeros((steps + 1, n)), np.zeros((steps + 1, n)), np.zeros((steps + 1, n))
    y = np.concatenate((q0, qd0))
    context = (ar, omega, xi)
    for k in range(steps + 1):
        if k > 0:
            y = _rk_step(y, np.concatenate((y[n:], qdds[k - 1])), h, a, b, context)
            if projection:
                q, qd = project(ar, y[:n], y[n:], tol, 10)
                y = np.concatenate((q, qd))
        put_vector(qs[k], y[:n])
        put_vector(qds[k], y[n:])
        qdd, _ = accelerations(ar, y[:n], y[n:], omega, xi)
        put_vector(qdds[k], qdd)
    return qs, qds, qdds
