"""Forward dynamics: one entry point over the classical methods.

``lagrange`` (multipliers, Baumgarte + projection, explicit Runge-Kutta), ``ali3`` (index-3
augmented Lagrangian, trapezoidal rule, projections) and ``rmatrix`` (independent coordinates,
explicit Runge-Kutta). Initial conditions are made consistent first: positions assembled with the
given coordinates held, velocities projected on Φq q̇ = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_jacobian
from estimator.dynamics import ali3, lagrange, rmatrix
from estimator.dynamics.integrators import TABLEAUS
from estimator.errors import MbstateError
from estimator.forces import generalized_forces, has_state_forces
from estimator.kinematics import (RANK_TOLERANCE, independent_coordinates, solve_position_problem,
                                  solve_velocity_problem)
from estimator.model import Mechanism
from estimator.timeseries import Trajectory

METHODS = ("ali3", "lagrange", "rmatrix")


@dataclass(frozen=True)
class ForwardOptions:
    """Method parameters. ``penalty`` (ALi3's α) defaults to 1000·max|M|·4/h², which keeps the
    penalty term a thousand times the inertia in f_q; ``baumgarte`` is (ω [1/s], ξ); ``tol`` bounds
    the Newton steps of ALi3 and the position projections [m or rad]."""

    method: str = "ali3"
    integrator: str = "rk4"
    penalty: float | None = None
    baumgarte: tuple[float, float] = (10.0, 1.0)
    projection: bool = True
    tol: float = 1e-10
    max_iter: int = 20

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise MbstateError(f"unknown method '{self.method}' (choose from {', '.join(METHODS)})")
        if self.integrator not in TABLEAUS:
            raise MbstateError(f"unknown integrator '{self.integrator}' (choose from {', '.join(TABLEAUS)})")


def consistent_initial_state(mech: Mechanism, q_guess: np.ndarray, qd_guess: np.ndarray,
                             held: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Assembled q (held coordinates kept) and q̇ projected on Φq q̇ = 0 (held velocities kept)."""
    q = solve_position_problem(mech, q_guess, held)
    if not held:
        held = tuple(independent_coordinates(mech, q))
    qd = solve_velocity_problem(mech, q, np.asarray(qd_guess, float)[list(held)], held)
    return q, qd


def multipliers(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """λ from Φqᵀ λ = Q − M q̈ (least squares, minimum norm for redundant constraints)."""
    residual = generalized_forces(mech, q, qd) - mech.arrays.mass @ qdd
    return np.linalg.lstsq(constraint_jacobian(mech, q).T, residual, rcond=1e-9)[0]


def integrate(mech: Mechanism, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int,
              options: ForwardOptions = ForwardOptions()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, q̇, q̈ at steps 0..steps (each (steps+1, n)) from a consistent (q0, q̇0), step ``dt`` [s]."""
    if dt <= 0.0 or steps < 1:
        raise MbstateError(f"need dt > 0 and at least one step (dt={dt}, steps={steps})")
    ar = mech.arrays
    q0, qd0 = np.asarray(q0, float), np.asarray(qd0, float)
    if options.method == "ali3":
        qdd0, _ = lagrange.accelerations(ar, q0, qd0, 0.0, 0.0)
        penalty = options.penalty or 1000.0 * np.max(np.abs(ar.mass)) * 4.0 / dt**2
        qs, qds, qdds, _ = ali3.simulate(ar, q0, qd0, qdd0, dt, steps, penalty, options.tol, options.max_iter,
                                         has_state_forces(mech))
        return qs, qds, qdds
    a, b = TABLEAUS[options.integrator]
    if options.method == "lagrange":
        omega, xi = options.baumgarte
        return lagrange.simulate(ar, q0, qd0, dt, steps, a, b, omega, xi, options.projection, options.tol)
    return rmatrix.simulate(ar, q0, qd0, dt, steps, a, b, options.tol, RANK_TOLERANCE)


def simulate(mech: Mechanism, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int,
             options: ForwardOptions = ForwardOptions(), substeps: int = 1) -> Trajectory:
    """:func:`integrate` at dt/``substeps``, sampled every ``dt`` (steps+1 samples), with λ recovered at
    every sample, as a Trajectory starting at t = 0 (copies of the samples: the substeps are not kept)."""
    if substeps < 1:
        raise MbstateError(f"need at least one substep per step (substeps={substeps})")
    qs, qds, qdds = (x[::substeps].copy() for x in integrate(mech, q0, qd0, dt / substeps, steps * substeps, options))
    finite = np.all(np.isfinite(qs) & np.isfinite(qds) & np.isfinite(qdds), axis=1)
    if not finite.all():
        raise MbstateError(f"the {options.method} integration diverged: the state is not finite from t = "
                           f"{dt * int(np.argmin(finite)):g} s on (a smaller dt, or another method)")
    lam = np.empty((steps + 1, mech.m))
    for k in range(steps + 1):  # one step's temporaries at a time, not a list of them all
        lam[k] = multipliers(mech, qs[k], qds[k], qdds[k])
    return Trajectory(t=dt * np.arange(steps + 1), coordinate_names=mech.coordinate_names, q=qs, qd=qds, qdd=qdds,
                      lam=lam)
