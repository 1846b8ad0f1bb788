"""Analytic derivatives of inverse dynamics with respect to q and q̇ (∂Q/∂q̈ = M), from the
tangent of the RNEA written in world (spatial) components, O(n·depth).

Differentiating the body-fixed RNEA (Müller 2018 eqs. 66–67) with ∂/∂qₖ (Ad_{C_{k,λ}} Y) =
[Ad Y, ᵏXₖ] and carrying every tangent to the world frame (Ad_{Cᵢ}, Ad⁻ᵀ_{Cᵢ}), the tangents no
longer depend on the body they belong to: for every body l moved by joint k, with spatial
Jⱼ = Ad_{Cⱼ} ʲXⱼ, Vₗ, V̇ₗ (V̇ including −g) and cₖ = [Vₖ, Jₖ],
  ∂Vₗ/∂qₖ = cₖ,   ∂V̇ₗ/∂qₖ = eₖ + [cₖ, Vₗ − Vₖ],  eₖ = [V̇_{λ(k)}, Jₖ] + [cₖ, Jₖ] q̇ₖ,
  ∂Vₗ/∂q̇ₖ = Jₖ,   ∂V̇ₗ/∂q̇ₖ = cₖ + [Jₖ, Vₗ − Vₖ].
Summing the wrench tangents Mₗ ∂V̇ₗ − ad_{∂Vₗ}ᵀ Mₗ Vₗ − ad_{Vₗ}ᵀ Mₗ ∂Vₗ over the bodies beyond joint i
needs only the composites of that subtree, Mᶜ = Σ Mₗ, Kᶜ = Σ Mₗ ad_{Vₗ}, Hᶜ = Σ Mₗ Vₗ (world
frame: plain sums). With u = e − [δ, Vₖ], δ = cₖ or Jₖ, and Bᶜ = Kᶜ + Kᶜᵀ:
  k an ancestor of i or i:   ∂Qᵢ = Jᵢᵀ (Mᶜᵢ u − Bᶜᵢ δ) + Hᶜᵢ · [Jᵢ, δ],
  k beyond i:                ∂Qᵢ = Jᵢᵀ (Mᶜₖ u − Bᶜₖ δ − ad_δᵀ Hᶜₖ − ad_{Jₖ}ᵀ Wₖ [q only]),
  k on another branch:       0,
Wₖ the wrench through joint k (the last term: Adᵀ_{C_{k,λ}} W_k turns with qₖ). The URDF damping
adds dᵢ on the diagonal of ∂Q/∂q̇ (Coulomb friction has zero slope).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_DAMP, G_RIGID, W_A, W_F, W_REL, W_T1, W_V, add_rigid_to_parent, add_to_parent,
                                   bracket, co_bracket, compose, dot6, rigid_ad, rigid_times, set_screw, to_parent)
from estimator.spatial.crba import crba_kernel
from estimator.spatial.rnea import rnea_kernel

# world-frame row per body: pose, V, V̇, W, J, c, u (q), Mᶜ J, Bᶜ J, Hᶜ, Z (q), Z (q̇), Mᶜ (rigid-body
# parameters), Kᶜ (6×6), scratch
D_POSE, D_V, D_A, D_W, D_J, D_C, D_U, D_MJ, D_BJ, D_H, D_ZQ, D_ZV, D_M, D_K, D_S, D_WIDTH = \
    0, 12, 18, 24, 30, 36, 42, 48, 54, 60, 66, 72, 78, 88, 124, 136


@njit(cache=True)
def _world_terms(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, qd: np.ndarray, ws: np.ndarray,
                 dws: np.ndarray) -> None:
    """Per body, in world components: pose, V, V̇, W, J, c, u, and its own M, K, H (to be summed)."""
    for i in range(ints.shape[0]):
        row, d = ws[i], dws[i]
        pose, v, a, j, c, u = d[D_POSE:D_POSE + 12], d[D_V:D_V + 6], d[D_A:D_A + 6], d[D_J:D_J + 6], \
            d[D_C:D_C + 6], d[D_U:D_U + 6]
        p = ints[i, 0]
        if p < 0:
            for r in range(12):
                pose[r] = row[W_REL + r]
        else:
            compose(dws[p, D_POSE:D_POSE + 12], row[W_REL:W_REL + 12], pose)
        to_parent(pose, row[W_V:W_V + 6], v)
        to_parent(pose, row[W_A:W_A + 6], a)
        w = d[D_W:D_W + 6]
        for r in range(6):
            w[r] = 0.0
        add_to_parent(pose, row[W_F:W_F + 6], w)
        x = row[W_T1:W_T1 + 6]
        set_screw(ints[i, 1], geo[i], x)
        to_parent(pose, x, j)
        for r in range(6):
            c[r] = u[r] = 0.0
        bracket(v, j, 1.0, c)
        if p < 0:
            g = d[D_S:D_S + 6]
            g[0] = g[1] = g[2] = 0.0
            g[3], g[4], g[5] = -gravity[0], -gravity[1], -gravity[2]
            bracket(g, j, 1.0, u)
        else:
            bracket(dws[p, D_A:D_A + 6], j, 1.0, u)
        bracket(c, j, qd[i], u)
        bracket(v, c, 1.0, u)  # − [c, V]
        m, h = d[D_M:D_M + 10], d[D_H:D_H + 6]
        for r in range(10):
            m[r] = 0.0
        add_rigid_to_parent(pose, geo[i, G_RIGID:], m)
        rigid_times(m, v, h)
        rigid_ad(m, v, d[D_K:D_K + 36])


@njit(cache=True, inline="always")
def _add_b_times(d: np.ndarray, x: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out += scale · Bᶜ x, Bᶜ = Kᶜ + Kᶜᵀ of row d."""
    k = d[D_K:D_K + 36]
    for r in range(6):
        s = 0.0
        for t in range(6):
            s += (k[6 * r + t] + k[6 * t + r]) * x[t]
        out[r] += scale * s


@njit(cache=True)
def _reach(d: np.ndarray, delta: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """out = Mᶜ u − Bᶜ δ − ad_δᵀ Hᶜ with the composites of row d."""
    rigid_times(d[D_M:D_M + 10], u, out)
    _add_b_times(d, delta, -1.0, out)
    co_bracket(delta, d[D_H:D_H + 6], 1.0, out)


@njit(cache=True)
def rnea_derivatives_kernel(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, q: np.ndarray, qd: np.ndarray,
                            qdd: np.ndarray, wrench: np.ndarray, friction: bool, ws: np.ndarray, dws: np.ndarray,
                            tau: np.ndarray, dtau_dq: np.ndarray, dtau_dqd: np.ndarray) -> None:
    """Q into tau, ∂Q/∂q and ∂Q/∂q̇ into dtau_dq, dtau_dqd (n, n); dws (n, D_WIDTH) the world-frame rows."""
    rnea_kernel(ints, geo, gravity, q, qd, qdd, wrench, friction, ws, tau)
    _world_terms(ints, geo, gravity, qd, ws, dws)
    n = ints.shape[0]
    for i in range(n - 1, 0, -1):  # composites: children (later rows) into parents
        p = ints[i, 0]
        if p >= 0:
            for r in range(10):
                dws[p, D_M + r] += dws[i, D_M + r]
            for r in range(36):
                dws[p, D_K + r] += dws[i, D_K + r]
            for r in range(6):
                dws[p, D_H + r] += dws[i, D_H + r]
    for i in range(n):
        d = dws[i]
        j, c, mj, bj, zq, zv = d[D_J:D_J + 6], d[D_C:D_C + 6], d[D_MJ:D_MJ + 6], d[D_BJ:D_BJ + 6], \
            d[D_ZQ:D_ZQ + 6], d[D_ZV:D_ZV + 6]
        rigid_times(d[D_M:D_M + 10], j, mj)
        for r in range(6):
            bj[r] = 0.0
        _add_b_times(d, j, 1.0, bj)
        _reach(d, c, d[D_U:D_U + 6], zq)
        co_bracket(j, d[D_W:D_W + 6], 1.0, zq)
        two_c = d[D_S:D_S + 6]
        for r in range(6):
            two_c[r] = 2.0 * c[r]
        _reach(d, j, two_c, zv)
        for r in range(n):
            dtau_dq[i, r] = dtau_dqd[i, r] = 0.0
    for i in range(n):
        d = dws[i]
        j, mj, bj, h, tmp = d[D_J:D_J + 6], d[D_MJ:D_MJ + 6], d[D_BJ:D_BJ + 6], d[D_H:D_H + 6], d[D_S:D_S + 6]
        k = i
        while k >= 0:  # k = i and its ancestors
            e = dws[k]
            ck, jk = e[D_C:D_C + 6], e[D_J:D_J + 6]
            for r in range(6):
                tmp[r] = 0.0
            bracket(j, ck, 1.0, tmp)
            dtau_dq[i, k] = dot6(mj, e[D_U:D_U + 6]) - dot6(bj, ck) + dot6(h, tmp)
            for r in range(6):
                tmp[r] = 2.0 * ck[r]
            dtau_dqd[i, k] = dot6(mj, tmp) - dot6(bj, jk)
            for r in range(6):
                tmp[r] = 0.0
            bracket(j, jk, 1.0, tmp)
            dtau_dqd[i, k] += dot6(h, tmp)
            if k != i:  # body i lies beyond joint k
                dtau_dq[k, i] = dot6(jk, d[D_ZQ:D_ZQ + 6])
                dtau_dqd[k, i] = dot6(jk, d[D_ZV:D_ZV + 6])
            k = ints[k, 0]
        if friction:
            dtau_dqd[i, i] += geo[i, G_DAMP]


@njit(cache=True)
def rnea_derivatives_mass_kernel(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, q: np.ndarray,
                                 qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray, friction: bool, ws: np.ndarray,
                                 dws: np.ndarray, tau: np.ndarray, out: np.ndarray) -> None:
    """rnea_derivatives_kernel into out[0] (∂Q/∂q) and out[1] (∂Q/∂q̇), and ∂Q/∂q̈ = M(q) (CRBA) into
    out[2]: the three derivatives in one call (out (3, n, n))."""
    rnea_derivatives_kernel(ints, geo, gravity, q, qd, qdd, wrench, friction, ws, dws, tau, out[0], out[1])
    crba_kernel(ints, geo, q, ws, out[2])
