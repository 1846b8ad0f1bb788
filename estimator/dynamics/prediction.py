"""Second-order prediction of a step's state from the steps before it: the initial guess of the
factor graphs and of the online estimator, and the first Newton iterate of the classical solvers.

A state is x = [q; q̇; q̈; rest] (n each; the rest, λ, F or biases, may be empty). The acceleration
q̈_k and the rest are extrapolated from the last states with weights w, oldest first (``HOLD``:
x_{k−1}'s; ``QUADRATIC``: the parabola through x_{k−3}, x_{k−2}, x_{k−1}); q̇_k and q_k then follow
by the Adams-Moulton weights β = h (β_0 … β_{p−1}) of order p (estimator.dynamics.integrators),

    q̈_k = Σ_j w_j q̈_{k−s+j},
    q̇_k = q̇_{k−1} + β_{p−1} q̈_k + Σ_{i<p−1} β_i q̈_{k+1−p+i},
    q_k  = q_{k−1} + β_{p−1} q̇_k + Σ_{i<p−1} β_i q̇_{k+1−p+i}.

With p = 2 (β = (h/2, h/2)) and q̈ held this is the Taylor step q_k = q + h q̇ + h²/2 q̈,
q̇_k = q̇ + h q̈ (``taylor_coefficients``; h may change from step to step).

x_k is linear in the J = max(p − 1, s) states before it: level a of x_k (q, q̇, q̈) is
Σ_j Σ_b C[j, a, b] level b of x_{k−J+j}, and the rest Σ_j C[j, 2, 2] rest of x_{k−J+j}. ``predict``
evaluates that level by level; ``prediction_matrices`` writes C as matrices P_j (x_k = Σ_j P_j x_{k−J+j},
one product per state).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.dynamics.integrators import ADAMS_MOULTON

HOLD = np.array([1.0])  # extrapolation weights, oldest first: x_{k−1}'s acceleration and rest
QUADRATIC = np.array([1.0, -3.0, 3.0])  # through x_{k−3}, x_{k−2}, x_{k−1}
TRAPEZOIDAL = ADAMS_MOULTON[2]


@njit(cache=True)
def prediction_coefficients(beta: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """C (J x 3 x 3) of the prediction with integrator weights ``beta`` (h times Adams-Moulton's, oldest
    first) and extrapolation ``weights`` (module docstring)."""
    order, span = beta.shape[0], weights.shape[0]
    count = max(order - 1, span)
    c = np.zeros((count, 3, 3))
    last = beta[order - 1]
    c[count - 1, 0, 0] += 1.0  # q_{k−1}
    c[count - 1, 1, 1] += 1.0  # q̇_{k−1}
    for j in range(span):  # q̈_k, and through β_{p−1} into q̇_k and q_k
        i = count - span + j
        c[i, 2, 2] += weights[j]
        c[i, 1, 2] += last * weights[j]
        c[i, 0, 2] += last * (last * weights[j])
    c[count - 1, 0, 1] += last  # β_{p−1} q̇_{k−1} of β_{p−1} q̇_k
    for j in range(order - 1):  # the earlier rates
        i = count - (order - 1) + j
        c[i, 1, 2] += beta[j]
        c[i, 0, 1] += beta[j]
        c[i, 0, 2] += last * beta[j]
    return c


@njit(cache=True)
def taylor_coefficients(h: float) -> np.ndarray:
    """C of the Taylor step of length ``h`` [s] from one state: q + h q̇ + h²/2 q̈, q̇ + h q̈, q̈ held."""
    return prediction_coefficients(h * TRAPEZOIDAL, HOLD)


@njit(cache=True)
def predict(coefficients: np.ndarray, past: np.ndarray, n: int) -> np.ndarray:
    """x_k from the J states before it (rows of ``past``, oldest first) by C = ``coefficients``."""
    count, size = past.shape
    x = np.zeros(size)
    for j in range(count):
        for a in range(3):
            for b in range(3):
                weight = coefficients[j, a, b]
                if weight != 0.0:
                    block = x[a * n:(a + 1) * n]
                    block += weight * past[j, b * n:(b + 1) * n]
        if size > 3 * n and coefficients[j, 2, 2] != 0.0:
            rest = x[3 * n:]
            rest += coefficients[j, 2, 2] * past[j, 3 * n:]
    return x


def prediction_matrices(coefficients: np.ndarray, n: int, size: int) -> np.ndarray:
    """The prediction by C = ``coefficients`` as matrices P (J x size x size), x_k = Σ_j P_j x_{k−J+j}."""
    matrices = np.zeros((coefficients.shape[0], size, size))
    diagonal = np.arange(n)
    for j, block in enumerate(coefficients):
        for a in range(3):
            for b in range(3):
                matrices[j, a * n + diagonal, b * n + diagonal] = block[a, b]
        rest = np.arange(3 * n, size)
        matrices[j, rest, rest] = block[2, 2]
    return matrices
