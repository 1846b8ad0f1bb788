"""Hybrid dynamics as one factor graph (Xie and Dellaert, "A unified method for solving inverse,
forward, and hybrid manipulator dynamics using factor graphs", 2021): some coordinates follow a
prescribed motion, the others move freely under the known forces; the graph gives the free
motion and the forces the drives must apply.

Variables per step k as in estimator.graph_dynamics.inverse (q, q̇, q̈, λ_S, F with F on the driven
coordinates only). Factors:

- the step factor of every step (estimator.factors.step_bundle: constraints at the three levels
  and M q̈ + Φq_Sᵀ λ − Q − E F = 0);
- native priors on the driven coordinates of q_k, q̇_k, q̈_k (the prescribed motion);
- native trapezoidal integrators q–q̇ and q̇–q̈ between consecutive steps: they carry the free
  coordinates forward in time (second-order accurate); their σ (HYBRID_OPTIONS: 1e-6) is
  looser than the constraints' and the drive priors' (1e-8), so that those hold where the
  integrators' O(Δt³) truncation disagrees with them;
- the initial state: native priors on the whole q_0 and q̇_0 (assembled and consistent).

Solution: the graph grows step by step in iSAM2 (each new step initialized by the Taylor step from
the previous one, estimator.dynamics.prediction), which gives a good estimate of every step; Gauss-Newton on the whole
graph then returns its batch optimum.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import gtsam
import numpy as np

from estimator.dynamics.inverse import drive_indices
from estimator.dynamics.prediction import predict, taylor_coefficients
from estimator.errors import MbstateError
from estimator.factors import keys
from estimator.factors.adapter import gtsam_factor
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.drive_factors import drive_prior, drive_prior_noise
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.integrators import trapezoidal_error
from estimator.factors.native import native_linear_factor
from estimator.factors.step_bundle import dependent_step_error, step_sigmas
from estimator.graph_dynamics.inverse import FGInverseResult, FGOptions, gauss_newton, read_values
from estimator.kinematics import AssemblyError, degrees_of_freedom, solve_position_problem, solve_velocity_problem
from estimator.model import Mechanism
from estimator.timeseries import Trajectory

STEP_KEYS = (keys.Q, keys.V, keys.A, keys.L, keys.F)
# Integrators 100 times looser than the constraints and drive priors (σ 1e-8): with equal weights
# the integrators' truncation pulls the prescribed coordinate off its samples. QR: that spread of
# weights, squared, makes Cholesky's normal equations indeterminate (both seen on the double pendulum).
HYBRID_OPTIONS = FGOptions(factorization="QR", sigma_integrator=1e-6)


@dataclass(frozen=True)
class HybridStart:
    """Consistent initial state (q_0, q̇_0) and the problem's index sets."""

    driven: np.ndarray
    rows: np.ndarray
    q: np.ndarray
    qd: np.ndarray


def hybrid_start(mech: Mechanism, drives: Sequence[str], pos0: np.ndarray, vel0: np.ndarray,
                 initial: Mapping[str, float] | None = None, rates: Mapping[str, float] | None = None) -> HybridStart:
    """The initial state: the file's coordinates with the drives at ``pos0`` and the named free
    coordinates at ``initial``, assembled (all of those held); velocities with the drives at
    ``vel0`` and the named free coordinates at ``rates`` (default 0 for the coordinates named in
    ``initial``), the others from Φq q̇ = 0 (least squares, minimum norm). Raises MbstateError."""
    driven = drive_indices(mech, drives)
    initial, rates = dict(initial or {}), dict(rates or {})
    try:
        named = [mech.index(name) for name in initial]
        moving = [mech.index(name) for name in rates]
    except KeyError as exc:
        raise MbstateError(exc.args[0]) from None
    if set(named) & set(driven) or set(moving) & set(driven):
        raise MbstateError("an initial value is given for a driven coordinate (its motion is prescribed)")
    q = mech.q0.copy()
    q[driven] = pos0
    q[named] = list(initial.values())
    try:
        q = solve_position_problem(mech, q, driven + named)
    except AssemblyError as exc:
        raise MbstateError(f"initial state: {exc}") from None
    if len(driven) >= degrees_of_freedom(mech, q):
        raise MbstateError(f"the drives ({', '.join(drives)}) leave no free degree of freedom: "
                           "use inverse dynamics")
    held = driven + [i for i in named if i not in moving] + moving
    speeds = np.concatenate((vel0, np.zeros(len(held) - len(driven) - len(moving)), list(rates.values())))
    qd = solve_velocity_problem(mech, q, speeds, held)
    return HybridStart(np.array(driven), independent_constraint_rows(mech, q), q, qd)


def step_factors(mech: Mechanism, start: HybridStart, k: int, t: np.ndarray, drive: tuple[np.ndarray, ...],
                 options: FGOptions) -> gtsam.NonlinearFactorGraph:
    """Factors that join step k: its step factor and drive priors, the integrators from
    step k − 1 (or the initial-state priors when k = 0)."""
    n, driven = mech.n, start.driven
    graph = gtsam.NonlinearFactorGraph()
    sigmas = (options.sigma_position, options.sigma_velocity, options.sigma_acceleration)
    noise = gtsam.noiseModel.Diagonal.Sigmas(step_sigmas(n, len(start.rows), options.sigma_position,
                                                         options.sigma_velocity, options.sigma_dynamics,
                                                         options.sigma_acceleration))
    graph.add(gtsam_factor(noise, [keys.Q(k), keys.V(k), keys.A(k), keys.L(k), keys.F(k)],
                           partial(dependent_step_error, mech, start.rows, actuator_selection(mech, driven))))
    for key, values, sigma in zip((keys.Q(k), keys.V(k), keys.A(k)), drive, sigmas):
        graph.add(drive_prior(key, n, driven, values[k], drive_prior_noise(n, driven, sigma)))
    if k == 0:
        graph.add(gtsam.PriorFactorVector(keys.Q(0), start.q, gtsam.noiseModel.Isotropic.Sigma(n, sigmas[0])))
        graph.add(gtsam.PriorFactorVector(keys.V(0), start.qd, gtsam.noiseModel.Isotropic.Sigma(n, sigmas[1])))
        return graph
    dt = t[k] - t[k - 1]
    fn = partial(trapezoidal_error, dt)
    for (x, rate), sigma in (((keys.Q, keys.V), options.sigma_integrator),
                             ((keys.V, keys.A), options.sigma_integrator / dt)):
        graph.add(native_linear_factor(gtsam.noiseModel.Isotropic.Sigma(n, sigma), [x(k - 1), x(k), rate(k - 1),
                                                                                     rate(k)], [n] * 4, fn))
    return graph


def first_guess(mech: Mechanism, start: HybridStart, previous: tuple[np.ndarray, ...] | None, k: int,
                t: np.ndarray, drive: tuple[np.ndarray, ...]) -> gtsam.Values:
    """Initial values of step k: the initial state (k = 0, zero q̈, λ, F: those enter linearly) or
    the Taylor step from the ``previous`` step's (q, q̇, q̈, λ, F) (λ, F held), the drives at their
    prescribed values."""
    n = mech.n
    if previous is None:
        q, qd, qdd = start.q.copy(), start.qd.copy(), np.zeros(n)
        lam, force = np.zeros(len(start.rows)), np.zeros(len(start.driven))
    else:
        state = predict(taylor_coefficients(t[k] - t[k - 1]), np.concatenate(previous)[None], n)
        q, qd, qdd, lam, force = np.split(state, np.cumsum([n, n, n, len(start.rows)]))
    for x, values in zip((q, qd, qdd), drive):
        x[start.driven] = values[k]
    guess = gtsam.Values()
    for key, value in zip((keys.Q(k), keys.V(k), keys.A(k), keys.L(k), keys.F(k)), (q, qd, qdd, lam, force)):
        guess.insert(key, value)
    return guess


def fg_hybrid_dynamics(mech: Mechanism, drives: Sequence[str], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                       acc: np.ndarray, initial: Mapping[str, float] | None = None,
                       rates: Mapping[str, float] | None = None, options: FGOptions = HYBRID_OPTIONS) -> FGInverseResult:
    """Hybrid dynamics: the driven coordinates ``drives`` follow ``pos``, ``vel``, ``acc`` ((N, k) at
    times ``t``), the others start from ``initial`` / ``rates`` (see :func:`hybrid_start`) and move
    under the mechanism's forces. Returns q, q̇, q̈, λ (N, m) and ``forces[name]`` (N,) on each
    driven coordinate, like the inverse dynamics."""
    t = np.asarray(t, float)
    count = len(t)
    if count < 2:
        raise MbstateError("hybrid dynamics needs at least two time samples")
    drive = tuple(np.asarray(a, float).reshape(count, -1) for a in (pos, vel, acc))
    started = time.perf_counter()
    start = hybrid_start(mech, drives, drive[0][0], drive[1][0], initial, rates)
    params = gtsam.ISAM2Params()
    params.setFactorization(options.factorization)
    isam = gtsam.ISAM2(params)
    graph = gtsam.NonlinearFactorGraph()
    previous = None
    try:
        for k in range(count):
            new = step_factors(mech, start, k, t, drive, options)
            isam.update(new, first_guess(mech, start, previous, k, t, drive))
            isam.update()
            graph.push_back(new)
            previous = tuple(isam.calculateEstimateVector(key(k)) for key in STEP_KEYS)
    except RuntimeError as exc:
        reason = next((line.strip() for line in str(exc).splitlines() if line.strip()), "solver failure")
        raise MbstateError(f"factor graph at t = {t[k]:g} s: {reason}") from None
    estimate = isam.calculateEstimate()
    incremental = time.perf_counter()
    scale = 1.0 + max(float(np.max(np.abs(estimate.atVector(key(k))))) for k in range(count) for key in STEP_KEYS)
    values, iterations, step = gauss_newton(graph, estimate, options, scale)
    q, qd, qdd, lam, drive_forces = read_values(values, count, mech.m, start.rows)
    done = time.perf_counter()
    trajectory = Trajectory(t=t, coordinate_names=mech.coordinate_names, q=q, qd=qd, qdd=qdd, lam=lam,
                            forces={mech.coordinate_names[c]: drive_forces[:, j] for j, c in enumerate(start.driven)})
    return FGInverseResult(trajectory=trajectory, seconds_per_point=(done - started) / count, iterations=iterations,
                           last_step=step, phase_seconds={"incremental": incremental - started,
                                                          "solve": done - incremental})
