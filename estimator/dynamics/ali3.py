"""Index-3 augmented Lagrangian with the trapezoidal rule and velocity/acceleration projections (ALi3).

Bayo and Ledesma (1996); Cuadrado, Cardenal and Bayo (1997). The trapezoidal rule writes
q̇' = (2/h) q' + q̂̇ and q̈' = (4/h²) q' + q̂̈ (q̂̇ = −(2/h) q − q̇, q̂̈ = −(4/h²) q − (4/h) q̇ − q̈),
so the dynamic equilibrium at the new step, scaled by h²/4, is a nonlinear system in q' alone:

    f(q') = (h²/4) [M q̈' + Φqᵀ (λ + α Φ) − Q] = 0,
    f_q ≈ M + (h/2) C + (h²/4) (Φqᵀ α Φq + K),   K = −∂Q/∂q, C = −∂Q/∂q̇,

solved by Newton-Raphson from the Taylor step q + h q̇ + h²/2 q̈ (estimator.dynamics.prediction) with
the multiplier update λ ← λ + α Φ(q') after each iteration. Then

    f_q q̇ = W q̇*,   f_q q̈ = W q̈* − (h²/4) Φqᵀ α Φ̇q q̇,   W = M + (h/2) C + (h²/4) K,

project the trapezoidal velocities and accelerations on the velocity and acceleration constraints.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.blocks import put_vector
from estimator.dynamics.kernels import constraint_rates, constraints, forces
from estimator.dynamics.prediction import predict, taylor_coefficients
from estimator.linalg import solve


@njit(cache=True)
def _tangent(ar, q, qd, h, penalty, jac, state_forces):
    """W and f_q at (q, q̇), plus Q (constant, and W = M, without state-dependent forces)."""
    if state_forces:
        force, dq, dqd = forces(ar, q, qd, True)
        weight = ar.mass - 0.5 * h * dqd - 0.25 * h * h * dq
    else:
        force, weight = ar.q_force, ar.mass
    return weight, weight + (0.25 * h * h * penalty) * (jac.T @ jac), force


@njit(cache=True)
def step(ar, q, qd, qdd, lam, h, penalty, tol, max_iter, state_forces):
    """One ALi3 step from (q, q̇, q̈, λ); returns the new (q, q̇, q̈, λ) and the Newton iterations."""
    c1, c2 = 2.0 / h, 4.0 / (h * h)
    hat_v = -(c1 * q + qd)
    hat_a = -(c2 * q + 2.0 * c1 * qd + qdd)
    n = q.shape[0]
    state = np.empty((1, 3 * n))
    put_vector(state[0, :n], q)
    put_vector(state[0, n:2 * n], qd)
    put_vector(state[0, 2 * n:], qdd)
    qn = predict(taylor_coefficients(h), state, n)[:n]
    phi, jac = constraints(ar, qn)
    iterations = 0
    for iterations in range(1, max_iter + 1):
        v, a = c1 * qn + hat_v, c2 * qn + hat_a
        _, tangent, force = _tangent(ar, qn, v, h, penalty, jac, state_forces)
        residual = 0.25 * h * h * (ar.mass @ a + jac.T @ (lam + penalty * phi) - force)
        dq = solve(tangent, -residual)
        qn += dq
        phi, jac = constraints(ar, qn)
        lam = lam + penalty * phi  # λ_{i+1} = λ_i + α Φ(q_{i+1}); with Φ(q_i) it would oscillate
        if np.max(np.abs(dq)) <= tol:
            break
    weight, tangent, _ = _tangent(ar, qn, c1 * qn + hat_v, h, penalty, jac, state_forces)
    vn = solve(tangent, weight @ (c1 * qn + hat_v))
    _, _, gamma = constraint_rates(ar, qn, vn)
    an = solve(tangent, weight @ (c2 * qn + hat_a) + 0.25 * h * h * penalty * (jac.T @ gamma))
    return qn, vn, an, lam, iterations


@njit(cache=True)
def simulate(ar, q0, qd0, qdd0, h, steps, penalty, tol, max_iter, state_forces):
    """States at steps 0..steps: q, q̇, q̈ (each (steps+1, n)) and the Newton iterations per step."""
    n, m = q0.shape[0], ar.c_kind.shape[0]
    qs, qds, qdds = np.zeros((steps + 1, n)), np.zeros((steps + 1, n)), np.zeros((steps + 1, n))
    iterations = np.zeros(steps + 1, dtype=np.int64)
    q, qd, qdd, lam = q0.copy(), qd0.copy(), qdd0.copy(), np.zeros(m)
    qs[0], qds[0], qdds[0] = q, qd, qdd
    for k in range(1, steps + 1):
        q, qd, qdd, lam, iterations[k] = step(ar, q, qd, qdd, lam, h, penalty, tol, max_iter, state_forces)
        qs[k], qds[k], qdds[k] = q, qd, qdd
    return qs, qds, qdds, iterations
