"""A single-variable error function that remembers its last linearization and, while a switch is
on, answers relinearizations from it instead of evaluating the model (the online estimator's first
degradation level: "fewer relinearizations").

    repeated x (any time):     the remembered (e, J), as estimator.factors.memo.remember_last;
    new x, switch on:          e ≈ e0 + J0 (x − x0), J0   (first order about the last linearization x0);
    new x, switch off:         fn(x), remembered.

GTSAM then still calls the factor, but the callback costs a matrix-vector product, not a model
evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.factors.adapter import ErrorFunction


@dataclass
class FreezeSwitch:
    """Shared by every factor of an estimator; ``on`` freezes their linearizations."""

    on: bool = False


def freezable(fn: ErrorFunction, switch: FreezeSwitch,
              known: tuple[np.ndarray, tuple[np.ndarray, list[np.ndarray]]] | None = None) -> ErrorFunction:
    """``fn(x, jac)`` of one vector variable with the memory and the frozen mode of the module docstring;
    ``known`` = (x0, (e0, [J0])) fills the memory with a linearization already computed."""
    last: list = [None, None, None]  # bytes of x0, x0, (e0, [J0])
    if known is not None:
        last[:] = known[0].tobytes(), known[0], known[1]

    def remembered(x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        key = x.tobytes()
        if key == last[0]:
            return last[2] if jac else (last[2][0], None)
        if switch.on and last[0] is not None:
            error, (jacobian,) = last[2]
            error = error + jacobian @ (x - last[1])
            return (error, [jacobian]) if jac else (error, None)
        result = fn(x, jac=jac)
        if jac:
            last[0], last[1], last[2] = key, x.copy(), result
        return result

    return remembered
