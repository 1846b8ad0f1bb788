"""Linear multistep integrator factors between a variable x and its rate ẋ (q/q̇ or q̇/q̈), step h.

Adams-Moulton of order 3 (two steps, implicit), over three consecutive steps k−1, k, k+1:

    e = x_{k+1} − x_k − h/12 (5 ẋ_{k+1} + 8 ẋ_k − ẋ_{k−1})       (local error −h⁴/24 x⁗)

against the trapezoidal rule's x_{k+1} − x_k − h/2 (ẋ_{k+1} + ẋ_k) (local error −h³/12 x‴), which
is Adams-Moulton of order 2 and starts the sequence at the first step. The error is linear in the
variables; ``selection`` (rows E, e.g. the picker of independent coordinates) restricts it to E x:
e = E (x_{k+1} − x_k − …).
"""

from __future__ import annotations

import numpy as np

ADAMS_MOULTON_3 = np.array([-1.0, 8.0, 5.0]) / 12.0  # weights of ẋ_{k−1}, ẋ_k, ẋ_{k+1}


def adams_moulton3_error(dt: float, x0: np.ndarray, x1: np.ndarray, rate_prev: np.ndarray, rate0: np.ndarray,
                         rate1: np.ndarray, jac: bool = True,
                         selection: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = E (x1 − x0 − dt/12 (5 rate1 + 8 rate0 − rate_prev)); Jacobians wrt (x0, x1, rate_prev, rate0, rate1)."""
    w_prev, w0, w1 = dt * ADAMS_MOULTON_3
    error = x1 - x0 - (w1 * rate1 + w0 * rate0 + w_prev * rate_prev)
    pick = np.eye(x0.shape[0]) if selection is None else selection
    if selection is not None:
        error = selection @ error
    if not jac:
        return error, None
    return error, [-pick, pick, -w_prev * pick, -w0 * pick, -w1 * pick]
