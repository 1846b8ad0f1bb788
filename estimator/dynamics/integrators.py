"""Explicit Runge-Kutta tableaus (a, b) for the ODE-based forward-dynamics methods."""

from __future__ import annotations

import numpy as np

TABLEAUS: dict[str, tuple[np.ndarray, np.ndarray]] = {
    "euler": (np.zeros((1, 1)), np.array([1.0])),
    "heun": (np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5])),
    "rk4": (np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]),
            np.array([1.0, 2.0, 2.0, 1.0]) / 6.0),
}
