"""Constraint equations Φ(q) = 0, their Jacobian Φq and Hessians Φqq, analytic and compiled.

Each row r uses nine entries v = z[c_idx[r]] of the extended vector z = [q, constants]:

- ``LINEAR``:   φ = Σ c_k v_k  (body-frame points, points on fixed lines, fixed coordinates);
- ``DISTANCE``: φ = u·u − L²,  u = r_b − r_a, with v = [r_a, r_b, …];
- ``ANGLE``:    φ = uᵀ B(t) w = cos t (u × w) − sin t (u · w),  u = r_b − r_a, w = r_d − r_c,
  t = v_8, zero when w is u rotated by t (relative angles; with t ≡ 0 a slider: r_c on line a-b).

Derivatives are taken in the five local variables (u, w, t); each v_k enters exactly one of them
with a sign (u = r_b − r_a, …), which maps them to v, and v to the columns of z that are
coordinates (index < n). Velocity and acceleration
terms follow from the Hessians: Φ̇q = Σ_k Φqq[:, :, k] q̇_k and the acceleration right-hand side
γ = −Φ̇q q̇ (scleronomic constraints, Φt = 0).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.model import ANGLE, CONSTRAINT_WIDTH, DISTANCE, LINEAR, Mechanism

# v_k enters exactly one local variable (ux, uy, wx, wy, t), with a sign: u = r_b − r_a, w = r_d − r_c.
_LOCAL_OF = np.array([0, 1, 0, 1, 2, 3, 2, 3, 4])
_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0])


@njit(cache=True)
def _local_row(kind, v, c, g5, h5):
    """φ of a DISTANCE or ANGLE row; fills its gradient g5 and Hessian h5 over (ux, uy, wx, wy, t)."""
    g5[:] = 0.0
    h5[:, :] = 0.0
    ux, uy = v[2] - v[0], v[3] - v[1]
    if kind == DISTANCE:
        g5[0], g5[1] = 2.0 * ux, 2.0 * uy
        h5[0, 0], h5[1, 1] = 2.0, 2.0
        return ux * ux + uy * uy - c[0]
    # ANGLE: φ = uᵀ B w, B = [[-s, c], [-c, -s]], B' = dB/dt = [[-c, -s], [s, -c]], B'' = -B
    wx, wy = v[6] - v[4], v[7] - v[5]
    s, cs = np.sin(v[8]), np.cos(v[8])
    g5[0], g5[1] = -s * wx + cs * wy, -cs * wx - s * wy  # B w
    g5[2], g5[3] = -s * ux - cs * uy, cs * ux - s * uy  # Bᵀ u
    dbw_x, dbw_y = -cs * wx - s * wy, s * wx - cs * wy  # B' w
    g5[4] = ux * dbw_x + uy * dbw_y
    phi = ux * g5[0] + uy * g5[1]
    h5[0, 2], h5[0, 3], h5[1, 2], h5[1, 3] = -s, cs, -cs, -s
    h5[0, 4], h5[1, 4] = dbw_x, dbw_y
    h5[2, 4], h5[3, 4] = -cs * ux + s * uy, -s * ux - cs * uy  # B'ᵀ u
    h5[4, 4] = -phi
    for a in range(5):
        for b in range(a):
            h5[a, b] = h5[b, a]
    return phi


@njit(cache=True)
def _assemble(q, qd, constants, c_kind, c_idx, c_coef, hessian, rates):
    """Φ, Φq, Φqq (if ``hessian``) and γ = −q̇ᵀ Φqq q̇ per row (if ``rates``)."""
    n, m = q.shape[0], c_kind.shape[0]
    z = np.concatenate((q, constants))
    zd = np.concatenate((qd, np.zeros(constants.shape[0]))) if rates else z
    phi = np.empty(m)
    jac = np.zeros((m, n))
    hess = np.zeros((m, n, n) if hessian else (0, 0, 0))
    gamma = np.zeros(m if rates else 0)
    v = np.empty(CONSTRAINT_WIDTH)
    g5 = np.empty(5)
    h5 = np.empty((5, 5))
    rate5 = np.empty(5)
    for r in range(m):
        idx = c_idx[r]
        if c_kind[r] == LINEAR:
            acc = 0.0
            for k in range(CONSTRAINT_WIDTH):
                acc += c_coef[r, k] * z[idx[k]]
                if idx[k] < n:
                    jac[r, idx[k]] += c_coef[r, k]
            phi[r] = acc
            continue
        for k in range(CONSTRAINT_WIDTH):
            v[k] = z[idx[k]]
        phi[r] = _local_row(c_kind[r], v, c_coef[r], g5, h5)
        for k in range(CONSTRAINT_WIDTH):
            if idx[k] < n:
                jac[r, idx[k]] += _SIGN[k] * g5[_LOCAL_OF[k]]
                if hessian:
                    for l in range(CONSTRAINT_WIDTH):
                        if idx[l] < n:
                            hess[r, idx[k], idx[l]] += _SIGN[k] * _SIGN[l] * h5[_LOCAL_OF[k], _LOCAL_OF[l]]
        if rates:
            rate5[:] = 0.0
            for k in range(CONSTRAINT_WIDTH):
                rate5[_LOCAL_OF[k]] += _SIGN[k] * zd[idx[k]]
            acc = 0.0
            for a in range(5):
                for b in range(5):
                    acc += rate5[a] * h5[a, b] * rate5[b]
            gamma[r] = -acc
    return phi, jac, hess, gamma


@njit(cache=True)
def constraint_terms(q, constants, c_kind, c_idx, c_coef, hessian):
    """Φ (m), Φq (m x n) and, if ``hessian``, Φqq (m x n x n, else empty) at q."""
    phi, jac, hess, _ = _assemble(q, q[:0], constants, c_kind, c_idx, c_coef, hessian, False)
    return phi, jac, hess


@njit(cache=True)
def constraint_rate_terms(q, qd, constants, c_kind, c_idx, c_coef):
    """Φ, Φq and the acceleration right-hand side γ = −Φ̇q q̇ at (q, q̇), without the n x n x m tensor."""
    phi, jac, _, gamma = _assemble(q, qd, constants, c_kind, c_idx, c_coef, False, True)
    return phi, jac, gamma


@njit(cache=True)
def velocity_term_gradient(q, qd, constants, c_kind, c_idx):
    """∂s/∂q (m x n) of s_r = q̇ᵀ Φqq_r(q) q̇ at fixed q̇, for the Jacobian of the acceleration constraints.

    ∂s/∂q needs third derivatives of Φ. Linear and distance rows have constant Hessians; an angle row
    φ = uᵀ B(t) w (estimator.constraints) has them only through t, so they matter only when t is a
    coordinate (relative-angle coordinates). For those rows, with B' = dB/dt and B'' = −B,
    
        s = 2 u̇ᵀ B ẇ + 2 ṫ (u̇ᵀ B' w + uᵀ B' ẇ) − ṫ² uᵀ B w,
        ∂s/∂u = 2 ṫ B' ẇ − ṫ² B w,   ∂s/∂w = 2 ṫ B'ᵀ u̇ − ṫ² Bᵀ u,
        ∂s/∂t = 2 u̇ᵀ B' ẇ − 2 ṫ (u̇ᵀ B w + uᵀ B ẇ) − ṫ² uᵀ B' w.
    """
    n, m = q.shape[0], c_kind.shape[0]
    out = np.zeros((m, n))
    z = np.concatenate((q, constants))
    zd = np.concatenate((qd, np.zeros(constants.shape[0])))
    gv = np.empty(9)
    for r in range(m):
        idx = c_idx[r]
        if c_kind[r] != ANGLE or idx[8] >= n:
            continue
        ux, uy = z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]
        wx, wy = z[idx[6]] - z[idx[4]], z[idx[7]] - z[idx[5]]
        udx, udy = zd[idx[2]] - zd[idx[0]], zd[idx[3]] - zd[idx[1]]
        wdx, wdy = zd[idx[6]] - zd[idx[4]], zd[idx[7]] - zd[idx[5]]
        td = zd[idx[8]]
        s, c = np.sin(z[idx[8]]), np.cos(z[idx[8]])
        bw_x, bw_y = -s * wx + c * wy, -c * wx - s * wy  # B w
        bwd_x, bwd_y = -s * wdx + c * wdy, -c * wdx - s * wdy  # B ẇ
        dbw_x, dbw_y = -c * wx - s * wy, s * wx - c * wy  # B' w
        dbwd_x, dbwd_y = -c * wdx - s * wdy, s * wdx - c * wdy  # B' ẇ
        btu_x, btu_y = -s * ux - c * uy, c * ux - s * uy  # Bᵀ u
        dbtud_x, dbtud_y = -c * udx + s * udy, -s * udx - c * udy  # B'ᵀ u̇
        gu_x, gu_y = 2.0 * td * dbwd_x - td * td * bw_x, 2.0 * td * dbwd_y - td * td * bw_y
        gw_x, gw_y = 2.0 * td * dbtud_x - td * td * btu_x, 2.0 * td * dbtud_y - td * td * btu_y
        gt = (2.0 * (udx * dbwd_x + udy * dbwd_y) - 2.0 * td * (udx * bw_x + udy * bw_y + ux * bwd_x + uy * bwd_y)
              - td * td * (ux * dbw_x + uy * dbw_y))
        gv[0], gv[1], gv[2], gv[3] = -gu_x, -gu_y, gu_x, gu_y
        gv[4], gv[5], gv[6], gv[7] = -gw_x, -gw_y, gw_x, gw_y
        gv[8] = gt
        for k in range(9):
            if idx[k] < n:
                out[r, idx[k]] += gv[k]
    return out


@njit(cache=True)
def angle_coordinates(q, constants, c_kind, c_idx):
    """The relative-angle coordinates (ANGLE rows whose t is a coordinate) and their geometric
    angles α ∈ (−π, π] from u to w at q. The row φ = |u||w| sin(α − t) also vanishes at t = α + π
    (w turned half a turn): only t ≡ α (mod 2π) is the geometry."""
    n = q.shape[0]
    z = np.concatenate((q, constants))
    rows = np.flatnonzero((c_kind == ANGLE) & (c_idx[:, 8] < n))
    alpha = np.empty(rows.shape[0])
    for k in range(rows.shape[0]):
        idx = c_idx[rows[k]]
        ux, uy = z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]
        wx, wy = z[idx[6]] - z[idx[4]], z[idx[7]] - z[idx[5]]
        alpha[k] = np.arctan2(ux * wy - uy * wx, ux * wx + uy * wy)
    return c_idx[rows, 8], alpha


@njit(cache=True)
def turn_limited_fraction(q, step, constants, c_kind, c_idx, max_turn):
    """The largest fraction f ≤ 1 of a step δq that moves the second end of no DISTANCE row's
    segment u by more than sin(max_turn) |u| relative to the first (f |δu| ≤ sin T |u|): the
    segment then turns by at most T = ``max_turn`` [rad] and changes its length by at most sin T."""
    z = np.concatenate((q, constants))
    dz = np.concatenate((step, np.zeros(constants.shape[0])))
    bound = np.sin(max_turn) ** 2
    fraction = 1.0
    for r in range(c_kind.shape[0]):
        if c_kind[r] != DISTANCE:
            continue
        idx = c_idx[r]
        ux, uy = z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]
        dux, duy = dz[idx[2]] - dz[idx[0]], dz[idx[3]] - dz[idx[1]]
        moved = dux * dux + duy * duy
        if moved > bound * (ux * ux + uy * uy):
            fraction = min(fraction, np.sqrt(bound * (ux * ux + uy * uy) / moved))
    return fraction


def constraint_derivatives(mech: Mechanism, q: np.ndarray,
                           hessian: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Φ, Φq, Φqq) at q from one call of the compiled kernel (Φqq empty unless ``hessian``)."""
    a = mech.arrays
    return constraint_terms(np.asarray(q, float), a.constants, a.c_kind, a.c_idx, a.c_coef, hessian)


def constraint_values(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Φ(q), shape (m,)."""
    return constraint_derivatives(mech, q)[0]


def constraint_jacobian(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Φq(q), shape (m, n)."""
    return constraint_derivatives(mech, q)[1]


def acceleration_rhs(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """γ = −Φ̇q q̇: the right-hand side of the acceleration constraints Φq q̈ = γ."""
    a = mech.arrays
    return constraint_rate_terms(np.asarray(q, float), np.asarray(qd, float), a.constants, a.c_kind, a.c_idx,
                                 a.c_coef)[2]
