"""Forward dynamics of a spatial model in time, and inverse dynamics along a prescribed motion, as
time series (estimator.timeseries) named after the URDF joints.

Forward: classical Runge-Kutta 4 on (q, q̇) with q̈ from ABA, the joint forces given per step
(zero: free motion under gravity, damping and friction). Every joint coordinate is a plain angle or
length, continuous joints included (no wrap-around).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from estimator.spatial.dynamics import forward_dynamics, inverse_dynamics, workspace
from estimator.spatial.model import SpatialModel
from estimator.timeseries import Trajectory


Accelerations = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (q, q̇, Q) -> q̈


def simulate(model: SpatialModel, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int,
             force: Callable[[float], np.ndarray] | None = None, friction: bool = True,
             accelerations: Accelerations | None = None) -> Trajectory:
    """steps + 1 states at t = 0, dt, …; ``force(t)`` the joint forces Q [N·m or N] (default 0);
    ``accelerations(q, q̇, Q)`` the forward dynamics (default ABA, with ``friction``)."""
    work = workspace(model)
    zero = np.zeros(model.dof)
    at = force or (lambda t: zero)
    solve = accelerations or (lambda x, v, tau: forward_dynamics(model, x, v, tau, friction=friction, work=work))

    def rate(t: float, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return v, solve(x, v, at(t))

    t = dt * np.arange(steps + 1)
    q, qd, qdd = (np.zeros((steps + 1, model.dof)) for _ in range(3))
    q[0], qd[0] = q0, qd0
    for k in range(steps):
        x, v = q[k], qd[k]
        k1 = rate(t[k], x, v)
        qdd[k] = k1[1]
        k2 = rate(t[k] + 0.5 * dt, x + 0.5 * dt * k1[0], v + 0.5 * dt * k1[1])
        k3 = rate(t[k] + 0.5 * dt, x + 0.5 * dt * k2[0], v + 0.5 * dt * k2[1])
        k4 = rate(t[k] + dt, x + dt * k3[0], v + dt * k3[1])
        q[k + 1] = x + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        qd[k + 1] = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    qdd[steps] = rate(t[steps], q[steps], qd[steps])[1]
    return Trajectory(t, model.joint_names, q, qd, qdd)


def driven_step(rate: Accelerations, x: np.ndarray, v: np.ndarray, a1: np.ndarray, h: float, middle: np.ndarray,
                end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One classical Runge-Kutta 4 step (Nyström form) of q̈ = ``rate(q, q̇, a_d)`` from (x, v) with q̈ = a1
    there, the driven joints' accelerations a_d = ``middle`` at the half step and ``end`` at its end."""
    a2 = rate(x + 0.5 * h * v, v + 0.5 * h * a1, middle)
    a3 = rate(x + 0.5 * h * (v + 0.5 * h * a1), v + 0.5 * h * a2, middle)
    a4 = rate(x + h * (v + 0.5 * h * a2), v + h * a3, end)
    return x + h * v + h * h / 6 * (a1 + a2 + a3), v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)


def inverse_trajectory(model: SpatialModel, t: np.ndarray, q: np.ndarray, qd: np.ndarray,
                       qdd: np.ndarray, wrench: np.ndarray | None = None) -> Trajectory:
    """Q at each time by RNEA (gravity, damping and friction included), as ``Q.<joint>`` forces;
    q, qd, qdd (N, n) in the model's joint order; ``wrench`` (N, n, 6): applied body wrenches at each
    time (``dynamics.body_wrenches``), which Q then holds against (Q carries −Jᵀ W)."""
    work = workspace(model)
    loads = [None] * len(t) if wrench is None else wrench
    tau = np.array([inverse_dynamics(model, *row, wrench=load, work=work)
                    for *row, load in zip(q, qd, qdd, loads)]).reshape(len(t), model.dof)
    return Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                      forces={name: tau[:, i] for i, name in enumerate(model.joint_names)})
