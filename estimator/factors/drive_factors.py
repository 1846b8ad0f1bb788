"""Factors of a mechanism with driven coordinates (inverse and hybrid dynamics).

- driven step: every nonlinear relation of one time step in one error function (one GTSAM
  callback per step, compiled): the step bundle of estimator.factors.step_bundle with the unknown
  forces F on the driven coordinates d (E = the columns d of the identity),

      e = [Φ_S(q);  Φq_S q̇;  M q̈ + Φq_Sᵀ λ − Q(q, q̇) − E F;  Φq_S q̈ + s_S]       (3|S| + n rows)

  with s_r = q̇ᵀ Φqq_r q̇ (= −γ_r) and S a maximal independent subset of the constraint rows, so λ
  has |S| entries. Jacobians (Φqq·x = Σ_j Φqq[:, :, j] x_j):

      ∂/∂q  = [Φq_S;  Φqq_S·q̇;  Σ_r λ_r Φqq_r − ∂Q/∂q;  Φqq_S·q̈ + ∂s_S/∂q],
      ∂/∂q̇ = [0;  Φq_S;  −∂Q/∂q̇;  2 Φqq_S·q̇],   ∂/∂q̈ = [0; 0; M; Φq_S],
      ∂/∂λ = [0; 0; Φq_Sᵀ; 0],   ∂/∂F = [0; 0; −E; 0].

  One compiled call computes error and Jacobians (a numpy bundle of the same sums costs several
  times more, mostly Python overhead), which keeps the GTSAM callback near its fixed overhead.

- drive prior: the prescribed value of the driven coordinates of q, q̇ or q̈ as a native
  ``gtsam.PriorFactorVector`` whose noise model has zero precision on the free coordinates (their
  rows whiten to zero), so GTSAM linearizes it in C++.
"""

from __future__ import annotations

from collections.abc import Sequence

import gtsam
import numpy as np
from numba import njit

from estimator.constraints import constraint_terms, velocity_term_gradient
from estimator.forces import force_terms
from estimator.model import Mechanism


@njit(cache=True)
def _driven_step(ar, rows, driven, q, qd, qdd, lam, f, jac):
    """Error (3|S| + n) and, if ``jac``, the Jacobian over [q, q̇, q̈, λ, F] in one matrix."""
    n, size = q.shape[0], rows.shape[0]
    phi, phi_q, phi_qq = constraint_terms(q, ar.constants, ar.c_kind, ar.c_idx, ar.c_coef, True)
    force, d_q, d_qd = force_terms(q, qd, ar.constants, ar.q_force, ar.spring_idx, ar.spring_par, ar.torsion_idx,
                                   ar.torsion_par, ar.torque_idx, ar.torque_val, jac)
    dyn, acc = 2 * size, 2 * size + n
    error = np.empty(3 * size + n)
    jacobian = np.zeros((3 * size + n, 3 * n + size + driven.shape[0]) if jac else (0, 0))
    if jac:
        s_q = velocity_term_gradient(q, qd, ar.constants, ar.c_kind, ar.c_idx)
        jacobian[dyn:acc, :n] = -d_q
    balance = ar.mass @ qdd - force
    for i in range(size):
        r = rows[i]
        rate = phi_qq[r] @ qd  # row r of Φ̇q
        error[i] = phi[r]
        error[size + i] = phi_q[r] @ qd
        error[acc + i] = phi_q[r] @ qdd + rate @ qd
        balance += lam[i] * phi_q[r]
        if jac:
            jacobian[i, :n] = phi_q[r]
            jacobian[size + i, :n] = rate
            jacobian[size + i, n:2 * n] = phi_q[r]
            jacobian[acc + i, :n] = phi_qq[r] @ qdd + s_q[r]
            jacobian[acc + i, n:2 * n] = 2.0 * rate
            jacobian[acc + i, 2 * n:3 * n] = phi_q[r]
            jacobian[dyn:acc, :n] += lam[i] * phi_qq[r]
            jacobian[dyn:acc, 3 * n + i] = phi_q[r]
    for j in range(driven.shape[0]):
        balance[driven[j]] -= f[j]
        if jac:
            jacobian[dyn + driven[j], 3 * n + size + j] = -1.0
    error[dyn:acc] = balance
    if jac:
        jacobian[dyn:acc, n:2 * n] = -d_qd
        jacobian[dyn:acc, 2 * n:3 * n] = ar.mass
    return error, jacobian


def driven_step_error(mech: Mechanism, rows: np.ndarray, driven: np.ndarray, q: np.ndarray, qd: np.ndarray,
                      qdd: np.ndarray, lam: np.ndarray, f: np.ndarray,
                      jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E F; Φq_S q̈ − γ_S] over the constraint rows ``rows``
    (S) and the driven coordinate indices ``driven`` (see the module docstring); Jacobians wrt
    (q, q̇, q̈, λ, F)."""
    error, jacobian = _driven_step(mech.arrays, rows, driven, q, qd, qdd, lam, f, jac)
    if not jac:
        return error, None
    n, size = mech.n, rows.shape[0]
    edges = (0, n, 2 * n, 3 * n, 3 * n + size, jacobian.shape[1])
    return error, [jacobian[:, a:b] for a, b in zip(edges[:-1], edges[1:])]


def driven_step_sigmas(mech: Mechanism, rows: np.ndarray, position: float, velocity: float, dynamics: float,
                       acceleration: float) -> np.ndarray:
    """Standard deviations of the rows of :func:`driven_step_error`, block by block."""
    size = len(rows)
    return np.concatenate((np.full(size, position), np.full(size, velocity), np.full(mech.n, dynamics),
                           np.full(size, acceleration)))


def drive_prior_noise(n: int, driven: Sequence[int], sigma: float) -> gtsam.noiseModel.Diagonal:
    """Diagonal noise with precision 1/σ² on the driven coordinates and 0 on the others."""
    precisions = np.zeros(n)
    precisions[list(driven)] = sigma**-2
    return gtsam.noiseModel.Diagonal.Precisions(precisions)


def drive_prior(key: int, n: int, driven: Sequence[int], values: np.ndarray,
                noise: gtsam.noiseModel.Diagonal) -> gtsam.PriorFactorVector:
    """Native prior x[driven] = values on the n-vector ``key`` (noise from :func:`drive_prior_noise`)."""
    mean = np.zeros(n)
    mean[list(driven)] = values
    return gtsam.PriorFactorVector(key, mean, noise)
