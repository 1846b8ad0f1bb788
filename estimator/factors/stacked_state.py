"""Factors on one stacked state variable per step, x_k = [q; q̇; q̈; extra] (extra: λ, or nothing).

One variable per step instead of four cuts GTSAM's per-variable bookkeeping, which dominates the
iSAM2 fixed-lag update of small states and grows with the window (docs/performance.md).
Error functions written for separate variables (estimator.factors.step_bundle, .multistep) are
lifted to stacked states here: the error is unchanged, the Jacobian wrt x is [∂e/∂q, ∂e/∂q̇, ∂e/∂q̈, ∂e/∂extra].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.factors.adapter import ErrorFunction


@dataclass(frozen=True)
class StateLayout:
    """x = [q (n); q̇ (n); q̈ (n); extra (extra)]."""

    n: int
    extra: int = 0

    @property
    def size(self) -> int:
        return 3 * self.n + self.extra

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """[q, q̇, q̈] or [q, q̇, q̈, extra] (views)."""
        n = self.n
        parts = [x[:n], x[n:2 * n], x[2 * n:3 * n]]
        return parts + [x[3 * n:]] if self.extra else parts


def on_state(layout: StateLayout, fn: ErrorFunction) -> ErrorFunction:
    """e(x) = fn(q, q̇, q̈[, extra]) with ∂e/∂x the blocks side by side."""

    def stacked(x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        error, blocks = fn(*layout.split(x), jac=jac)
        return error, [np.hstack(blocks)] if jac else None

    return stacked


def integrator_on_states(layout: StateLayout, fn: ErrorFunction, steps: int) -> ErrorFunction:
    """e(x_1, …, x_p) = [fn(q_{p−1}, q_p, q̇_1, …, q̇_p); fn(q̇_{p−1}, q̇_p, q̈_1, …, q̈_p)] over p = ``steps``
    consecutive states, oldest first, for an integrator ``fn`` of (x0, x1, *rates) (estimator.factors.multistep)."""
    n = layout.n

    def stacked(*states: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        levels = [fn(states[-2][lo:lo + n], states[-1][lo:lo + n], *[x[lo + n:lo + 2 * n] for x in states], jac=jac)
                  for lo in (0, n)]
        error = np.concatenate([e for e, _ in levels])
        if not jac:
            return error, None
        blocks = [np.zeros((error.shape[0], layout.size)) for _ in range(steps)]
        row = 0
        for lo, (e, jacobians) in zip((0, n), levels):
            rows = slice(row, row + e.shape[0])
            blocks[-2][rows, lo:lo + n] += jacobians[0]
            blocks[-1][rows, lo:lo + n] += jacobians[1]
            for block, d_rate in zip(blocks, jacobians[2:]):
                block[rows, lo + n:lo + 2 * n] += d_rate
            row += e.shape[0]
        return error, blocks

    return stacked
