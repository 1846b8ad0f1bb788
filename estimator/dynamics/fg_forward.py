"""Forward dynamics as a factor graph, stepped online by a fixed-lag smoother (estimator.smoother).

DRAFT
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import gtsam
import numpy as np

from estimator.dynamics import lagrange
from estimator.dynamics.forward import multipliers
from estimator.errors import MbstateError
from estimator.factors.adapter import gtsam_factor
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.independent_coordinates import IndependentCoordinates, choose_independent_coordinates
from estimator.factors.integrators import trapezoidal_error
from estimator.factors.keys import A, L, Q, V
from estimator.factors.multistep import adams_moulton3_error
from estimator.factors.native import native_linear_factor
from estimator.factors.step_bundle import dependent_step_error, independent_step_error
from estimator.model import Mechanism
from estimator.smoother import FixedLagSmoother, SmootherOptions
from estimator.timeseries import Trajectory

FORMULATIONS = ("dc", "ic")


@dataclass(frozen=True)
class GraphSigmas:
    """Standard deviations of the factors (their relative weights)."""

    prior: float = 1e-10
    position: float = 1e-10
    velocity: float = 1e-10
    dynamics: float = 1e-8
    acceleration: float = 1e-10
    integrator_q: float = 1e-10
    integrator_v: float = 1e-10


@dataclass
class FgResult:
    trajectory: Trajectory
    step_seconds: np.ndarray
    recoveries: int
    rechoices: int = 0


def simulate_fg(mech: Mechanism, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int, formulation: str = "dc",
                options: SmootherOptions = SmootherOptions(), sigmas: GraphSigmas = GraphSigmas()) -> FgResult:
    if formulation not in FORMULATIONS:
        raise MbstateError(f"unknown formulation '{formulation}' (choose from {', '.join(FORMULATIONS)})")
    n = mech.n
    rows = independent_constraint_rows(mech, q0)
    size = len(rows)
    qdd0, _ = lagrange.accelerations(mech.arrays, q0, qd0, 0.0, 0.0)
    lam0 = multipliers(mech, q0, qd0, qdd0)[rows]
    dc = formulation == "dc"
    ic = None if dc else choose_independent_coordinates(mech, q0)
    qs, qds, qdds, lams = (np.zeros((steps + 1, n)) for _ in range(3)), None, None, None
    qs = np.zeros((steps + 1, n)); qds = np.zeros_like(qs); qdds = np.zeros_like(qs); lams = np.zeros((steps + 1, size))
    qs[0], qds[0], qdds[0], lams[0] = q0, qd0, qdd0, lam0
    smoother = FixedLagSmoother(options)
    diag = gtsam.noiseModel.Diagonal.Sigmas
    if dc:
        bundle_noise = diag(np.concatenate([np.full(size, sigmas.position), np.full(size, sigmas.velocity),
                                            np.full(n, sigmas.dynamics), np.full(size, sigmas.acceleration)]))
        bundle = partial(dependent_step_error, mech, rows)
    int_q = diag(np.full(n if dc else 0, sigmas.integrator_q))
    int_v = diag(np.full(n if dc else 0, sigmas.integrator_v))
    am3 = partial(adams_moulton3_error, dt)
    trap = partial(trapezoidal_error, dt)
    timings = np.zeros(steps)

    def step_keys(k):
        return [Q(k), V(k), A(k), L(k)] if dc else [Q(k), V(k), A(k)]

    def insert(values, stamps, k, q, qd, qdd, lam):
        for key, x in zip(step_keys(k), (q, qd, qdd, lam)):
            values.insert(key, x)
            stamps[key] = float(k)

    graph, values, stamps = gtsam.NonlinearFactorGraph(), gtsam.Values(), {}
    graph.add(gtsam.PriorFactorVector(Q(0), q0, gtsam.noiseModel.Isotropic.Sigma(n, sigmas.prior)))
    graph.add(gtsam.PriorFactorVector(V(0), qd0, gtsam.noiseModel.Isotropic.Sigma(n, sigmas.prior)))
    graph.add(gtsam_factor(bundle_noise, step_keys(0), bundle))
    insert(values, stamps, 0, q0, qd0, qdd0, lam0)
    smoother.update(graph, values, stamps)
    for k in range(1, steps + 1):
        start = time.perf_counter()
        # prediction
        if k >= 3:
            a_pred = 3 * qdds[k - 1] - 3 * qdds[k - 2] + qdds[k - 3]
            l_pred = 3 * lams[k - 1] - 3 * lams[k - 2] + lams[k - 3]
        else:
            a_pred, l_pred = qdds[k - 1], lams[k - 1]
        if k >= 2:
            w = dt * np.array([-1.0, 8.0, 5.0]) / 12.0
            v_pred = qds[k - 1] + w[0] * qdds[k - 2] + w[1] * qdds[k - 1] + w[2] * a_pred
            q_pred = qs[k - 1] + w[0] * qds[k - 2] + w[1] * qds[k - 1] + w[2] * v_pred
        else:
            v_pred = qds[k - 1] + 0.5 * dt * (qdds[k - 1] + a_pred)
            q_pred = qs[k - 1] + 0.5 * dt * (qds[k - 1] + v_pred)
        graph, values, stamps = gtsam.NonlinearFactorGraph(), gtsam.Values(), {}
        insert(values, stamps, k, q_pred, v_pred, a_pred, l_pred)
        graph.add(gtsam_factor(bundle_noise, step_keys(k), bundle))
        if k == 1:
            graph.add(native_linear_factor(int_q, [Q(0), Q(1), V(0), V(1)], [n] * 4, trap))
            graph.add(native_linear_factor(int_v, [V(0), V(1), A(0), A(1)], [n] * 4, trap))
        else:
            graph.add(native_linear_factor(int_q, [Q(k - 1), Q(k), V(k - 2), V(k - 1), V(k)], [n] * 5, am3))
            graph.add(native_linear_factor(int_v, [V(k - 1), V(k), A(k - 2), A(k - 1), A(k)], [n] * 5, am3))
        estimate = smoother.update(graph, values, stamps)
        for j in range(max(0, k - options.lag), k + 1):
            qs[j] = estimate.atVector(Q(j)); qds[j] = estimate.atVector(V(j)); qdds[j] = estimate.atVector(A(j))
            lams[j] = estimate.atVector(L(j))
        timings[k - 1] = time.perf_counter() - start
    lam_full = np.zeros((steps + 1, mech.m))
    lam_full[:, rows] = lams
    traj = Trajectory(t=dt * np.arange(steps + 1), coordinate_names=mech.coordinate_names, q=qs, qd=qds, qdd=qdds,
                      lam=lam_full)
    return FgResult(traj, timings, smoother.recoveries)
