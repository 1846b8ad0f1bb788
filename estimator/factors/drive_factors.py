"""Factors of a mechanism with driven coordinates (inverse and hybrid dynamics).

- driven step: every nonlinear relation of one time step in one error function (one GTSAM
  callback per step), the step bundle of estimator.factors.step_bundle with the unknown drive
  forces F on the driven coordinates (E: actuator_selection):

      e = [Φ_S(q);  Φq_S q̇;  M q̈ + Φq_Sᵀ λ − Q(q, q̇) − E F;  Φq_S q̈ − γ_S],   ∂e/∂F = [0; 0; −E; 0].

- drive prior: the prescribed value of the driven coordinates of q, q̇ or q̈ as a native
  ``gtsam.PriorFactorVector`` whose noise model has zero precision on the free coordinates (their
  rows whiten to zero), so GTSAM linearizes it in C++.
"""

from __future__ import annotations

from collections.abc import Sequence

import gtsam
import numpy as np

from estimator.factors.step_bundle import dependent_step_error
from estimator.model import Mechanism


def driven_step_error(mech: Mechanism, rows: np.ndarray, selection: np.ndarray, q: np.ndarray, qd: np.ndarray,
                      qdd: np.ndarray, lam: np.ndarray, f: np.ndarray,
                      jac: bool = True) -> tuple[np.ndarray, list | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E F; Φq_S q̈ − γ_S] (3|S| + n rows; see the module
    docstring); Jacobians wrt (q, q̇, q̈, λ, F)."""
    error, blocks = dependent_step_error(mech, rows, q, qd, qdd, lam, jac)
    dynamics = slice(2 * len(rows), 2 * len(rows) + mech.n)
    error[dynamics] -= selection @ f
    if not jac:
        return error, None
    block_f = np.zeros((error.shape[0], selection.shape[1]))
    block_f[dynamics] = -selection
    return error, [*blocks, block_f]


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
