"""The joint-space mass matrix by composite bodies (CRBA), in body-fixed frames.

M = 𝐉ᵀ𝐌𝐉 (Müller 2018 eq. 81) summed body by body: with the composite inertia Mᶜᵢ = Mᵢ + Σ_c
Adᵀ_{C_{c,i}} Mᶜ_c Ad_{C_{c,i}} of the subtree at i (itself a rigid-body inertia: 10 parameters),
M_ij = ʲXⱼᵀ Adᵀ_{C_{i,j}} Mᶜᵢ ⁱXᵢ for j an ancestor of (or equal to) i, and 0 for bodies on
different branches.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_RIGID, G_WIDTH, W_IA, W_M6, W_REL, W_T1, W_T2, add_rigid_to_parent,
                                   add_to_parent, joint_transform, rigid_times, screw_dot, set_screw)


@njit(cache=True)
def crba_kernel(ints: np.ndarray, geo: np.ndarray, q: np.ndarray, ws: np.ndarray, mass: np.ndarray) -> None:
    """M(q) into mass (n, n); ws[:, W_IA:W_IA+10] holds the composite inertias' parameters afterwards."""
    n = ints.shape[0]
    for i in range(n):
        for k in range(n):  # entries of bodies on different branches stay 0
            mass[i, k] = 0.0
        joint_transform(ints[i, 1], geo[i], q[i], ws[i, W_REL:W_REL + 12])
        for r in range(G_WIDTH - G_RIGID):
            ws[i, W_IA + r] = geo[i, G_RIGID + r]
    for i in range(n - 1, -1, -1):
        p = ints[i, 0]
        if p >= 0:
            add_rigid_to_parent(ws[i, W_REL:W_REL + 12], ws[i, W_IA:W_IA + 10], ws[p, W_IA:W_IA + 10])
    for i in range(n):
        x, f, g = ws[i, W_T1:W_T1 + 6], ws[i, W_T2:W_T2 + 6], ws[i, W_M6:W_M6 + 6]
        set_screw(ints[i, 1], geo[i], x)
        rigid_times(ws[i, W_IA:W_IA + 10], x, f)
        mass[i, i] = screw_dot(ints[i, 1], geo[i], f)
        j = i
        while ints[j, 0] >= 0:
            for r in range(6):
                g[r] = 0.0
            add_to_parent(ws[j, W_REL:W_REL + 12], f, g)
            j = ints[j, 0]
            for r in range(6):
                f[r] = g[r]
            mass[i, j] = mass[j, i] = screw_dot(ints[j, 1], geo[j], f)
