"""Drive priors of a mechanism with driven coordinates (inverse and hybrid dynamics): the prescribed
value of the driven coordinates of q, q̇ or q̈ as a native ``gtsam.PriorFactorVector`` whose noise
model has zero precision on the free coordinates (their rows whiten to zero), so GTSAM linearizes it
in C++. The step's other relations, with the unknown drive forces F on the driven coordinates, are
the step bundle of estimator.factors.step_bundle.
"""

from __future__ import annotations

from collections.abc import Sequence

import gtsam
import numpy as np


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
