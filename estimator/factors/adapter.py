"""The one adapter from a numpy error function to a ``gtsam.CustomFactor``.

GTSAM calls the callback with ``jacobians=None`` when it only needs the error (``error()``) and
with a list to fill when it linearizes; the error function is asked for Jacobians only then.
GTSAM whitens error and Jacobians with the noise model; the error function never sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gtsam
import numpy as np

ErrorFunction = Callable[..., tuple[np.ndarray, list[np.ndarray] | None]]


def gtsam_factor(noise: gtsam.noiseModel.Base, keys: Sequence[int], fn: ErrorFunction) -> gtsam.CustomFactor:
    """A CustomFactor on vector variables ``keys`` with unwhitened error ``fn(*values, jac=...)``."""
    keys = [int(k) for k in keys]

    def callback(_factor: gtsam.CustomFactor, values: gtsam.Values, jacobians: list | None) -> np.ndarray:
        error, jac = fn(*[values.atVector(k) for k in keys], jac=jacobians is not None)
        if jacobians is not None:
            for i, block in enumerate(jac):
                jacobians[i] = block
        return error

    return gtsam.CustomFactor(noise, gtsam.KeyVector(keys), callback)
