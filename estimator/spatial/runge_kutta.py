"""Butcher's explicit Runge-Kutta scheme of order 6 with seven stages (J. C. Butcher, "On Runge-Kutta
processes of high order", J. Austral. Math. Soc. 4 (1964) 179-194) on q̈ = a(c, q, q̇) as the
first-order system y = (q, q̇), ẏ = (q̇, a): local error O(h⁷), global O(h⁶) against classical RK4's
O(h⁴), for seven evaluations of a per step instead of four. The stage loop is the planar
integrators' (estimator.dynamics.kernels.rk_stage_state, rk_combine).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from estimator.dynamics.kernels import rk_combine, rk_stage_state, rk_stages

A = np.array([[0.0] * 7,
              [1 / 3, 0, 0, 0, 0, 0, 0],
              [0, 2 / 3, 0, 0, 0, 0, 0],
              [1 / 12, 1 / 3, -1 / 12, 0, 0, 0, 0],
              [-1 / 16, 9 / 8, -3 / 16, -3 / 8, 0, 0, 0],
              [0, 9 / 8, -3 / 8, -3 / 4, 1 / 2, 0, 0],
              [9 / 44, -9 / 11, 63 / 44, 18 / 11, 0, -16 / 11, 0]])
B = np.array([11 / 120, 0, 27 / 40, 27 / 40, -4 / 15, -4 / 15, 11 / 120])
C = A.sum(axis=1)  # the stages' fractions of the step: 0, 1/3, 2/3, 1/3, 1/2, 1/2, 1

Rate = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


def step(rate: Rate, q: np.ndarray, qd: np.ndarray, h: float, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) one step ``h`` on: ``rate(c, q, q̇)`` the accelerations at the fraction c of the step,
    ``first`` those at its start (c = 0, already known to the caller)."""
    n = len(q)
    y = np.concatenate((q, qd))
    k = rk_stages(np.concatenate((qd, first)), B)
    for i in range(1, len(B)):
        state = rk_stage_state(y, k, h, A, i)
        k[i, :n], k[i, n:] = state[n:], rate(float(C[i]), state[:n], state[n:])
    out = rk_combine(y, k, h, B)
    return out[:n], out[n:]
