"""Adams-Moulton integrator factors between a variable x and its rate ẋ (q/q̇ or q̇/q̈), step h:

    e = x_{k+1} − x_k − h Σ_j β_j ẋ_{k+2−p+j},  j = 0 … p−1, over the p steps k+2−p … k+1,

with the weights β of order p = 2 (trapezoidal), 3 or 4 (estimator.dynamics.integrators). The error
is linear in the variables (estimator.factors.native makes it a native GTSAM factor). ``selection``
E (rows, e.g. the picker of independent coordinates) restricts it to e = E (x_{k+1} − …). A run
starts with the lower orders.
"""

from __future__ import annotations

import numpy as np

from estimator.dynamics.integrators import ADAMS_MOULTON


def adams_moulton_error(order: int, dt: float, x0: np.ndarray, x1: np.ndarray, *rates: np.ndarray, jac: bool = True,
                        selection: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = E (x1 − x0 − dt Σ_j β_j rates_j), rates oldest first (module docstring); Jacobians wrt
    (x0, x1, *rates)."""
    beta = dt * ADAMS_MOULTON[order]
    if len(rates) != order:
        raise ValueError(f"Adams-Moulton of order {order} takes {order} rates, got {len(rates)}")
    error = x1 - x0
    for weight, rate in zip(beta, rates):
        error = error - weight * rate
    pick = np.eye(x0.shape[0]) if selection is None else selection
    if selection is not None:
        error = selection @ error
    if not jac:
        return error, None
    return error, [-pick, pick, *[-weight * pick for weight in beta]]
