"""Constraint equations Φ(q) = 0, their Jacobian Φq and Hessians Φqq, analytic and compiled.

Each row r uses nine entries v = z[c_idx[r]] of the extended vector z = [q, constants]:

- ``LINEAR``:   φ = Σ c_k v_k  (body-frame points, points on fixed lines, fixed coordinates);
- ``DISTANCE``: φ = u·u − L²,  u = r_b − r_a, with v = [r_a, r_b, …];
- ``ANGLE``:    φ = uᵀ B(t) w = cos t (u × w) − sin t (u · w),  u = r_b − r_a, w = r_d − r_c,
  t = v_8, zero when w is u rotated by t (relative angles; with t ≡ 0 a slider: r_c on line a-b).

Derivatives are taken in the five local variables (u, w, t) and mapped to v (u = r_b − r_a, …),
then scattered on the columns of z that are coordinates (index < n). Velocity and acceleration
terms follow from the Hessians: Φ̇q = Σ_k Φqq[:, :, k] q̇_k and the acceleration right-hand side
γ = −Φ̇q q̇ (scleronomic constraints, Φt = 0).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.model import ANGLE, CONSTRAINT_WIDTH, DISTANCE, LINEAR, Mechanism

# ∂(ux, uy, wx, wy, t)/∂v
_LOCAL_MAP = np.zeros((5, CONSTRAINT_WIDTH))
_LOCAL_MAP[0, 0], _LOCAL_MAP[0, 2] = -1.0, 1.0
_LOCAL_MAP[1, 1], _LOCAL_MAP[1, 3] = -1.0, 1.0
_LOCAL_MAP[2, 4], _LOCAL_MAP[2, 6] = -1.0, 1.0
_LOCAL_MAP[3, 5], _LOCAL_MAP[3, 7] = -1.0, 1.0
_LOCAL_MAP[4, 8] = 1.0


@njit(cache=True)
def _row(kind: int, v: np.ndarray, c: np.ndarray, g: np.ndarray, h: np.ndarray, hessian: bool) -> float:
    """φ of one row; fills its gradient g (9) and, if asked, its Hessian h (9x9) over v."""
    if kind == LINEAR:
        phi = 0.0
        for k in range(CONSTRAINT_WIDTH):
            phi += c[k] * v[k]
            g[k] = c[k]
        if hessian:
            h[:, :] = 0.0
        return phi
    g5 = np.zeros(5)
    h5 = np.zeros((5, 5))
    ux, uy = v[2] - v[0], v[3] - v[1]
    if kind == DISTANCE:
        phi = ux * ux + uy * uy - c[0]
        g5[0], g5[1] = 2.0 * ux, 2.0 * uy
        h5[0, 0], h5[1, 1] = 2.0, 2.0
    else:  # ANGLE: φ = uᵀ B w, B = [[-s, c], [-c, -s]], B' = dB/dt = [[-c, -s], [s, -c]], B'' = -B
        wx, wy = v[6] - v[4], v[7] - v[5]
        s, cs = np.sin(v[8]), np.cos(v[8])
        bw_x, bw_y = -s * wx + cs * wy, -cs * wx - s * wy  # B w
        btu_x, btu_y = -s * ux - cs * uy, cs * ux - s * uy  # Bᵀ u
        dbw_x, dbw_y = -cs * wx - s * wy, s * wx - cs * wy  # B' w
        dbtu_x, dbtu_y = -cs * ux + s * uy, -s * ux - cs * uy  # B'ᵀ u
        phi = ux * bw_x + uy * bw_y
        g5[0], g5[1], g5[2], g5[3] = bw_x, bw_y, btu_x, btu_y
        g5[4] = ux * dbw_x + uy * dbw_y
        h5[0, 2], h5[0, 3], h5[1, 2], h5[1, 3] = -s, cs, -cs, -s
        h5[0, 4], h5[1, 4], h5[2, 4], h5[3, 4] = dbw_x, dbw_y, dbtu_x, dbtu_y
        h5[4, 4] = -phi
        for a in range(5):
            for b in range(a):
                h5[a, b] = h5[b, a]
    for k in range(CONSTRAINT_WIDTH):
        acc = 0.0
        for a in range(5):
            acc += _LOCAL_MAP[a, k] * g5[a]
        g[k] = acc
    if hessian:
        for k in range(CONSTRAINT_WIDTH):
            for l in range(CONSTRAINT_WIDTH):
                acc = 0.0
                for a in range(5):
                    if _LOCAL_MAP[a, k] != 0.0:
                        for b in range(5):
                            acc += _LOCAL_MAP[a, k] * h5[a, b] * _LOCAL_MAP[b, l]
                h[k, l] = acc
    return phi


@njit(cache=True)
def _assemble(q, qd, constants, c_kind, c_idx, c_coef, hessian, rates):
    """Φ, Φq, Φqq (if ``hessian``) and γ = −q̇ᵀ Φqq q̇ per row (if ``rates``, from local Hessians)."""
    n, m = q.shape[0], c_kind.shape[0]
    z = np.concatenate((q, constants))
    zd = np.concatenate((qd, np.zeros(constants.shape[0]))) if rates else z
    phi = np.empty(m)
    jac = np.zeros((m, n))
    hess = np.zeros((m, n, n) if hessian else (0, 0, 0))
    gamma = np.zeros(m if rates else 0)
    v = np.empty(CONSTRAINT_WIDTH)
    g = np.empty(CONSTRAINT_WIDTH)
    h = np.empty((CONSTRAINT_WIDTH, CONSTRAINT_WIDTH))
    for r in range(m):
        idx = c_idx[r]
        for k in range(CONSTRAINT_WIDTH):
            v[k] = z[idx[k]]
        phi[r] = _row(c_kind[r], v, c_coef[r], g, h, hessian or rates)
        for k in range(CONSTRAINT_WIDTH):
            if idx[k] < n:
                jac[r, idx[k]] += g[k]
                if hessian:
                    for l in range(CONSTRAINT_WIDTH):
                        if idx[l] < n:
                            hess[r, idx[k], idx[l]] += h[k, l]
        if rates and c_kind[r] != LINEAR:
            acc = 0.0
            for k in range(CONSTRAINT_WIDTH):
                for l in range(CONSTRAINT_WIDTH):
                    acc += zd[idx[k]] * h[k, l] * zd[idx[l]]
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


def constraint_values(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Φ(q), shape (m,)."""
    a = mech.arrays
    return constraint_terms(np.asarray(q, float), a.constants, a.c_kind, a.c_idx, a.c_coef, False)[0]


def constraint_jacobian(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Φq(q), shape (m, n)."""
    a = mech.arrays
    return constraint_terms(np.asarray(q, float), a.constants, a.c_kind, a.c_idx, a.c_coef, False)[1]


def constraint_hessians(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Φqq(q), shape (m, n, n): the Hessian of every row."""
    a = mech.arrays
    return constraint_terms(np.asarray(q, float), a.constants, a.c_kind, a.c_idx, a.c_coef, True)[2]


def jacobian_rate(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Φ̇q = d(Φq)/dt = Φqq · q̇, shape (m, n)."""
    return constraint_hessians(mech, q) @ np.asarray(qd, float)


def acceleration_rhs(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """γ = −Φ̇q q̇: the right-hand side of the acceleration constraints Φq q̈ = γ."""
    a = mech.arrays
    return constraint_rate_terms(np.asarray(q, float), np.asarray(qd, float), a.constants, a.c_kind, a.c_idx,
                                 a.c_coef)[2]
