"""Generalized forces Q(q, q̇) with their Jacobians ∂Q/∂q, ∂Q/∂q̇, and the potential energy.

- constant part (gravity, point loads, coordinate loads), assembled at load time;
- spring-damper between points i, j: tension f = k (l − l0) + c l̇, l = |r_j − r_i|, e = (r_j − r_i)/l,
  Q_j = −f e, Q_i = +f e;
- torsional spring-damper on an angle coordinate: Q_θ = −k (θ − θ0) − c θ̇;
- torque τ on a body: virtual work τ δφ with φ = atan2(u_y, u_x), u = r_1 − r_0, so
  Q_1 = τ J u / |u|², Q_0 = −Q_1 (J: 90° rotation).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.model import Arrays, Mechanism


@njit(cache=True)
def _scatter_pair(out, idx, n, block, sign):
    """out[i-block rows, j-block cols] for a two-point element: ±[[−B, B], [B, −B]]-style pattern."""
    for a in range(4):
        if idx[a] >= n:
            continue
        sa = 1.0 if a >= 2 else -1.0
        for b in range(4):
            if idx[b] < n:
                sb = 1.0 if b >= 2 else -1.0
                out[idx[a], idx[b]] += sign * sa * sb * block[a % 2, b % 2]


@njit(cache=True)
def force_terms(q, qd, constants, q_force, spring_idx, spring_par, torsion_idx, torsion_par,
                torque_idx, torque_val, jacobians):
    """Q (n) and, if ``jacobians``, ∂Q/∂q and ∂Q/∂q̇ (n x n each, else empty)."""
    n = q.shape[0]
    z = np.concatenate((q, constants))
    zd = np.concatenate((qd, np.zeros(constants.shape[0])))
    force = q_force.copy()
    size = n if jacobians else 0
    dq = np.zeros((size, size))
    dqd = np.zeros((size, size))
    for s in range(spring_idx.shape[0]):
        idx = spring_idx[s]
        k, c, rest = spring_par[s, 0], spring_par[s, 1], spring_par[s, 2]
        d = np.array([z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]])
        dd = np.array([zd[idx[2]] - zd[idx[0]], zd[idx[3]] - zd[idx[1]]])
        length = np.sqrt(d[0] ** 2 + d[1] ** 2)
        e = d / length
        rate = e[0] * dd[0] + e[1] * dd[1]
        tension = k * (length - rest) + c * rate
        for a in range(2):
            if idx[a] < n:
                force[idx[a]] += tension * e[a]
            if idx[a + 2] < n:
                force[idx[a + 2]] -= tension * e[a]
        if jacobians:
            proj = (np.eye(2) - np.outer(e, e)) / length  # ∂e/∂d
            # ∂(f e)/∂d = e (k e + c ∂l̇/∂d)ᵀ + f ∂e/∂d with ∂l̇/∂d = ∂e/∂dᵀ ḋ; ∂(f e)/∂ḋ = c e eᵀ
            d_fe = np.outer(e, k * e + c * (proj @ dd)) + tension * proj
            _scatter_pair(dq, idx, n, d_fe, -1.0)
            _scatter_pair(dqd, idx, n, c * np.outer(e, e), -1.0)
    for s in range(torsion_idx.shape[0]):
        i = torsion_idx[s]
        k, c, rest = torsion_par[s, 0], torsion_par[s, 1], torsion_par[s, 2]
        force[i] -= k * (q[i] - rest) + c * qd[i]
        if jacobians:
            dq[i, i] -= k
            dqd[i, i] -= c
    for s in range(torque_idx.shape[0]):
        idx = torque_idx[s]
        tau = torque_val[s]
        u = np.array([z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]])
        u2 = u[0] ** 2 + u[1] ** 2
        ju = np.array([-u[1], u[0]])
        for a in range(2):
            if idx[a] < n:
                force[idx[a]] -= tau * ju[a] / u2
            if idx[a + 2] < n:
                force[idx[a + 2]] += tau * ju[a] / u2
        if jacobians:
            rot = np.array([[0.0, -1.0], [1.0, 0.0]])
            block = tau * (rot / u2 - 2.0 * np.outer(ju, u) / u2**2)  # ∂(τ J u / |u|²)/∂u
            _scatter_pair(dq, idx, n, block, 1.0)
    return force, dq, dqd


def generalized_force_terms(mech: Mechanism, q: np.ndarray, qd: np.ndarray,
                            jacobians: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Q, ∂Q/∂q, ∂Q/∂q̇) from one call of the compiled kernel (empty derivatives unless ``jacobians``)."""
    a: Arrays = mech.arrays
    return force_terms(np.asarray(q, float), np.asarray(qd, float), a.constants, a.q_force, a.spring_idx,
                       a.spring_par, a.torsion_idx, a.torsion_par, a.torque_idx, a.torque_val, jacobians)


def generalized_forces(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Q(q, q̇) [N, N·m], shape (n,)."""
    return generalized_force_terms(mech, q, qd, False)[0]


def force_jacobians(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(∂Q/∂q, ∂Q/∂q̇), each (n, n)."""
    _, dq, dqd = generalized_force_terms(mech, q, qd, True)
    return dq, dqd


def has_state_forces(mech: Mechanism) -> bool:
    """Whether Q depends on q or q̇ (springs, dampers, body torques)."""
    a = mech.arrays
    return bool(len(a.spring_idx) or len(a.torsion_idx) or len(a.torque_idx))


def potential_energy(mech: Mechanism, q: np.ndarray) -> float:
    """V(q) [J]: gravity (−Q_g · z) plus springs; constant loads and body torques are not included."""
    a = mech.arrays
    z = mech.z(np.asarray(q, float))
    energy = -float(mech.gravity_z @ z)
    for idx, (k, _, rest) in zip(a.spring_idx, a.spring_par):
        energy += 0.5 * k * (np.hypot(z[idx[2]] - z[idx[0]], z[idx[3]] - z[idx[1]]) - rest) ** 2
    for i, (k, _, rest) in zip(a.torsion_idx, a.torsion_par):
        energy += 0.5 * k * (q[i] - rest) ** 2
    return energy


def kinetic_energy(mech: Mechanism, qd: np.ndarray) -> float:
    """T = ½ q̇ᵀ M q̇ [J]."""
    qd = np.asarray(qd, float)
    return 0.5 * float(qd @ mech.arrays.mass @ qd)
