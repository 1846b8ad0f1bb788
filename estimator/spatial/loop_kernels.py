"""Numba kernels of the loop closures (the equations of estimator.spatial.loops): the tree's world-frame
motion, the tracked points and directions with their Jacobian columns, Φ, Φq, Φ̇q, Φ̈q, and the weighted
Hessian Σ λ_r ∂²Φ_r/∂q².

Motion (Müller eqs. 70b–d, 104), per body i after its parent: Cᵢ = C_λ Bᵢ exp(ⁱXᵢ qᵢ), Jᵢ = Ad_{Cᵢ} ⁱXᵢ,
Vᵢ = V_λ + Jᵢ q̇ᵢ, J̇ᵢ = [Vᵢ, Jᵢ], V̇ᵢ = V̇_λ + Jᵢ q̈ᵢ + J̇ᵢ q̇ᵢ, J̈ᵢ = [V̇ᵢ, Jᵢ] + [Vᵢ, J̇ᵢ] (eq. 113).
A tracked point x of body b (a direction: the same without the v terms) and its columns over the joints j
that move b: gⱼ = vⱼ + ωⱼ × x, ġⱼ = v̇ⱼ + ω̇ⱼ × x + ωⱼ × ẋ, g̈ⱼ = v̈ⱼ + ω̈ⱼ × x + 2 ω̇ⱼ × ẋ + ωⱼ × ẍ.

Weighted Hessian: for joints a and c that both move x's body, a an ancestor of c or c itself (a ≤ c: a
parent's index is below its children's), ∂²x/∂q_a∂q_c = ω_a × g_c (∂Jⱼ/∂q_a = [J_a, Jⱼ] for a before j,
and Jacobi's identity). So a point row weighted by λ adds λ · (ω_a × g_c) at (a, c) and (c, a); a product
row u · w adds λ (H_u · w + u · H_w + g_uᵀ g_w + g_wᵀ g_u). The tracks' weights y (λ w on u, λ u on w,
± λ on a point's component) gather the first two terms, one pass per track.

Layout: a workspace row is the packed model row (ops.G_WIDTH) followed by L_REL (the joint's relative
configuration), L_POSE (Cᵢ), L_V, L_A (Vᵢ, V̇ᵢ), L_J (Jᵢ, J̇ᵢ, J̈ᵢ: 18) and L_X (scratch); a track row is
(body, 1 for a point or 0 for a direction, the local vector); a constraint row is (kind, track A, track B,
component): kind 0 the component of x_A − x_B, kind 1 the product u_A · w_B. The tracks' values and columns
go to ``values`` (tracks, 3 levels, 3, n + 1): columns 0..n−1 the Jacobian columns, column n the value.
Compiled without numba's runtime (``_nrt=False``, as the dynamics kernels, ops): nothing allocates.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import G_KIND, G_PARENT, G_WIDTH, bracket, compose, joint_transform, set_screw, to_parent

L_REL, L_POSE, L_V, L_A, L_J, L_X, L_WIDTH = (G_WIDTH + offset for offset in (0, 12, 24, 30, 36, 54, 60))
POINT_ROW, PRODUCT_ROW = 0, 1


@njit(cache=True, inline="always")
def _cross_into(a: np.ndarray, b: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out += scale · a × b (3-vectors)."""
    out[0] += scale * (a[1] * b[2] - a[2] * b[1])
    out[1] += scale * (a[2] * b[0] - a[0] * b[2])
    out[2] += scale * (a[0] * b[1] - a[1] * b[0])


@njit(cache=True, _nrt=False)
def motion_kernel(lw: np.ndarray, state: np.ndarray) -> None:
    """Per body: Cᵢ, Vᵢ, V̇ᵢ, Jᵢ, J̇ᵢ, J̈ᵢ in world components (module docstring); state rows q, q̇, q̈."""
    for i in range(lw.shape[0]):
        d = lw[i]
        p, kind = int(d[G_PARENT]), int(d[G_KIND])
        rel, pose = d[L_REL:L_REL + 12], d[L_POSE:L_POSE + 12]
        v, a, jac, rate, accel = d[L_V:L_V + 6], d[L_A:L_A + 6], d[L_J:L_J + 6], d[L_J + 6:L_J + 12], \
            d[L_J + 12:L_J + 18]
        joint_transform(kind, d, state[0, i], rel)
        if p < 0:
            for r in range(12):
                pose[r] = rel[r]
        else:
            compose(lw[p, L_POSE:L_POSE + 12], rel, pose)
        x = d[L_X:L_X + 6]
        set_screw(kind, d, x)
        to_parent(pose, x, jac)
        for r in range(6):
            v[r] = (0.0 if p < 0 else lw[p, L_V + r]) + jac[r] * state[1, i]
            rate[r] = accel[r] = 0.0
        bracket(v, jac, 1.0, rate)
        for r in range(6):
            a[r] = (0.0 if p < 0 else lw[p, L_A + r]) + jac[r] * state[2, i] + rate[r] * state[1, i]
        bracket(a, jac, 1.0, accel)
        bracket(v, rate, 1.0, accel)


@njit(cache=True, _nrt=False)
def track_kernel(lw: np.ndarray, tracks: np.ndarray, levels: int, values: np.ndarray) -> None:
    """Each track's x, ẋ, ẍ and its columns g, ġ, g̈ at ``levels`` levels (module docstring) into
    ``values``, after motion_kernel."""
    n = lw.shape[0]
    for t in range(tracks.shape[0]):
        out = values[t]
        for level in range(3):
            for c in range(3):
                for j in range(n + 1):
                    out[level, c, j] = 0.0
        b, point, local = int(tracks[t, 0]), tracks[t, 1], tracks[t, 2:5]
        if b < 0:
            for c in range(3):
                out[0, c, n] = local[c]
            continue
        d = lw[b]
        pose, v, a = d[L_POSE:L_POSE + 12], d[L_V:L_V + 6], d[L_A:L_A + 6]
        x, xd, xdd = out[0, :, n], out[1, :, n], out[2, :, n]
        for c in range(3):
            x[c] = pose[3 * c] * local[0] + pose[3 * c + 1] * local[1] + pose[3 * c + 2] * local[2] \
                + point * pose[9 + c]
            xd[c] = point * v[3 + c]
            xdd[c] = point * a[3 + c]
        _cross_into(v, x, 1.0, xd)
        _cross_into(a, x, 1.0, xdd)
        _cross_into(v, xd, 1.0, xdd)
        j = b
        while j >= 0:
            col = lw[j, L_J:L_J + 18]
            g0, g1, g2 = out[0, :, j], out[1, :, j], out[2, :, j]
            _cross_into(col[0:3], x, 1.0, g0)
            _cross_into(col[6:9], x, 1.0, g1)
            _cross_into(col[0:3], xd, 1.0, g1)
            for c in range(3):
                g0[c] += point * col[3 + c]
                g1[c] += point * col[9 + c]
            if levels > 2:
                _cross_into(col[12:15], x, 1.0, g2)
                _cross_into(col[6:9], xd, 2.0, g2)
                _cross_into(col[0:3], xdd, 1.0, g2)
                for c in range(3):
                    g2[c] += point * col[15 + c]
            j = int(lw[j, G_PARENT])


@njit(cache=True, _nrt=False)
def row_kernel(rows: np.ndarray, values: np.ndarray, levels: int, phi: np.ndarray, jac: np.ndarray) -> None:
    """Φ (m,) and its columns at ``levels`` levels, jac (3, m, n): Φq, Φ̇q, Φ̈q (module docstring;
    products by Leibniz's rule, (uw)⁽ˡ⁾ = Σ_s C(l, s) u⁽ˢ⁾ w⁽ˡ⁻ˢ⁾), from the tracks' ``values``."""
    n = jac.shape[2]
    for r in range(rows.shape[0]):
        kind, ta, tb, comp = int(rows[r, 0]), int(rows[r, 1]), int(rows[r, 2]), int(rows[r, 3])
        u, w = values[ta], values[tb]
        if kind == POINT_ROW:
            phi[r] = u[0, comp, n] - w[0, comp, n]
            for level in range(levels):
                for j in range(n):
                    jac[level, r, j] = u[level, comp, j] - w[level, comp, j]
            continue
        phi[r] = u[0, 0, n] * w[0, 0, n] + u[0, 1, n] * w[0, 1, n] + u[0, 2, n] * w[0, 2, n]
        for level in range(levels):
            for j in range(n):
                s = 0.0
                for k in range(level + 1):
                    weight = 2.0 if level == 2 and k == 1 else 1.0
                    for c in range(3):
                        s += weight * (u[k, c, n] * w[level - k, c, j] + w[k, c, n] * u[level - k, c, j])
                jac[level, r, j] = s


@njit(cache=True, _nrt=False)
def hessian_kernel(lw: np.ndarray, tracks: np.ndarray, rows: np.ndarray, lam: np.ndarray, values: np.ndarray,
                   weights: np.ndarray, out: np.ndarray) -> None:
    """out = Σ_r λ_r ∂²Φ_r/∂q² (n, n) over every row (λ_r = 0 for a row left out), from the level-0
    ``values`` of track_kernel at the same q (module docstring); ``weights`` (tracks, 3) scratch."""
    n = lw.shape[0]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    for t in range(tracks.shape[0]):
        weights[t, 0] = weights[t, 1] = weights[t, 2] = 0.0
    for r in range(rows.shape[0]):
        kind, ta, tb, comp, scale = int(rows[r, 0]), int(rows[r, 1]), int(rows[r, 2]), int(rows[r, 3]), lam[r]
        if scale == 0.0:
            continue
        if kind == POINT_ROW:
            weights[ta, comp] += scale
            weights[tb, comp] -= scale
            continue
        u, w = values[ta, 0], values[tb, 0]
        for c in range(3):
            weights[ta, c] += scale * w[c, n]
            weights[tb, c] += scale * u[c, n]
        for i in range(n):
            for j in range(n):
                out[i, j] += scale * (u[0, i] * w[0, j] + u[1, i] * w[1, j] + u[2, i] * w[2, j]
                                      + w[0, i] * u[0, j] + w[1, i] * u[1, j] + w[2, i] * u[2, j])
    for t in range(tracks.shape[0]):
        y0, y1, y2 = weights[t, 0], weights[t, 1], weights[t, 2]
        b = int(tracks[t, 0])
        if b < 0 or (y0 == 0.0 and y1 == 0.0 and y2 == 0.0):
            continue
        g = values[t, 0]
        c = b
        while c >= 0:
            a = c
            while a >= 0:
                s = lw[a, L_J:L_J + 3]  # ω_a; y · (ω_a × g_c)
                value = (y0 * (s[1] * g[2, c] - s[2] * g[1, c]) + y1 * (s[2] * g[0, c] - s[0] * g[2, c])
                         + y2 * (s[0] * g[1, c] - s[1] * g[0, c]))
                out[a, c] += value
                if a != c:
                    out[c, a] += value
                a = int(lw[a, G_PARENT])
            c = int(lw[c, G_PARENT])
