"""Analytic derivatives of inverse dynamics with respect to q and q̇ (∂Q/∂q̈ = M), by the tangent
of the body-fixed RNEA (Müller 2018 §4.1 and §6.1), all directions k at once.

qₖ enters only C_{k,λ(k)}; for a twist or wrench carried across joint k,
∂/∂qₖ (Ad_{C_{k,λ}} Y) = −ad_{ᵏXₖ} Ad_{C_{k,λ}} Y = [Ad Y, ᵏXₖ] and
∂/∂qₖ (Adᵀ_{C_{k,λ}} W) = −Adᵀ_{C_{k,λ}} ad_{ᵏXₖ}ᵀ W. Differentiating (66b), (66c) and (67a):
  δVᵢ = Ad δV_λ + [Vᵢ, Xᵢ] δᵢₖ (q) or Xᵢ δᵢₖ (q̇),
  δV̇ᵢ = Ad δV̇_λ + [δVᵢ, Xᵢ] q̇ᵢ + [Ad V̇_λ, Xᵢ] δᵢₖ (q) or [Vᵢ, Xᵢ] δᵢₖ (q̇),
  δWᵢ = Mᵢ δV̇ᵢ − ad_{δVᵢ}ᵀ Mᵢ Vᵢ − ad_{Vᵢ}ᵀ Mᵢ δVᵢ + Σ_c Adᵀ (δW_c − ad_{X_c}ᵀ W_c δ_{ck}),
  δQᵢ = Xᵢᵀ δWᵢ (+ dᵢ on the diagonal of ∂Q/∂q̇: the URDF damping; Coulomb friction has zero slope).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_DAMP, G_INERTIA, W_A, W_F, W_M6, W_REL, W_T1, W_T2, W_V, add_to_parent,
                                   bracket, co_bracket, inertia_times, screw_dot, set_screw, to_child)
from estimator.spatial.rnea import rnea_kernel


@njit(cache=True)
def rnea_derivatives_kernel(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, q: np.ndarray, qd: np.ndarray,
                            qdd: np.ndarray, wrench: np.ndarray, friction: bool, ws: np.ndarray, tau: np.ndarray,
                            dv: np.ndarray, da: np.ndarray, dw: np.ndarray, dtau_dq: np.ndarray,
                            dtau_dqd: np.ndarray) -> None:
    """Q into tau, ∂Q/∂q and ∂Q/∂q̇ into dtau_dq, dtau_dqd (n, n); dv, da, dw (2, n, n, 6) are the
    tangents [q or q̇, body, direction]."""
    rnea_kernel(ints, geo, gravity, q, qd, qdd, wrench, friction, ws, tau)
    n = ints.shape[0]
    for i in range(n):
        kind, g, row = ints[i, 1], geo[i], ws[i]
        rel, v, x, apar = row[W_REL:W_REL + 12], row[W_V:W_V + 6], row[W_T1:W_T1 + 6], row[W_T2:W_T2 + 6]
        set_screw(kind, g, x)
        p = ints[i, 0]
        if p < 0:  # Ad V̇_λ: the base's (0; −g) in body i's frame
            h = row[W_M6:W_M6 + 6]
            h[0] = h[1] = h[2] = 0.0
            h[3], h[4], h[5] = -gravity[0], -gravity[1], -gravity[2]
            to_child(rel, h, apar)
        else:
            to_child(rel, ws[p, W_A:W_A + 6], apar)
        m, h, mdv = geo[i, G_INERTIA:], row[W_M6:W_M6 + 6], row[W_M6 + 6:W_M6 + 12]
        for r in range(6):
            h[r] = 0.0
        inertia_times(m, v, 1.0, h)
        for s in range(2):
            for k in range(n):
                for r in range(6):
                    dw[s, i, k, r] = 0.0
            k = i
            while k >= 0:  # only the joints that move body i: the other tangents stay zero
                dvi, dai, dwi = dv[s, i, k], da[s, i, k], dw[s, i, k]
                if k == i:
                    for r in range(6):
                        dvi[r] = dai[r] = 0.0
                    if s == 0:
                        bracket(v, x, 1.0, dvi)
                        bracket(apar, x, 1.0, dai)
                    else:
                        for r in range(6):
                            dvi[r] = x[r]
                        bracket(v, x, 1.0, dai)
                else:
                    to_child(rel, dv[s, p, k], dvi)
                    to_child(rel, da[s, p, k], dai)
                bracket(dvi, x, qd[i], dai)
                for r in range(6):
                    mdv[r] = 0.0
                inertia_times(m, dai, 1.0, dwi)
                co_bracket(dvi, h, 1.0, dwi)
                inertia_times(m, dvi, 1.0, mdv)
                co_bracket(v, mdv, 1.0, dwi)
                k = ints[k, 0]
    for i in range(n - 1, -1, -1):
        kind, g, row = ints[i, 1], geo[i], ws[i]
        p, x = ints[i, 0], row[W_T1:W_T1 + 6]
        for k in range(n):
            dtau_dq[i, k] = screw_dot(kind, g, dw[0, i, k])
            dtau_dqd[i, k] = screw_dot(kind, g, dw[1, i, k])
        if friction:
            dtau_dqd[i, i] += g[G_DAMP]
        if p >= 0:
            rel = row[W_REL:W_REL + 12]
            for s in range(2):
                for k in range(n):
                    add_to_parent(rel, dw[s, i, k], dw[s, p, k])
            t = row[W_M6:W_M6 + 6]
            for r in range(6):
                t[r] = 0.0
            co_bracket(x, row[W_F:W_F + 6], 1.0, t)
            add_to_parent(rel, t, dw[0, p, i])
