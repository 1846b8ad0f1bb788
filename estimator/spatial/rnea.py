"""Recursive O(n) inverse dynamics in body-fixed twists (Müller 2018 §4.1, eqs. 66–67).

Forward pass, i = 1..n (parents first):
  Vᵢ = Ad_{C_{i,λ}} V_λ + ⁱXᵢ q̇ᵢ                               (66b)
  V̇ᵢ = Ad_{C_{i,λ}} V̇_λ + ⁱXᵢ q̈ᵢ + [Vᵢ, ⁱXᵢ] q̇ᵢ                 (66c)
with the base at V = 0, V̇ = (0; −g) in the world frame, so that gravity needs no wrench of its own.
Backward pass, i = n..1: the wrench transmitted through joint i,
  Wᵢ = Mᵢ V̇ᵢ − ad_{Vᵢ}ᵀ Mᵢ Vᵢ − Wᵢᵃᵖᵖ + Σ_children Adᵀ_{C_{c,i}} W_c   (67a, applied wrench
with the minus sign that the notes' numerical check found), and Qᵢ = ⁱXᵢᵀ Wᵢ + dᵢ q̇ᵢ + μᵢ sign q̇ᵢ
(67b plus the URDF's viscous damping d and Coulomb friction μ).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_DAMP, G_FRIC, G_RIGID, W_A, W_F, W_REL, W_T1, W_V, add_to_parent, bracket,
                                   co_bracket, joint_transform, rigid_times, screw_dot, set_screw, to_child)


@njit(cache=True)
def forward_pass(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, q: np.ndarray, qd: np.ndarray,
                 qdd: np.ndarray, ws: np.ndarray) -> None:
    """The relative configurations, body twists Vᵢ and accelerations V̇ᵢ (66b, 66c) into ws."""
    for i in range(ints.shape[0]):
        kind, g, row = ints[i, 1], geo[i], ws[i]
        rel, v, a, x = row[W_REL:W_REL + 12], row[W_V:W_V + 6], row[W_A:W_A + 6], row[W_T1:W_T1 + 6]
        joint_transform(kind, g, q[i], rel)
        p = ints[i, 0]
        if p < 0:
            x[0] = x[1] = x[2] = 0.0
            x[3], x[4], x[5] = -gravity[0], -gravity[1], -gravity[2]
            to_child(rel, x, a)
            for r in range(6):
                v[r] = 0.0
        else:
            to_child(rel, ws[p, W_V:W_V + 6], v)
            to_child(rel, ws[p, W_A:W_A + 6], a)
        set_screw(kind, g, x)
        for r in range(6):
            v[r] += x[r] * qd[i]
            a[r] += x[r] * qdd[i]
        bracket(v, x, qd[i], a)


@njit(cache=True, inline="always")
def joint_friction(g: np.ndarray, qd: float) -> float:
    """dᵢ q̇ᵢ + μᵢ sign q̇ᵢ: the URDF's damping and Coulomb friction [N·m or N]."""
    return g[G_DAMP] * qd + (g[G_FRIC] * math.copysign(1.0, qd) if qd != 0.0 else 0.0)


@njit(cache=True)
def rnea_kernel(ints: np.ndarray, geo: np.ndarray, gravity: np.ndarray, q: np.ndarray, qd: np.ndarray,
                qdd: np.ndarray, wrench: np.ndarray, friction: bool, ws: np.ndarray, tau: np.ndarray) -> None:
    """Q (tau) of eqs. (66)–(67); wrench (n, 6): the applied wrench on each body in its frame;
    ws[:, W_F:W_F+6] holds the joint wrenches Wᵢ afterwards."""
    forward_pass(ints, geo, gravity, q, qd, qdd, ws)
    n = ints.shape[0]
    for i in range(n):
        row = ws[i]
        v, a, f, h = row[W_V:W_V + 6], row[W_A:W_A + 6], row[W_F:W_F + 6], row[W_T1:W_T1 + 6]
        b = geo[i, G_RIGID:]
        rigid_times(b, a, f)
        rigid_times(b, v, h)
        for r in range(6):
            f[r] -= wrench[i, r]
        co_bracket(v, h, 1.0, f)
    for i in range(n - 1, -1, -1):
        kind, g, f = ints[i, 1], geo[i], ws[i, W_F:W_F + 6]
        tau[i] = screw_dot(kind, g, f) + (joint_friction(g, qd[i]) if friction else 0.0)
        p = ints[i, 0]
        if p >= 0:
            add_to_parent(ws[i, W_REL:W_REL + 12], f, ws[p, W_F:W_F + 6])
