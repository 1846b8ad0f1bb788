"""Blocks copied between arrays inside compiled kernels, element by element.

numba compiles an array-valued item assignment (``a[i, :n] = b``, ``a[i] = row``, ``a[s] += b``) with the
formatting of its shape-mismatch message, about 35 numba functions that its cache does not keep: every
process that compiles one such kernel compiles them again, tens of MB (estimator.compile_stages, a first
run's memory). These loops, and in-place operations on a view (``block = a[s]; block += b``), have no
such check."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def put_vector(target: np.ndarray, values: np.ndarray) -> None:
    """target[:] = values (1-D, the same length)."""
    for i in range(values.shape[0]):
        target[i] = values[i]


@njit(cache=True)
def put_matrix(target: np.ndarray, values: np.ndarray) -> None:
    """target[:, :] = values (2-D, the same shape)."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            target[i, j] = values[i, j]
