"""Forward dynamics as a factor graph, stepped online by a fixed-lag smoother (estimator.smoother).

One variable per step, the stacked state x_k = [q; q̇; q̈; λ] (dependent coordinates, "dc") or
[q; q̇; q̈] (independent coordinates, "ic"), and per step k two factors:

- one bundled nonlinear factor (the only Python callback), estimator.factors.step_bundle:
  dc: [Φ; Φq q̇; M q̈ + Φqᵀ λ − Q; Φq q̈ − γ];  ic: [Φ; Φq q̇; Φq q̈ − γ; Rᵀ (M q̈ − Q)];
- one native linear Adams-Moulton factor of order p over x_{k+1−p} … x_k for q/q̇ and q̇/q̈
  (estimator.factors.multistep): on all coordinates (dc) or on z = q[I] only (ic). The run starts
  with orders 2, 3, … as states become available.

Step 0 adds a prior on (q0, q̇0). The initial guess of x_k extrapolates q̈ and λ quadratically and
integrates q̇, q with the same Adams-Moulton weights (estimator.dynamics.prediction); it is close
enough (error O(h³)) that iSAM2 never needs to relinearize (a relinearized, iterated solution differs
far below the integrator's error).

Independent coordinates: z = q[I] is not a separate variable; the integrator rows pick it from q.
I is chosen (QR with column pivoting, kinematics.independent_coordinates) at the start and again
whenever cond [Φq_S; E_I] at the newest state exceeds ``rechoice_ratio`` times its value at the last
choice (the crank of the four-bar turns fully, so x1 and y1 each become singular in turn). Factors
already in the window keep their choice; only later steps use the new one, so nothing is re-linked.
With the integrator rows of z, the ic step has as many equations as unknowns (3n).

Weights (``GraphSigmas``). In dc a step has 3n + |S| unknowns and 3n + 3|S| rows: the position and
velocity constraints and the 2n integrator rows overlap by 2|S| and disagree by the truncation
error. Integrators weighted tighter than the constraints make the constraints give way (Φ drifts);
weighted looser, they leave Φ at round-off, and the accuracy of q, set by the integrator, is the
same either way. So the constraints are weighted 100× the integrators: the least-squares step is
then the integrator's step projected on the constraint manifold. The dynamics rows and the
acceleration constraints determine (q̈, λ) exactly, so their sigma does not matter. Standard
deviations in SI units of each row (m, m/s, m/s², N or N·m).

Accuracy is set by the integrator order (estimator.benchmarks.fg_forward measures it against RK4
at a tenth of the step; docs/performance.md). Defaults: order 3 for dc (order 4 is more
accurate, but its factor spans four states and costs more per step), order 4 for ic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial

import gtsam
import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.dynamics import lagrange
from estimator.dynamics.forward import multipliers
from estimator.dynamics.integrators import ADAMS_MOULTON
from estimator.dynamics.prediction import HOLD, QUADRATIC, predict, prediction_coefficients
from estimator.errors import MbstateError
from estimator.factors.adapter import gtsam_factor
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.independent_coordinates import choose_independent_coordinates
from estimator.factors.keys import X
from estimator.factors.memo import remember_last
from estimator.factors.multistep import adams_moulton_error
from estimator.factors.native import LinearRelation
from estimator.factors.stacked_state import StateLayout, integrator_on_states, on_state
from estimator.factors.step_bundle import dependent_step_error, independent_step_error, step_sigmas
from estimator.model import Mechanism
from estimator.smoother import FixedLagSmoother, SmootherOptions
from estimator.timeseries import Trajectory

FORMULATIONS = ("dc", "ic")
DEFAULT_ORDER = {"dc": 3, "ic": 4}


@dataclass(frozen=True)
class GraphSigmas:
    """Standard deviations of the factor rows (relative weights; see the module docstring)."""

    start: float = 1e-10  # prior on q0 [m], q̇0 [m/s]
    position: float = 1e-10  # Φ [m]
    velocity: float = 1e-10  # Φq q̇ [m/s]
    acceleration: float = 1e-10  # Φq q̈ − γ [m/s²]
    dynamics: float = 1e-8  # M q̈ + Φqᵀλ − Q or Rᵀ (M q̈ − Q) [N, N·m]
    integrator: float = 1e-8  # Adams-Moulton rows of q [m] and q̇ [m/s]


@dataclass(frozen=True)
class FgOptions:
    """``order``: Adams-Moulton order 2 … 4 (None: DEFAULT_ORDER); ``solver``: the smoother (its lag
    is overridden by simulate_fg's); ``rechoice_ratio``: see the module docstring (ic)."""

    order: int | None = None
    sigmas: GraphSigmas = GraphSigmas()
    solver: SmootherOptions = field(default_factory=SmootherOptions)
    rechoice_ratio: float = 10.0


@dataclass
class FgResult:
    """The trajectory, the wall time of each step [s], solver recoveries and re-choices of z (ic)."""

    trajectory: Trajectory
    step_seconds: np.ndarray
    recoveries: int
    rechoices: int


class _StepFactors:
    """The factors of a step for one formulation; for ic, the current choice of z."""

    def __init__(self, mech: Mechanism, q0: np.ndarray, dt: float, formulation: str, order: int,
                 sigmas: GraphSigmas) -> None:
        self.mech, self.dt, self.order, self.sigmas = mech, dt, order, sigmas
        self.dc = formulation == "dc"
        self.rows = independent_constraint_rows(mech, q0)
        self.layout = StateLayout(mech.n, len(self.rows) if self.dc else 0)
        if self.dc:
            self._set(partial(dependent_step_error, mech, self.rows, None), None,
                      step_sigmas(mech.n, len(self.rows), sigmas.position, sigmas.velocity, sigmas.dynamics,
                                  sigmas.acceleration))
        else:
            self.choose(q0)

    def _set(self, bundle, selection: np.ndarray | None, sigmas: np.ndarray) -> None:
        self.bundle = on_state(self.layout, bundle)
        self.bundle_noise = gtsam.noiseModel.Diagonal.Sigmas(sigmas)
        size = self.mech.n if selection is None else selection.shape[0]
        noise = gtsam.noiseModel.Isotropic.Sigma(2 * size, self.sigmas.integrator)
        self.integrators = {
            p: LinearRelation(noise, [self.layout.size] * p, integrator_on_states(
                self.layout, partial(adams_moulton_error, p, self.dt, selection=selection), p))
            for p in range(2, self.order + 1)}

    def choose(self, q: np.ndarray) -> None:
        """(ic) Choose z = q[I] and the constraint rows S at q, for the steps still to come."""
        self.ic = choose_independent_coordinates(self.mech, q)
        size, s = len(self.ic.rows), self.sigmas
        sigmas = np.repeat([s.position, s.velocity, s.acceleration, s.dynamics], [size, size, size, self.mech.n - size])
        self._set(partial(independent_step_error, self.ic), self.ic.picker, sigmas)
        self.condition = self.conditioning(q)

    def conditioning(self, q: np.ndarray) -> float:
        """(ic) cond [Φq_S; E_I] at q."""
        phi_q = constraint_derivatives(self.mech, q, False)[1]
        return float(np.linalg.cond(np.vstack((phi_q[self.ic.rows], self.ic.picker))))

    def graph(self, k: int, x0: np.ndarray | None = None) -> gtsam.NonlinearFactorGraph:
        """Factors added with step k (step 0: the prior on q0, q̇0 taken from ``x0``)."""
        graph = gtsam.NonlinearFactorGraph()
        graph.add(gtsam_factor(self.bundle_noise, [X(k)], remember_last(self.bundle)))
        if k == 0:
            n2 = 2 * self.mech.n
            prior = LinearRelation(gtsam.noiseModel.Isotropic.Sigma(n2, self.sigmas.start), [self.layout.size],
                                   lambda x, jac=True: (x[:n2] - x0[:n2], [np.eye(n2, self.layout.size)]))
            graph.add(prior.factor([X(0)]))
        else:
            order = min(self.order, k + 1)
            graph.add(self.integrators[order].factor([X(j) for j in range(k + 1 - order, k + 1)]))
        return graph


def simulate_fg(mech: Mechanism, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int, formulation: str = "dc",
                lag: int = 2, options: FgOptions = FgOptions()) -> FgResult:
    """Forward dynamics from a consistent (q0, q̇0) over ``steps`` steps of ``dt`` [s] (module docstring).
    Each step's time covers prediction, smoother update and reading the window back."""
    if formulation not in FORMULATIONS:
        raise MbstateError(f"unknown formulation '{formulation}' (choose from {', '.join(FORMULATIONS)})")
    order = options.order or DEFAULT_ORDER[formulation]
    if order not in ADAMS_MOULTON:
        raise MbstateError(f"Adams-Moulton order must be one of {', '.join(map(str, ADAMS_MOULTON))}, got {order}")
    if lag < order - 2:
        raise MbstateError(f"order {order} needs a lag of at least {order - 2} steps, got {lag}")
    if not dt > 0.0 or steps < 1:
        raise MbstateError(f"need dt > 0 and at least one step (dt={dt}, steps={steps})")
    q0, qd0 = np.asarray(q0, float), np.asarray(qd0, float)
    n = mech.n
    step = _StepFactors(mech, q0, dt, formulation, order, options.sigmas)
    states = np.zeros((steps + 1, step.layout.size))
    qdd0, _ = lagrange.accelerations(mech.arrays, q0, qd0, 0.0, 0.0)
    states[0, :3 * n] = np.concatenate((q0, qd0, qdd0))
    if step.dc:
        states[0, 3 * n:] = multipliers(mech, q0, qd0, qdd0)[step.rows]
    smoother = FixedLagSmoother(replace(options.solver, lag=lag))
    values = gtsam.Values()
    values.insert(X(0), states[0])
    smoother.update(step.graph(0, states[0]), values, {X(0): 0.0})
    timings, rechoices = np.zeros(steps), 0
    for k in range(1, steps + 1):
        start = time.perf_counter()
        values = gtsam.Values()
        guess = prediction_coefficients(dt * ADAMS_MOULTON[min(order, k + 1)], QUADRATIC if k >= 3 else HOLD)
        values.insert(X(k), predict(guess, states[k - guess.shape[0]:k], n))
        estimate = smoother.update(step.graph(k), values, {X(k): float(k)})
        for j in range(max(0, k - lag), k + 1):
            states[j] = estimate.atVector(X(j))
        if not step.dc and step.conditioning(states[k, :n]) > options.rechoice_ratio * step.condition:
            step.choose(states[k, :n])
            rechoices += 1
        timings[k - 1] = time.perf_counter() - start
    return FgResult(_trajectory(mech, step, states, dt), timings, smoother.recoveries, rechoices)


def _trajectory(mech: Mechanism, step: _StepFactors, states: np.ndarray, dt: float) -> Trajectory:
    """States as a Trajectory; λ from the states on the rows S (others 0) in dc, recovered in ic."""
    n = mech.n
    qs, qds, qdds = (states[:, i * n:(i + 1) * n].copy() for i in range(3))
    if step.dc:
        lam = np.zeros((len(states), mech.m))
        lam[:, step.rows] = states[:, 3 * n:]
    else:
        lam = np.array([multipliers(mech, *state) for state in zip(qs, qds, qdds)])
    return Trajectory(t=dt * np.arange(len(states)), coordinate_names=mech.coordinate_names, q=qs, qd=qds, qdd=qdds,
                      lam=lam)
