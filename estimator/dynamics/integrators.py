"""Integrator coefficients: explicit Runge-Kutta tableaus (a, b) for the ODE-based forward-dynamics
methods, and the Adams-Moulton weights of the factor graphs and of the prediction.

Adams-Moulton of order p over the p steps k+2−p … k+1 (Hairer, Nørsett and Wanner, Solving ODEs I,
III.1): x_{k+1} = x_k + h Σ_j β_j ẋ_{k+2−p+j}, j = 0 … p−1, with β

    order p = 2:  (1, 1)/2               trapezoidal rule,  local error −h³/12 x‴
    order p = 3:  (−1, 8, 5)/12                              local error −h⁴/24 x⁗
    order p = 4:  (1, −5, 19, 9)/24                          local error −19 h⁵/720 x⁽⁵⁾
"""

from __future__ import annotations

import numpy as np

TABLEAUS: dict[str, tuple[np.ndarray, np.ndarray]] = {
    "euler": (np.zeros((1, 1)), np.array([1.0])),
    "heun": (np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5])),
    "rk4": (np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]),
            np.array([1.0, 2.0, 2.0, 1.0]) / 6.0),
}
ADAMS_MOULTON: dict[int, np.ndarray] = {2: np.array([1.0, 1.0]) / 2.0, 3: np.array([-1.0, 8.0, 5.0]) / 12.0,
                                        4: np.array([1.0, -5.0, 19.0, 9.0]) / 24.0}
