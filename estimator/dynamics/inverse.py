"""Classical inverse dynamics: the generalized forces on driven coordinates that make a mechanism
follow their prescribed motion (García de Jalón and Bayo, ch. 6).

At each time t the driven coordinates are held at their prescribed values and the position,
velocity and acceleration problems give q, q̇, q̈ of the whole mechanism. The equations of motion

    M q̈ + Φqᵀ λ = Q(q, q̇) + E_d Q_d,

with E_d (n x k) the columns of the identity of the k driven coordinates, are then solved for the
multipliers λ and the drive forces Q_d by least squares,

    [Φqᵀ | −E_d] [λ; Q_d] = Q − M q̈,

rank-revealing (SVD): with redundant constraints λ is the minimum-norm choice and Q_d, which is
unique whenever the drives are independent coordinates, is unaffected.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_jacobian
from estimator.dynamics.prediction import predict, taylor_coefficients
from estimator.errors import MbstateError
from estimator.forces import generalized_forces
from estimator.kinematics import (RANK_TOLERANCE, AssemblyError, constraint_rank, solve_acceleration_problem,
                                  solve_position_problem, solve_velocity_problem)
from estimator.model import Mechanism
from estimator.timeseries import Trajectory


@dataclass(frozen=True)
class InverseDynamicsResult:
    """The solved trajectory and the wall time spent per time point [s]."""

    trajectory: Trajectory
    seconds_per_point: float


def drive_indices(mech: Mechanism, drives: Sequence[str]) -> list[int]:
    """Coordinate indices of the driven coordinates; MbstateError for unknown or repeated names."""
    if not drives:
        raise MbstateError("no driven coordinate given")
    if len(set(drives)) != len(drives):
        raise MbstateError(f"a driven coordinate is repeated: {', '.join(drives)}")
    try:
        return [mech.index(name) for name in drives]
    except KeyError as exc:
        raise MbstateError(exc.args[0]) from None


def multipliers_and_drive_forces(jac: np.ndarray, rhs: np.ndarray,
                                 driven: Sequence[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(λ, Q_d, rank) with Φqᵀ λ − E_d Q_d = rhs by SVD least squares (minimum-norm λ if Φq is rank
    deficient); rank = n iff the driven coordinates fix the mechanism."""
    n, m = jac.shape[1], jac.shape[0]
    system = np.zeros((n, m + len(driven)))
    system[:, :m] = jac.T
    system[driven, m + np.arange(len(driven))] = -1.0
    solution, _, rank, _ = np.linalg.lstsq(system, rhs, rcond=RANK_TOLERANCE)
    return solution[:m], solution[m:], int(rank)


def drive_forces_at(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    driven: Sequence[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(λ, Q_d, rank) of the state (q, q̇, q̈): [Φqᵀ | −E_d] [λ; Q_d] = Q(q, q̇) − M q̈
    (``multipliers_and_drive_forces``)."""
    rhs = generalized_forces(mech, q, qd) - mech.arrays.mass @ qdd
    return multipliers_and_drive_forces(constraint_jacobian(mech, q), rhs, driven)


def check_drive_count(mech: Mechanism, q: np.ndarray, driven: Sequence[int]) -> None:
    """As many drives as degrees of freedom (n − rank Φq) at the assembled configuration q."""
    dof = mech.n - constraint_rank(mech, q)
    if dof != len(driven):
        names = ", ".join(mech.coordinate_names[i] for i in driven)
        raise MbstateError(f"the mechanism has {dof} degree{'s' if dof != 1 else ''} of freedom but "
                           f"{len(driven)} driven coordinate{'s' if len(driven) != 1 else ''} ({names}) were given")


def inverse_dynamics(mech: Mechanism, drives: Sequence[str], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                     acc: np.ndarray) -> InverseDynamicsResult:
    """Solve the inverse dynamics along prescribed driven-coordinate motion.

    ``pos``, ``vel``, ``acc`` are (N, k) for the k coordinates named in ``drives`` at times ``t`` (N,).
    Returns q, q̇, q̈ (N, n), λ (N, m) and ``forces[name]`` = Q_d (N,) [N or N·m] applied on each
    driven coordinate. Each position problem starts from the previous solution extrapolated to
    second order (the Taylor step of estimator.dynamics.prediction); the first from ``mech.q0``
    assembled, with the driven values. Raises MbstateError.
    """
    driven = drive_indices(mech, drives)
    t = np.asarray(t, float)
    pos, vel, acc = (np.asarray(a, float).reshape(len(t), len(driven)) for a in (pos, vel, acc))
    count, n = len(t), mech.n
    q, qd, qdd = np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, n))
    lam, forces = np.zeros((count, mech.m)), np.zeros((count, len(driven)))
    started = time.perf_counter()
    try:
        guess = solve_position_problem(mech, mech.q0)
    except AssemblyError as exc:
        raise MbstateError(f"the file's coordinates: {exc}") from None
    check_drive_count(mech, guess, driven)
    for i in range(count):
        guess[driven] = pos[i]
        try:
            q[i] = solve_position_problem(mech, guess, driven)
        except AssemblyError as exc:
            raise MbstateError(f"at t = {t[i]:g} s: {exc}") from None
        qd[i] = solve_velocity_problem(mech, q[i], vel[i], driven)
        qdd[i] = solve_acceleration_problem(mech, q[i], qd[i], acc[i], driven)
        lam[i], forces[i], rank = drive_forces_at(mech, q[i], qd[i], qdd[i], driven)
        if rank < n:
            names = ", ".join(drives)
            raise MbstateError(f"at t = {t[i]:g} s: the driven coordinates ({names}) do not fix the mechanism "
                               "(singular configuration)")
        if i + 1 < count:
            state = np.concatenate((q[i], qd[i], qdd[i]))[None]
            guess = predict(taylor_coefficients(t[i + 1] - t[i]), state, n)[:n]
    elapsed = time.perf_counter() - started
    trajectory = Trajectory(t=t, coordinate_names=mech.coordinate_names, q=q, qd=qd, qdd=qdd,
                            forces={mech.coordinate_names[c]: forces[:, k] for k, c in enumerate(driven)}, lam=lam)
    return InverseDynamicsResult(trajectory=trajectory, seconds_per_point=elapsed / max(count, 1))
