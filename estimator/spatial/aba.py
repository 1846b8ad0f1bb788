"""Forward dynamics by articulated bodies (ABA, Featherstone's O(n) recursion) in body-fixed frames.

Pass 1 (parents first): Vᵢ (Müller eq. 66b), the bias acceleration cᵢ = [Vᵢ, ⁱXᵢ] q̇ᵢ, and
Iᴬᵢ = Mᵢ, pᴬᵢ = −ad_{Vᵢ}ᵀ Mᵢ Vᵢ − Wᵢᵃᵖᵖ.
Pass 2 (children first): Uᵢ = Iᴬᵢ Xᵢ, Dᵢ = Xᵢᵀ Uᵢ + Iₐᵢ (the armature: the joint's equation is
Qᵢ = Xᵢᵀ Wᵢ + Iₐᵢ q̈ᵢ, as in RNEA), uᵢ = Qᵢ − Xᵢᵀ pᴬᵢ, and the parent receives
Adᵀ (Iᴬᵢ − Uᵢ Uᵢᵀ / Dᵢ) Ad and Adᵀ (pᴬᵢ + Iᵃᵢ cᵢ + Uᵢ uᵢ / Dᵢ), Ad = Ad_{C_{i,λ}}.
Pass 3 (parents first): a′ = Ad V̇_λ + cᵢ, q̈ᵢ = (uᵢ − Uᵢᵀ a′) / Dᵢ, V̇ᵢ = a′ + Xᵢ q̈ᵢ, from the
base's V̇ = (0; −g). Q is the joint force less the URDF's damping and Coulomb friction.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.spatial.ops import (G_ARM, G_GRAVITY, G_INERTIA, G_KIND, G_PARENT, G_RIGID, W_A, W_C, W_D, W_IA, W_M6,
                                   W_PA, W_REL, W_T1, W_U, W_UU, W_V, add_inertia_to_parent, add_to_parent, bracket,
                                   co_bracket, inertia_times, joint_transform, rigid_times, screw_dot, set_screw,
                                   to_child)
from estimator.spatial.rnea import joint_friction


@njit(cache=True, _nrt=False)
def aba_kernel(ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, wrench: np.ndarray, friction: bool,
               qdd: np.ndarray) -> None:
    """q̈ (qdd) from Q (tau) and the applied body wrenches (n, 6); ws (n, ≥ W_WIDTH) the workspace rows,
    which hold the packed model (ops)."""
    n = ws.shape[0]
    for i in range(n):
        row = ws[i]
        kind = int(row[G_KIND])
        rel, v, x, c = row[W_REL:W_REL + 12], row[W_V:W_V + 6], row[W_T1:W_T1 + 6], row[W_C:W_C + 6]
        ia, pa, h = row[W_IA:W_IA + 36], row[W_PA:W_PA + 6], row[W_M6:W_M6 + 6]
        joint_transform(kind, row, q[i], rel)
        p = int(row[G_PARENT])
        if p < 0:
            for r in range(6):
                v[r] = 0.0
        else:
            to_child(rel, ws[p, W_V:W_V + 6], v)
        set_screw(kind, row, x)
        for r in range(6):
            v[r] += x[r] * qd[i]
            c[r] = 0.0
            pa[r] = -wrench[i, r]
        bracket(v, x, qd[i], c)
        for r in range(36):
            ia[r] = row[G_INERTIA + r]
        rigid_times(row[G_RIGID:], v, h)
        co_bracket(v, h, 1.0, pa)
    for i in range(n - 1, -1, -1):
        row = ws[i]
        kind = int(row[G_KIND])
        x, c, ia, pa, u = row[W_T1:W_T1 + 6], row[W_C:W_C + 6], row[W_IA:W_IA + 36], row[W_PA:W_PA + 6], \
            row[W_U:W_U + 6]
        for r in range(6):
            u[r] = 0.0
        inertia_times(ia, x, 1.0, u)
        d = screw_dot(kind, row, u) + row[G_ARM]
        row[W_D] = d
        row[W_UU] = tau[i] - (joint_friction(row, qd[i]) if friction else 0.0) - screw_dot(kind, row, pa)
        p = int(row[G_PARENT])
        if p >= 0:
            for r in range(6):
                for k in range(6):
                    ia[6 * r + k] -= u[r] * u[k] / d
            inertia_times(ia, c, 1.0, pa)
            for r in range(6):
                pa[r] += u[r] * row[W_UU] / d
            add_inertia_to_parent(row[W_REL:W_REL + 12], ia, row[W_M6:W_M6 + 54], ws[p, W_IA:W_IA + 36])
            add_to_parent(row[W_REL:W_REL + 12], pa, ws[p, W_PA:W_PA + 6])
    for i in range(n):
        row = ws[i]
        a, x, c, u = row[W_A:W_A + 6], row[W_T1:W_T1 + 6], row[W_C:W_C + 6], row[W_U:W_U + 6]
        p = int(row[G_PARENT])
        if p < 0:
            h = row[W_M6:W_M6 + 6]
            h[0] = h[1] = h[2] = 0.0
            h[3], h[4], h[5] = -row[G_GRAVITY], -row[G_GRAVITY + 1], -row[G_GRAVITY + 2]
            to_child(row[W_REL:W_REL + 12], h, a)
        else:
            to_child(row[W_REL:W_REL + 12], ws[p, W_A:W_A + 6], a)
        s = 0.0
        for r in range(6):
            a[r] += c[r]
            s += u[r] * a[r]
        qdd[i] = (row[W_UU] - s) / row[W_D]
        for r in range(6):
            a[r] += x[r] * qdd[i]
