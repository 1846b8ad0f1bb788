"""Recursive O(n) inverse dynamics in body-fixed twists (Müller 2018 §4.1, eqs. 66–67).

Forward pass, i = 1..n (parents first):
  Vᵢ = Ad_{C_{i,λ}} V_λ + ⁱXᵢ q̇ᵢ                               (66b)
  V̇ᵢ = Ad_{C_{i,λ}} V̇_λ + ⁱXᵢ q̈ᵢ + [Vᵢ, ⁱXᵢ] q̇ᵢ                 (66c)
with the base at V = 0, V̇ = (0; −g) in the world frame, so that gravity needs no wrench of its own.
Backward pass, i = n..1: the wrench transmitted through joint i,
  Wᵢ = Mᵢ V̇ᵢ − ad_{Vᵢ}ᵀ Mᵢ Vᵢ − Wᵢᵃᵖᵖ + Σ_children Adᵀ_{C_{c,i}} W_c   (67a, applied wrench
with the minus sign that the notes' numerical check found), and Qᵢ = ⁱXᵢᵀ Wᵢ + Iₐᵢ q̈ᵢ + dᵢ q̇ᵢ +
μᵢ sign q̇ᵢ (67b plus the sidecar's armature Iₐ = Jm G², the rotor's inertia reflected through the
gearing, and the URDF's viscous damping d and Coulomb friction μ). The armature torque is the
motor's, inside the joint: Wᵢ does not carry it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_ARM, G_DAMP, G_FRIC, G_GRAVITY, G_KIND, G_PARENT, G_RIGID, W_A, W_F, W_Q,
                                   W_REL, W_T1, W_V, add_to_parent, bracket, co_bracket, joint_transform, rigid_times,
                                   screw_dot, set_screw, to_child)


@njit(cache=True, _nrt=False)
def forward_pass(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
    """The relative configurations, body twists Vᵢ and accelerations V̇ᵢ (66b, 66c) into the
    workspace rows ws (n, ≥ W_WIDTH), which hold the packed model (ops)."""
    for i in range(ws.shape[0]):
        row = ws[i]
        kind = int(row[G_KIND])
        rel, v, a, x = row[W_REL:W_REL + 12], row[W_V:W_V + 6], row[W_A:W_A + 6], row[W_T1:W_T1 + 6]
        joint_transform(kind, row, q[i], rel)
        p = int(row[G_PARENT])
        if p < 0:
            x[0] = x[1] = x[2] = 0.0
            x[3], x[4], x[5] = -row[G_GRAVITY], -row[G_GRAVITY + 1], -row[G_GRAVITY + 2]
            to_child(rel, x, a)
            for r in range(6):
                v[r] = 0.0
        else:
            to_child(rel, ws[p, W_V:W_V + 6], v)
            to_child(rel, ws[p, W_A:W_A + 6], a)
        set_screw(kind, row, x)
        for r in range(6):
            v[r] += x[r] * qd[i]
            a[r] += x[r] * qdd[i]
        bracket(v, x, qd[i], a)


@njit(cache=True, inline="always")
def joint_friction(g: np.ndarray, qd: float) -> float:
    """dᵢ q̇ᵢ + μᵢ sign q̇ᵢ: the URDF's damping and Coulomb friction [N·m or N]."""
    return g[G_DAMP] * qd + (g[G_FRIC] * math.copysign(1.0, qd) if qd != 0.0 else 0.0)


@njit(cache=True, _nrt=False)
def rnea_pass(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
              friction: bool) -> None:
    """Q of eqs. (66)–(67) into ws[:, W_Q]; wrench (n, 6): the applied wrench on each body in its
    frame; ws[:, W_F:W_F+6] holds the joint wrenches Wᵢ afterwards."""
    forward_pass(ws, q, qd, qdd)
    n = ws.shape[0]
    for i in range(n):
        row = ws[i]
        v, a, f, h = row[W_V:W_V + 6], row[W_A:W_A + 6], row[W_F:W_F + 6], row[W_T1:W_T1 + 6]
        b = row[G_RIGID:]
        rigid_times(b, a, f)
        rigid_times(b, v, h)
        for r in range(6):
            f[r] -= wrench[i, r]
        co_bracket(v, h, 1.0, f)
    for i in range(n - 1, -1, -1):
        row = ws[i]
        f = row[W_F:W_F + 6]
        row[W_Q] = (screw_dot(int(row[G_KIND]), row, f) + row[G_ARM] * qdd[i]
                    + (joint_friction(row, qd[i]) if friction else 0.0))
        p = int(row[G_PARENT])
        if p >= 0:
            add_to_parent(row[W_REL:W_REL + 12], f, ws[p, W_F:W_F + 6])


@njit(cache=True, _nrt=False)
def rnea_kernel(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
                friction: bool, tau: np.ndarray) -> None:
    """rnea_pass, Q into tau (n,)."""
    rnea_pass(ws, q, qd, qdd, wrench, friction)
    for i in range(ws.shape[0]):
        tau[i] = ws[i, W_Q]
