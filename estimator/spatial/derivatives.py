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
Wₖ the wrench through joint k (the last term: Adᵀ_{C_{k,λ}} W_k turns with qₖ). Mᶜ and Bᶜ are
symmetric, so the first line is (Mᶜᵢ Jᵢ) · u − (Bᶜᵢ Jᵢ − ad_{Jᵢ}ᵀ Hᶜᵢ) · δ: two vectors per body,
then two dot products per (joint, ancestor) pair; the second line, Jᵢ · Zₖ, one. The URDF damping
adds dᵢ on the diagonal of ∂Q/∂q̇ (Coulomb friction has zero slope); the armature term Iₐᵢ q̈ᵢ
depends on neither q nor q̇ and enters only ∂Q/∂q̈ = M. M itself comes from the same composites:
M_ik = Jₖᵀ Mᶜᵢ Jᵢ for k an ancestor of i or i (the CRBA's M_ij = ʲXⱼᵀ Adᵀ Mᶜᵢ ⁱXᵢ in world
components), plus Iₐᵢ on the diagonal, 0 for k on another branch.

The same terms (``tangent_terms``) give the tangent of the wrench Wⱼ through one joint itself
(``joint_wrench_kernel``, for the joint torque and force-torque sensors): Mᶜⱼ u − Bᶜⱼ δ − ad_δᵀ Hᶜⱼ for
k = j or an ancestor (carried with body j), Zₖ for k beyond j (Mᶜₖ Jₖ for q̈), then Adᵀ into the
sensor's frame.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_ARM, G_DAMP, G_GRAVITY, G_KIND, G_PARENT, G_RIGID, W_A, W_F, W_REL, W_T1, W_V,
                                   W_WIDTH, add_rigid_to_parent, add_to_parent, bracket, co_bracket, compose, dot6,
                                   rigid_ad, rigid_times, set_screw, to_parent)
from estimator.spatial.rnea import rnea_pass

# world-frame terms per body, after the workspace row's W part (ops): pose, V, V̇, W, J, c, u (q), Mᶜ J,
# Bᶜ J − ad_Jᵀ Hᶜ, Hᶜ, Z (q), Z (q̇), Mᶜ (rigid-body parameters), Kᶜ (6×6), scratch; D_WIDTH: the whole row's width
D_POSE, D_V, D_A, D_W, D_J, D_C, D_U, D_MJ, D_BJ, D_H, D_ZQ, D_ZV, D_M, D_K, D_S, D_WIDTH = \
    (W_WIDTH + offset for offset in (0, 12, 18, 24, 30, 36, 42, 48, 54, 60, 66, 72, 78, 88, 124, 136))


@njit(cache=True, _nrt=False)
def _world_terms(ws: np.ndarray, qd: np.ndarray) -> None:
    """Per body, in world components: pose, V, V̇, W, J, c, u, and its own M, K, H (to be summed)."""
    for i in range(ws.shape[0]):
        d = ws[i]
        pose, v, a, j, c, u = d[D_POSE:D_POSE + 12], d[D_V:D_V + 6], d[D_A:D_A + 6], d[D_J:D_J + 6], \
            d[D_C:D_C + 6], d[D_U:D_U + 6]
        p = int(d[G_PARENT])
        if p < 0:
            for r in range(12):
                pose[r] = d[W_REL + r]
        else:
            compose(ws[p, D_POSE:D_POSE + 12], d[W_REL:W_REL + 12], pose)
        to_parent(pose, d[W_V:W_V + 6], v)
        to_parent(pose, d[W_A:W_A + 6], a)
        w = d[D_W:D_W + 6]
        for r in range(6):
            w[r] = 0.0
        add_to_parent(pose, d[W_F:W_F + 6], w)
        x = d[W_T1:W_T1 + 6]
        set_screw(int(d[G_KIND]), d, x)
        to_parent(pose, x, j)
        for r in range(6):
            c[r] = u[r] = 0.0
        bracket(v, j, 1.0, c)
        if p < 0:
            g = d[D_S:D_S + 6]
            g[0] = g[1] = g[2] = 0.0
            g[3], g[4], g[5] = -d[G_GRAVITY], -d[G_GRAVITY + 1], -d[G_GRAVITY + 2]
            bracket(g, j, 1.0, u)
        else:
            bracket(ws[p, D_A:D_A + 6], j, 1.0, u)
        bracket(c, j, qd[i], u)
        bracket(v, c, 1.0, u)  # − [c, V]
        m, h = d[D_M:D_M + 10], d[D_H:D_H + 6]
        for r in range(10):
            m[r] = 0.0
        add_rigid_to_parent(pose, d[G_RIGID:], m)
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


@njit(cache=True, _nrt=False)
def _reach(d: np.ndarray, delta: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """out = Mᶜ u − Bᶜ δ − ad_δᵀ Hᶜ with the composites of row d."""
    rigid_times(d[D_M:D_M + 10], u, out)
    _add_b_times(d, delta, -1.0, out)
    co_bracket(delta, d[D_H:D_H + 6], 1.0, out)


@njit(cache=True, _nrt=False)
def tangent_terms(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
                  friction: bool) -> None:
    """The RNEA, then per body the world terms, the subtree composites Mᶜ, Kᶜ, Hᶜ and Mᶜ J,
    Bᶜ J − ad_Jᵀ Hᶜ, Z (q), Z (q̇) (module docstring) into the rows' D_* entries."""
    rnea_pass(ws, q, qd, qdd, wrench, friction)
    _world_terms(ws, qd)
    n = ws.shape[0]
    for i in range(n - 1, 0, -1):  # composites: children (later rows) into parents
        p = int(ws[i, G_PARENT])
        if p >= 0:
            for r in range(10):
                ws[p, D_M + r] += ws[i, D_M + r]
            for r in range(36):
                ws[p, D_K + r] += ws[i, D_K + r]
            for r in range(6):
                ws[p, D_H + r] += ws[i, D_H + r]
    for i in range(n):
        d = ws[i]
        j, c, mj, bj, zq, zv = d[D_J:D_J + 6], d[D_C:D_C + 6], d[D_MJ:D_MJ + 6], d[D_BJ:D_BJ + 6], \
            d[D_ZQ:D_ZQ + 6], d[D_ZV:D_ZV + 6]
        rigid_times(d[D_M:D_M + 10], j, mj)
        for r in range(6):
            bj[r] = 0.0
        _add_b_times(d, j, 1.0, bj)
        co_bracket(j, d[D_H:D_H + 6], 1.0, bj)  # Hᶜ · [J, δ] = (ad_Jᵀ Hᶜ) · δ
        _reach(d, c, d[D_U:D_U + 6], zq)
        co_bracket(j, d[D_W:D_W + 6], 1.0, zq)
        two_c = d[D_S:D_S + 6]
        for r in range(6):
            two_c[r] = 2.0 * c[r]
        _reach(d, j, two_c, zv)


@njit(cache=True, _nrt=False)
def rnea_derivatives_kernel(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
                            friction: bool, out: np.ndarray) -> None:
    """∂Q/∂q, ∂Q/∂q̇ and ∂Q/∂q̈ = M into out[0], out[1], out[2] (out (3, n, n)); ws (n, D_WIDTH) the
    workspace rows, which hold the packed model (ops)."""
    tangent_terms(ws, q, qd, qdd, wrench, friction)
    n = ws.shape[0]
    dtau_dq, dtau_dqd, mass = out[0], out[1], out[2]
    for i in range(n):
        for r in range(n):
            dtau_dq[i, r] = dtau_dqd[i, r] = mass[i, r] = 0.0
    for i in range(n):
        d = ws[i]
        mj, bj = d[D_MJ:D_MJ + 6], d[D_BJ:D_BJ + 6]
        k = i
        while k >= 0:  # k = i and its ancestors
            e = ws[k]
            ck, jk = e[D_C:D_C + 6], e[D_J:D_J + 6]
            dtau_dq[i, k] = dot6(mj, e[D_U:D_U + 6]) - dot6(bj, ck)
            dtau_dqd[i, k] = 2.0 * dot6(mj, ck) - dot6(bj, jk)
            mass[i, k] = mass[k, i] = dot6(mj, jk)
            if k != i:  # body i lies beyond joint k
                dtau_dq[k, i] = dot6(jk, d[D_ZQ:D_ZQ + 6])
                dtau_dqd[k, i] = dot6(jk, d[D_ZV:D_ZV + 6])
            k = int(e[G_PARENT])
        if friction:
            dtau_dqd[i, i] += d[G_DAMP]
        mass[i, i] += d[G_ARM]


# joint-wrench row (joint_wrench_kernel): the frame S (R row-major, p) in body j's frame, then W_s after a
# call, scratch (the pose of S in the world, a wrench, 2c), the joint j and, per joint k, where k lies from j
# (1: beyond j, 0: j or an ancestor, −1: another branch); T_WIDTH + n entries in all
T_MOUNT, T_W, T_POSE, T_COL, T_TWO_C, T_JOINT, T_WIDTH = 0, 12, 18, 30, 36, 42, 43


@njit(cache=True, inline="always")
def _wrench_to_frame(pose: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """out = Adᵀ_P W for P = pose = (R, p): a world wrench in P's axes about its origin,
    t' = Rᵀ (t − p × f), f' = Rᵀ f."""
    p0, p1, p2 = pose[9], pose[10], pose[11]
    t0 = w[0] - (p1 * w[5] - p2 * w[4])
    t1 = w[1] - (p2 * w[3] - p0 * w[5])
    t2 = w[2] - (p0 * w[4] - p1 * w[3])
    for c in range(3):
        out[c] = pose[c] * t0 + pose[3 + c] * t1 + pose[6 + c] * t2
        out[3 + c] = pose[c] * w[3] + pose[3 + c] * w[4] + pose[6 + c] * w[5]


@njit(cache=True, _nrt=False)
def joint_wrench_kernel(ws: np.ndarray, wrench: np.ndarray, row: np.ndarray, q: np.ndarray, qd: np.ndarray,
                        qdd: np.ndarray, out: np.ndarray) -> None:
    """The wrench W_j through joint j onto its body (eq. 67a, friction and armature are inside the
    joint, not in it) in frame S of body j, W_s = Adᵀ_{C_j S} Wˢ_j, into row[T_W] and its tangents
    ∂W_s/∂q, ∂W_s/∂q̇, ∂W_s/∂q̈ into out (3, n, 6), row k the column of joint k:
    Adᵀ_{C_j S} of Z (q), Z (q̇), Mᶜₖ Jₖ for k beyond j; of Mᶜⱼ u − Bᶜⱼ δ − ad_δᵀ Hᶜⱼ (δ, u = cₖ, uₖ;
    Jₖ, 2cₖ; 0, Jₖ) for k = j or an ancestor, a tangent carried with body j; 0 on other branches."""
    tangent_terms(ws, q, qd, qdd, wrench, False)
    j = int(row[T_JOINT])
    dj = ws[j]
    pose, col, two_c = row[T_POSE:T_POSE + 12], row[T_COL:T_COL + 6], row[T_TWO_C:T_TWO_C + 6]
    compose(dj[D_POSE:D_POSE + 12], row[T_MOUNT:T_MOUNT + 12], pose)
    _wrench_to_frame(pose, dj[D_W:D_W + 6], row[T_W:T_W + 6])
    for k in range(ws.shape[0]):
        e = ws[k]
        where = row[T_WIDTH + k]
        if where > 0.0:
            _wrench_to_frame(pose, e[D_ZQ:D_ZQ + 6], out[0, k])
            _wrench_to_frame(pose, e[D_ZV:D_ZV + 6], out[1, k])
            _wrench_to_frame(pose, e[D_MJ:D_MJ + 6], out[2, k])
        elif where == 0.0:
            c, jk = e[D_C:D_C + 6], e[D_J:D_J + 6]
            _reach(dj, c, e[D_U:D_U + 6], col)
            _wrench_to_frame(pose, col, out[0, k])
            for r in range(6):
                two_c[r] = 2.0 * c[r]
            _reach(dj, jk, two_c, col)
            _wrench_to_frame(pose, col, out[1, k])
            rigid_times(dj[D_M:D_M + 10], jk, col)
            _wrench_to_frame(pose, col, out[2, k])
        else:
            for t in range(3):
                for r in range(6):
                    out[t, k, r] = 0.0
