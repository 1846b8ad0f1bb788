"""The numpy reference forms: second formulations of the product's compiled kernels, written as
separate error functions over separate variables, for the tests (and scripts/bench_factors.py).

- constraints:   Φ̇q = Φqq·q̇;  e = Φ(q),  Φq q̇,  Φq q̈ − γ — the constraint block of the compiled step kernels
  (estimator.factors.step_bundle, estimator.factors.drive_factors);
- dynamics:      e = M q̈ + Φqᵀ λ − Q(q, q̇) [− E F]  (λ as variables; García de Jalón and Bayo,
  ch. 4) — their dynamics rows;
- forward dynamics with λ eliminated:  e = q̈ − q̈*(q, q̇), [q̈*; λ*] = K⁻¹ [Q; γ_S],
  K = [[M, Φq_Sᵀ], [Φq_S, 0]] over an independent subset S of the constraint rows. With
  r = K x − [Q; γ_S], dx* = −K⁻¹ ∂r, so ∂e/∂(q, q̇) = (K⁻¹ ∂r/∂(q, q̇))[:n] and ∂e/∂q̈ = I;
- a prior e = x − x̄, and ``stack``: several error functions over overlapping variables as one;
- body kinematics in natural coordinates: a body-fixed point r = r0 + A (r1 − r0),
  A = (ξ I + η J)/L, and the angle of the body's axis with its rates (sensors.geometry's maps).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.factors.adapter import ErrorFunction
from estimator.factors.constraint_factors import acceleration_constraint_terms, weighted_hessian
from estimator.factors.identity import scaled_identity
from estimator.forces import generalized_force_terms
from estimator.mass import J
from estimator.model import Body, Mechanism


def prior_error(mean: np.ndarray, x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = x − mean; ∂e/∂x = I."""
    return x - mean, [scaled_identity(x.shape[0])] if jac else None


def stack(parts: Sequence[tuple[ErrorFunction, Sequence[int]]], sizes: Sequence[int]) -> ErrorFunction:
    """An error function over variables of dimensions ``sizes``; part (fn, uses) is called with the
    variables listed (by position) in ``uses``. The error is [e_1; e_2; …]; the Jacobian of variable
    i stacks each part's Jacobian, zero where a part does not use variable i."""
    parts = [(fn, tuple(uses)) for fn, uses in parts]
    sizes = tuple(sizes)

    def stacked(*values: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        results = [fn(*[values[i] for i in uses], jac=jac) for fn, uses in parts]
        error = np.concatenate([e for e, _ in results])
        if not jac:
            return error, None
        blocks = [np.zeros((error.shape[0], size)) for size in sizes]
        row = 0
        for (_, uses), (e, part_jac) in zip(parts, results):
            for i, block in zip(uses, part_jac):
                blocks[i][row:row + e.shape[0]] += block
            row += e.shape[0]
        return error, blocks

    return stacked


def jacobian_rate(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Φ̇q = d(Φq)/dt = Φqq · q̇ (m x n), from the assembled Hessian tensor."""
    return constraint_derivatives(mech, q, True)[2] @ np.asarray(qd, float)


def position_constraint_error(mech: Mechanism, q: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = Φ(q) (m); Jacobian Φq."""
    phi, phi_q, _ = constraint_derivatives(mech, q, False)
    return phi, [phi_q] if jac else None


def velocity_constraint_error(mech: Mechanism, q: np.ndarray, qd: np.ndarray,
                              jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = Φq q̇ (m); Jacobians (Φqq·q̇, Φq)."""
    _, phi_q, phi_qq = constraint_derivatives(mech, q, jac)
    error = phi_q @ qd
    return error, [phi_qq @ qd, phi_q] if jac else None


def acceleration_constraint_error(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                                  jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = Φq q̈ − γ(q, q̇) (m); Jacobians (Φqq·q̈ + ∂s/∂q, 2 Φqq·q̇, Φq)."""
    _, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    if not jac:
        return phi_q @ qdd + (phi_qq @ qd) @ qd, None
    return acceleration_constraint_terms(mech, q, qd, qdd, phi_q, phi_qq)


def multiplier_dynamics_error(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, lam: np.ndarray,
                              jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = M q̈ + Φqᵀ λ − Q [N, N·m]; Jacobians wrt (q, q̇, q̈, λ):
    (Σ_r λ_r Φqq_r − ∂Q/∂q, −∂Q/∂q̇, M, Φqᵀ)."""
    _, phi_q, phi_qq = constraint_derivatives(mech, q, jac)
    force, d_q, d_qd = generalized_force_terms(mech, q, qd, jac)
    mass = mech.arrays.mass
    error = mass @ qdd + phi_q.T @ lam - force
    if not jac:
        return error, None
    return error, [weighted_hessian(lam, phi_qq) - d_q, -d_qd, mass, phi_q.T]


def inverse_dynamics_error(mech: Mechanism, selection: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           lam: np.ndarray, f: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = M q̈ + Φqᵀ λ − Q − E F with E = ``selection`` (n x a); Jacobians wrt (q, q̇, q̈, λ, F)."""
    error, jacobians = multiplier_dynamics_error(mech, q, qd, qdd, lam, jac)
    error -= selection @ f
    if not jac:
        return error, None
    return error, [*jacobians, -selection]


def forward_dynamics_error(mech: Mechanism, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                           jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = q̈ − q̈*(q, q̇) [m/s², rad/s²], λ eliminated over the independent constraint ``rows``
    (see the module docstring); Jacobians wrt (q, q̇, q̈)."""
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


def body_point(mech: Mechanism, body: Body, local: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Global position [m] of a body-fixed point with body-frame coordinates ``local`` = (ξ, η):
    r = r0 + A (r1 − r0), A = (ξ I + η J)/L, linear in the natural coordinates."""
    return _body_point(mech, body, local, mech.z(np.asarray(q, float)))


def body_point_rate(mech: Mechanism, body: Body, local: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Velocity (given q̇) or acceleration (given q̈) of a body-fixed point: the same linear map
    applied to the rates, fixed points contributing zero."""
    zd = np.concatenate((np.asarray(qd, float), np.zeros(len(mech.arrays.constants))))
    return _body_point(mech, body, local, zd)


def _body_point(mech: Mechanism, body: Body, local: np.ndarray, z: np.ndarray) -> np.ndarray:
    r0, r1 = z[mech.point_z[body.points[0]]], z[mech.point_z[body.points[1]]]
    a = (local[0] * np.eye(2) + local[1] * J) / body.length
    return r0 + a @ (r1 - r0)


def body_angle(mech: Mechanism, body: Body, q: np.ndarray, qd: np.ndarray | None = None,
               qdd: np.ndarray | None = None) -> tuple[float, float, float]:
    """Angle φ of the body's x axis [rad], ω = u × u̇ / |u|² and α = u × ü / |u|² − 2 (u·u̇) ω / |u|²."""
    p0, p1 = body.points[:2]

    def segment(vector: np.ndarray | None, constants: np.ndarray) -> np.ndarray:
        if vector is None:
            return np.zeros(2)
        z = np.concatenate((np.asarray(vector, float), constants))
        return z[mech.point_z[p1]] - z[mech.point_z[p0]]

    zeros = np.zeros(len(mech.arrays.constants))
    u, ud, udd = segment(q, mech.arrays.constants), segment(qd, zeros), segment(qdd, zeros)
    u2 = u @ u
    omega = (u[0] * ud[1] - u[1] * ud[0]) / u2
    alpha = (u[0] * udd[1] - u[1] * udd[0]) / u2 - 2.0 * (u @ ud) * omega / u2
    return float(np.arctan2(u[1], u[0])), float(omega), float(alpha)


def point_positions(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Positions of all points (fixed ones included), shape (points, 2) [m]."""
    return mech.z(q)[mech.point_z]
