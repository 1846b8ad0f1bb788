"""The joint-space mass matrix by composite bodies (CRBA), in body-fixed frames.

M = 𝐉ᵀ𝐌𝐉 (Müller 2018 eq. 81) summed body by body: with the composite inertia Mᶜᵢ = Mᵢ + Σ_c
Adᵀ_{C_{c,i}} Mᶜ_c Ad_{C_{c,i}} of the subtree at i (itself a rigid-body inertia: 10 parameters),
M_ij = ʲXⱼᵀ Adᵀ_{C_{i,j}} Mᶜᵢ ⁱXᵢ for j an ancestor of (or equal to) i, and 0 for bodies on
different branches; the armature Iₐᵢ (Jm G²) is added to M_ii.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_ARM, G_KIND, G_PARENT, G_RIGID, W_IA, W_M6, W_REL, W_T1, W_T2,
                                   add_rigid_to_parent, joint_transform, rigid_times, screw_dot, set_screw,
                                   wrench_to_parent)


@njit(cache=True, _nrt=False)
def crba_kernel(ws: np.ndarray, q: np.ndarray, mass: np.ndarray) -> None:
    """M(q) into mass (n, n); ws (n, ≥ W_WIDTH) the workspace rows, which hold the packed model (ops);
    ws[:, W_IA:W_IA+10] holds the composite inertias' parameters afterwards."""
    n = ws.shape[0]
    for i in range(n):
        row = ws[i]
        for k in range(n):  # entries of bodies on different branches stay 0
            mass[i, k] = 0.0
        joint_transform(int(row[G_KIND]), row, q[i], row[W_REL:W_REL + 12])
        for r in range(10):
            row[W_IA + r] = row[G_RIGID + r]
    for i in range(n - 1, -1, -1):
        p = int(ws[i, G_PARENT])
        if p >= 0:
            add_rigid_to_parent(ws[i, W_REL:W_REL + 12], ws[i, W_IA:W_IA + 10], ws[p, W_IA:W_IA + 10])
    for i in range(n):
        row = ws[i]
        kind = int(row[G_KIND])
        x, f, g = row[W_T1:W_T1 + 6], row[W_T2:W_T2 + 6], row[W_M6:W_M6 + 6]
        set_screw(kind, row, x)
        rigid_times(row[W_IA:W_IA + 10], x, f)
        mass[i, i] = screw_dot(kind, row, f) + row[G_ARM]
        j, p = i, int(row[G_PARENT])
        while p >= 0:  # f = Mᶜᵢ ⁱXᵢ carried down to each ancestor j
            wrench_to_parent(ws[j, W_REL:W_REL + 12], f, g)
            f, g = g, f
            j = p
            row = ws[j]
            p = int(row[G_PARENT])
            mass[i, j] = mass[j, i] = screw_dot(int(row[G_KIND]), row, f)
