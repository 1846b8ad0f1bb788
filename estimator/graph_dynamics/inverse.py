"""Inverse dynamics as a factor graph (Blanco-Claraco, Leanza and Reina 2021, section 5), solved
in batch with GTSAM.

Variables per time step k: q_k, q̇_k, q̈_k, λ_k (the |S| multipliers of a maximal independent
subset S of the constraint rows: redundant rows, as the pick-and-place robot's, leave no free
multiplier) and the drive forces F_k. Factors per step:

- one step factor (estimator.factors.step_bundle): position, velocity and acceleration
  constraints and the inverse-dynamics equation M q̈ + Φqᵀ λ − Q − E F = 0, one Python callback;
- native priors on the driven coordinates of q_k (from the trajectory samples) and, with
  ``drive_rates="prior"`` (default), of q̇_k and q̈_k (from the smooth local fit of the samples,
  the classical method's input);
- with ``drive_rates="integrators"`` (the paper's graph) instead: trapezoidal integrators
  q–q̇ and q̇–q̈ between consecutive steps on every coordinate (native linear factors), so that
  velocities and accelerations come from the sampled positions alone.

With priors on the drive rates the graph is block diagonal in time and every block is square:
its solution does not depend on the standard deviations, which only scale the rows (chosen, in
SI units, so that whitened rows are of comparable size). The integrators couple the steps and make
the system overdetermined (a finite-difference scheme against the constraints): there the
integrators' σ is their weight against the drive priors.

Staged initialization, the paper's four passes (positions with drive priors and constraints;
velocities and accelerations; velocity constraints; forces), is the compiled step-by-step solution
of estimator.dynamics.driven_states (each pass's graph is block diagonal without integrators, so
its batch solution is one small square solve per step). The graph is then solved by Gauss-Newton
(``graph.linearize`` and multifrontal elimination, ordering and factorization as chosen) until the
largest update is below ``step_tolerance``: from the staged solution one iteration confirms it
when the drive rates are priors; the integrator graph moves q̇, q̈, λ, F and needs a few.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import gtsam
import numpy as np

from estimator.dynamics.driven_states import driven_states
from estimator.dynamics.inverse import InverseDynamicsResult, check_drive_count, drive_indices
from estimator.errors import MbstateError
from estimator.factors import keys
from estimator.factors.adapter import gtsam_factor
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.drive_factors import drive_prior, drive_prior_noise
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.integrators import trapezoidal_error
from estimator.factors.native import native_linear_factor
from estimator.factors.step_bundle import dependent_step_error, step_sigmas
from estimator.kinematics import AssemblyError, solve_position_problem
from estimator.model import Mechanism
from estimator.smoother import FACTORIZATIONS
from estimator.timeseries import Trajectory

DRIVE_RATES = ("prior", "integrators")
ORDERINGS = {"COLAMD": gtsam.Ordering.ColamdGaussianFactorGraph, "METIS": gtsam.Ordering.MetisGaussianFactorGraph,
             "NATURAL": gtsam.Ordering.NaturalGaussianFactorGraph}


@dataclass(frozen=True)
class FGOptions:
    """Graph and solver settings.

    Standard deviations in SI units: ``sigma_position`` [m] for Φ and the drive priors on q,
    ``sigma_velocity`` [m/s] for Φq q̇ and the priors on q̇, ``sigma_acceleration`` [m/s²] for the
    acceleration constraints and the priors on q̈, ``sigma_dynamics`` [N] for the equations of
    motion, ``sigma_integrator`` [m, m/s] for the trapezoidal integrators. ``ordering``: COLAMD,
    METIS or NATURAL elimination order; ``factorization``: CHOLESKY or QR multifrontal elimination.
    Gauss-Newton stops when max |Δ| <= ``step_tolerance`` · (1 + the largest initial |value|) (one
    relative bound for positions and forces alike: from the staged solution the update is round-off).
    """

    drive_rates: str = "prior"
    sigma_position: float = 1e-8
    sigma_velocity: float = 1e-7
    sigma_acceleration: float = 1e-6
    sigma_dynamics: float = 1e-5
    sigma_integrator: float = 1e-8
    ordering: str = "COLAMD"
    factorization: str = "CHOLESKY"
    max_iterations: int = 10
    step_tolerance: float = 1e-10
    position_tolerance: float = 1e-12

    def __post_init__(self) -> None:
        for name, value, allowed in (("drive rates", self.drive_rates, DRIVE_RATES),
                                     ("ordering", self.ordering, tuple(ORDERINGS)),
                                     ("factorization", self.factorization, FACTORIZATIONS)):
            if value not in allowed:
                raise MbstateError(f"unknown {name} '{value}' (choose from {', '.join(allowed)})")


@dataclass(frozen=True)
class FGInverseResult(InverseDynamicsResult):
    """The solution, with the Gauss-Newton iterations, the largest last update and the wall time
    of each phase [s] (``staged``, ``build``, ``solve``)."""

    iterations: int
    last_step: float
    phase_seconds: dict[str, float]


@dataclass(frozen=True)
class DrivenProblem:
    """A mechanism with its driven coordinates, independent constraint rows S and the assembled
    configuration at the first sample."""

    mech: Mechanism
    driven: np.ndarray
    rows: np.ndarray
    q_start: np.ndarray


def driven_problem(mech: Mechanism, drives: Sequence[str], first: np.ndarray) -> DrivenProblem:
    """Check the drives (names, count = degrees of freedom) and assemble the mechanism with the
    driven coordinates at ``first`` (k,) from the file's coordinates; raises MbstateError."""
    driven = drive_indices(mech, drives)
    guess = mech.q0.copy()
    guess[driven] = first
    try:
        q_start = solve_position_problem(mech, guess, driven)
    except AssemblyError as exc:
        raise MbstateError(f"at the first sample: {exc}") from None
    check_drive_count(mech, q_start, driven)
    return DrivenProblem(mech, np.array(driven), independent_constraint_rows(mech, q_start), q_start)


def staged_solution(problem: DrivenProblem, t: np.ndarray, pos: np.ndarray, vel: np.ndarray, acc: np.ndarray,
                    tol: float = 1e-12) -> tuple[np.ndarray, ...]:
    """q, q̇, q̈ (N, n), λ (N, m), F (N, k) of the staged passes; MbstateError if a position
    problem fails (the drives do not fix the mechanism there, or it cannot be assembled)."""
    *states, failed = driven_states(problem.mech.arrays, problem.driven, problem.rows, problem.q_start, pos, vel,
                                    acc, t, tol, 50)
    if failed >= 0:
        raise MbstateError(f"at t = {t[failed]:g} s: the position problem does not converge (singular "
                           "configuration, or the trajectory leaves the mechanism's workspace)")
    return tuple(states)


def gauss_newton(graph: gtsam.NonlinearFactorGraph, values: gtsam.Values, options: FGOptions,
                 scale: float) -> tuple[gtsam.Values, int, float]:
    """Gauss-Newton on ``graph`` from ``values`` until max |Δ| <= step_tolerance · scale or
    max_iterations; returns (values, iterations, max |Δ| of the last step). The ordering is
    computed once (the structure does not change)."""
    elimination = gtsam.EliminateQR if options.factorization == "QR" else None
    ordering, step = None, np.inf
    for iteration in range(1, options.max_iterations + 1):
        linear = graph.linearize(values)
        if ordering is None:
            ordering = ORDERINGS[options.ordering](linear)
        try:
            delta = linear.optimize(ordering) if elimination is None else linear.optimize(ordering, elimination)
        except RuntimeError as exc:
            reason = next((line.strip() for line in str(exc).splitlines() if line.strip()), "solver failure")
            raise MbstateError(f"factor graph: {reason}") from None
        values = values.retract(delta)
        step = float(np.max(np.abs(delta.vector())))
        if step <= options.step_tolerance * scale:
            return values, iteration, step
    return values, options.max_iterations, step


def inverse_dynamics_graph(problem: DrivenProblem, t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                           acc: np.ndarray, options: FGOptions) -> gtsam.NonlinearFactorGraph:
    """The factor graph of the module docstring over steps 0..N−1."""
    mech, driven, rows = problem.mech, problem.driven, problem.rows
    n = mech.n
    step_fn = partial(dependent_step_error, mech, rows, actuator_selection(mech, driven))
    step_noise = gtsam.noiseModel.Diagonal.Sigmas(step_sigmas(
        n, len(rows), options.sigma_position, options.sigma_velocity, options.sigma_dynamics,
        options.sigma_acceleration))
    prior_noise = [drive_prior_noise(n, driven, sigma) for sigma in
                   (options.sigma_position, options.sigma_velocity, options.sigma_acceleration)]
    with_rates = options.drive_rates == "prior"
    graph = gtsam.NonlinearFactorGraph()
    for k in range(len(t)):
        graph.add(gtsam_factor(step_noise, [keys.Q(k), keys.V(k), keys.A(k), keys.L(k), keys.F(k)], step_fn))
        graph.add(drive_prior(keys.Q(k), n, driven, pos[k], prior_noise[0]))
        if with_rates:
            graph.add(drive_prior(keys.V(k), n, driven, vel[k], prior_noise[1]))
            graph.add(drive_prior(keys.A(k), n, driven, acc[k], prior_noise[2]))
    if not with_rates:
        add_trapezoidal_integrators(graph, t, n, options.sigma_integrator)
    return graph


def add_trapezoidal_integrators(graph: gtsam.NonlinearFactorGraph, t: np.ndarray, n: int, sigma: float) -> None:
    """Native trapezoidal factors q–q̇ (σ) and q̇–q̈ (σ / Δt, the same relative weight) between
    consecutive steps."""
    for k in range(len(t) - 1):
        dt = t[k + 1] - t[k]
        fn = partial(trapezoidal_error, dt)
        for (x, rate), level in (((keys.Q, keys.V), sigma), ((keys.V, keys.A), sigma / dt)):
            noise = gtsam.noiseModel.Isotropic.Sigma(n, level)
            graph.add(native_linear_factor(noise, [x(k), x(k + 1), rate(k), rate(k + 1)], [n] * 4, fn))


def graph_values(states: tuple[np.ndarray, ...], rows: np.ndarray) -> gtsam.Values:
    """Initial values Q, V, A, L (rows S of λ), F of every step from the staged arrays."""
    qs, qds, qdds, lams, drive_forces = states
    values = gtsam.Values()
    for k in range(len(qs)):
        values.insert(keys.Q(k), qs[k])
        values.insert(keys.V(k), qds[k])
        values.insert(keys.A(k), qdds[k])
        values.insert(keys.L(k), lams[k, rows])
        values.insert(keys.F(k), drive_forces[k])
    return values


def read_values(values: gtsam.Values, count: int, m: int, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """q, q̇, q̈ (N, n), λ (N, m; zero outside S), F (N, k) from the solved values."""
    lams = np.zeros((count, m))
    lams[:, rows] = [values.atVector(keys.L(k)) for k in range(count)]
    return (np.array([values.atVector(keys.Q(k)) for k in range(count)]),
            np.array([values.atVector(keys.V(k)) for k in range(count)]),
            np.array([values.atVector(keys.A(k)) for k in range(count)]),
            lams,
            np.array([values.atVector(keys.F(k)) for k in range(count)]))


def fg_inverse_dynamics(mech: Mechanism, drives: Sequence[str], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                        acc: np.ndarray, options: FGOptions = FGOptions()) -> FGInverseResult:
    """Inverse dynamics along the prescribed motion of the driven coordinates ``drives``, by the
    factor graph of the module docstring. ``pos``, ``vel``, ``acc`` are (N, k) at times ``t`` (N,)
    (``vel`` and ``acc`` serve as priors, or only as the initial guess with the integrator graph).
    Returns q, q̇, q̈, λ (N, m) and ``forces[name]`` (N,) as :func:`estimator.dynamics.inverse.inverse_dynamics`."""
    t = np.asarray(t, float)
    count = len(t)
    started = time.perf_counter()
    problem = driven_problem(mech, drives, np.asarray(pos, float).reshape(count, -1)[0])
    pos, vel, acc = (np.ascontiguousarray(np.asarray(a, float).reshape(count, len(problem.driven)))
                     for a in (pos, vel, acc))
    states = staged_solution(problem, t, pos, vel, acc, options.position_tolerance)
    staged = time.perf_counter()
    graph = inverse_dynamics_graph(problem, t, pos, vel, acc, options)
    values = graph_values(states, problem.rows)
    built = time.perf_counter()
    scale = 1.0 + max(float(np.max(np.abs(x))) for x in states)
    values, iterations, step = gauss_newton(graph, values, options, scale)
    q, qd, qdd, lam, drive_forces = read_values(values, count, mech.m, problem.rows)
    done = time.perf_counter()
    trajectory = Trajectory(t=t, coordinate_names=mech.coordinate_names, q=q, qd=qd, qdd=qdd, lam=lam,
                            forces={mech.coordinate_names[c]: drive_forces[:, j] for j, c in enumerate(problem.driven)})
    return FGInverseResult(trajectory=trajectory, seconds_per_point=(done - started) / max(count, 1),
                           iterations=iterations, last_step=step,
                           phase_seconds={"staged": staged - started, "build": built - staged, "solve": done - built})
