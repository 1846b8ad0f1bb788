"""Small dense rank-revealing linear algebra for the compiled dynamics kernels.

LAPACK's solvers (through numba) stop at a singular matrix; redundant constraints make the saddle
point and projection systems singular but consistent, which complete pivoting handles.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def solve(a: np.ndarray, b: np.ndarray, rank_tol: float = 1e-12) -> np.ndarray:
    """x with a x = b by Gaussian elimination with complete pivoting (rank-revealing).

    Pivots below ``rank_tol`` times the largest entry end the elimination and the remaining
    unknowns are set to zero: a basic solution of a consistent rank-deficient system (redundant
    constraints), the exact solution of a regular one. Inputs are not modified.
    """
    size = a.shape[0]
    u = a.copy()
    y = b.copy()
    perm = np.arange(size)
    scale = np.max(np.abs(u)) if size else 0.0
    rank = size
    for k in range(size):
        best, pi, pj = -1.0, k, k
        for i in range(k, size):
            for j in range(k, size):
                if abs(u[i, j]) > best:
                    best, pi, pj = abs(u[i, j]), i, j
        if best <= rank_tol * scale:
            rank = k
            break
        if pi != k:
            for j in range(size):
                u[k, j], u[pi, j] = u[pi, j], u[k, j]
            y[k], y[pi] = y[pi], y[k]
        if pj != k:
            for i in range(size):
                u[i, k], u[i, pj] = u[i, pj], u[i, k]
            perm[k], perm[pj] = perm[pj], perm[k]
        for i in range(k + 1, size):
            factor = u[i, k] / u[k, k]
            if factor != 0.0:
                for j in range(k, size):
                    u[i, j] -= factor * u[k, j]
                y[i] -= factor * y[k]
    x_perm = np.zeros(size)
    for k in range(rank - 1, -1, -1):
        acc = y[k]
        for j in range(k + 1, rank):
            acc -= u[k, j] * x_perm[j]
        x_perm[k] = acc / u[k, k]
    x = np.empty(size)
    for k in range(size):
        x[perm[k]] = x_perm[k]
    return x


@njit(cache=True)
def pivot_columns(a: np.ndarray, rank_tol: float = 1e-9) -> np.ndarray:
    """Columns of ``a`` spanning its column space, best conditioned first: Gram-Schmidt with
    column pivoting (the pivots of a QR factorization with column pivoting)."""
    work = a.copy()
    cols = a.shape[1]
    chosen = np.zeros(cols, dtype=np.bool_)
    picked = []
    scale = 0.0
    for _ in range(min(a.shape[0], cols)):
        best, k = -1.0, -1
        for j in range(cols):
            if not chosen[j]:
                norm = np.sqrt(np.sum(work[:, j] ** 2))
                if norm > best:
                    best, k = norm, j
        if k < 0:
            break
        scale = max(scale, best)
        if best <= rank_tol * scale:
            break
        chosen[k] = True
        picked.append(k)
        e = work[:, k] / best
        for j in range(cols):
            if not chosen[j]:
                column = work[:, j]
                column -= e * np.sum(e * column)
    return np.array(picked, dtype=np.int64)
