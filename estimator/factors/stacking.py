"""Several error functions over overlapping variables stacked into one error function.

One factor per time step instead of several saves GTSAM's per-callback overhead. The
stacked error is [e_1; e_2; …]; the Jacobian of variable i is the vertical stack of each part's
Jacobian, zero blocks where a part does not use variable i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.factors.adapter import ErrorFunction


def stack(parts: Sequence[tuple[ErrorFunction, Sequence[int]]], sizes: Sequence[int]) -> ErrorFunction:
    """An error function over variables of dimensions ``sizes``; part (fn, uses) is called with the
    variables listed (by position) in ``uses``."""
    parts = [(fn, tuple(uses)) for fn, uses in parts]
    sizes = tuple(sizes)

    def stacked(*values: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        results = [fn(*[values[i] for i in uses], jac=jac) for fn, uses in parts]
        error = np.concatenate([e for e, _ in results])
        if not jac:
            return error, None
        blocks = [np.zeros((error.shape[0], size)) for size in sizes]
        row = 0
        for (_, uses), (e, part_jac) in zip(parts, results):
            for i, block in zip(uses, part_jac):
                blocks[i][row:row + e.shape[0]] += block
            row += e.shape[0]
        return error, blocks

    return stacked
