"""Linear error functions as native GTSAM factors: no Python callback when GTSAM linearizes.

A relation e = Σ_i A_i x_i − b (e.g. an integrator, estimator.factors.multistep) is read off its
numpy error function once, at x = 0 (b = −e(0), A_i = ∂e/∂x_i), and stored as a
``gtsam.JacobianFactor`` inside a ``gtsam.LinearContainerFactor`` whose linearization point is
x = 0: GTSAM then linearizes at any x in C++ as A Δx − (b − Σ A_i x_i).
"""

from __future__ import annotations

from collections.abc import Sequence

import gtsam
import numpy as np

from estimator.factors.adapter import ErrorFunction


def native_linear_factor(noise: gtsam.noiseModel.Diagonal, keys: Sequence[int], sizes: Sequence[int],
                         fn: ErrorFunction) -> gtsam.LinearContainerFactor:
    """The native factor of the linear error function ``fn`` over vector variables ``keys`` of ``sizes``."""
    keys = [int(k) for k in keys]
    error, jacobians = fn(*[np.zeros(size) for size in sizes], jac=True)
    terms = [(key, np.asarray(block, float)) for key, block in zip(keys, jacobians)]
    # A GaussianConditional with no frontal variable is a plain Jacobian factor over any number of keys
    # (the Python JacobianFactor constructors stop at three).
    factor = gtsam.JacobianFactor(gtsam.GaussianConditional(terms, 0, -error, noise))
    origin = gtsam.Values()
    for key, size in zip(keys, sizes):
        origin.insert(key, np.zeros(size))
    return gtsam.LinearContainerFactor(factor, origin)
