"""A fixed-lag smoother over time steps: GTSAM's incremental (iSAM2) or batch fixed-lag smoother
behind one small interface, with recovery from solver failures.

Time stamps are step indices (floats): a lag of N_w keeps the states of steps k − N_w … k once
step k is added (N_w + 1 states); older ones are marginalized.

Recovery. GTSAM raises RuntimeError for an ill-conditioned or indeterminate linear system
("Indeterminate linear system"), and iSAM2's marginalization can leave an inconsistent Bayes tree.
When ``update`` raises, or returns non-finite values for the new variables, a fresh smoother is
started from the last good estimate of every variable still in the window (a prior of standard
deviation ``recovery_sigma`` on each) plus the new factors, and the failure is counted in
``recoveries``. A second failure in a row is an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import gtsam
import numpy as np

from estimator.errors import MbstateError

FACTORIZATIONS = ("CHOLESKY", "QR")
ORDERINGS = ("COLAMD", "METIS", "NATURAL")
BACKENDS = ("incremental", "batch")


@dataclass(frozen=True)
class SmootherOptions:
    """Solver settings.

    ``lag``: steps kept behind the newest (N_w). ``backend``: ``incremental`` (iSAM2: Bayes-tree
    updates, relinearization of variables whose update exceeds ``relinearize_threshold``, checked
    every ``relinearize_skip`` updates, ``factorization`` CHOLESKY or QR) or ``batch`` (Levenberg-
    Marquardt over the whole window at every step, elimination ``ordering`` COLAMD, METIS or
    NATURAL, multifrontal ``factorization``). ``extra_iterations``: further iSAM2 updates (without
    new factors) per step, each relinearizing where needed. ``recovery_sigma``: standard deviation
    of the priors that pin the window when the smoother is restarted after a failure.
    """

    lag: int = 2
    backend: str = "incremental"
    factorization: str = "CHOLESKY"
    ordering: str = "COLAMD"
    relinearize_threshold: float = 1e-6
    relinearize_skip: int = 1
    extra_iterations: int = 0
    recovery_sigma: float = 1e-9

    def __post_init__(self) -> None:
        if self.lag < 1:
            raise MbstateError(f"the smoother lag must be at least one step, got {self.lag}")
        for name, value, allowed in (("backend", self.backend, BACKENDS),
                                     ("factorization", self.factorization, FACTORIZATIONS),
                                     ("ordering", self.ordering, ORDERINGS)):
            if value not in allowed:
                raise MbstateError(f"unknown {name} '{value}' (choose from {', '.join(allowed)})")
        if self.relinearize_skip < 1 or self.extra_iterations < 0 or not self.relinearize_threshold >= 0.0:
            raise MbstateError("need relinearize_skip >= 1, extra_iterations >= 0 and relinearize_threshold >= 0")


def _new_smoother(options: SmootherOptions) -> gtsam.FixedLagSmoother:
    if options.backend == "batch":
        params = gtsam.LevenbergMarquardtParams()
        params.setOrderingType(options.ordering)
        params.setLinearSolverType(f"MULTIFRONTAL_{options.factorization}")
        return gtsam.BatchFixedLagSmoother(float(options.lag), params)
    params = gtsam.ISAM2Params()
    params.setFactorization(options.factorization)
    params.setRelinearizeThreshold(options.relinearize_threshold)
    params.relinearizeSkip = options.relinearize_skip
    params.findUnusedFactorSlots = True
    return gtsam.IncrementalFixedLagSmoother(float(options.lag), params)


class FixedLagSmoother:
    """Owns a GTSAM fixed-lag smoother; ``update`` adds one step's factors and returns the estimate."""

    def __init__(self, options: SmootherOptions = SmootherOptions()) -> None:
        self.options = options
        self.recoveries = 0
        self._smoother = _new_smoother(options)
        self._stamps: dict[int, float] = {}  # variables in the window and their steps
        self._estimate = gtsam.Values()

    def update(self, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values,
               stamps: Mapping[int, float]) -> gtsam.Values:
        """Add new variables (``values``, initial guesses; ``stamps`` their steps) and factors; the
        estimate of every variable in the window. Recovers once from a solver failure (module doc)."""
        try:
            estimate = self._solve(self._smoother, factors, values, stamps)
        except (RuntimeError, FloatingPointError):
            estimate = self._recover(factors, values, stamps)
        self._remember(estimate, stamps)
        return estimate

    def estimate(self, key: int) -> np.ndarray:
        """Last estimate of a variable in the window."""
        return self._estimate.atVector(key)

    def _solve(self, smoother: gtsam.FixedLagSmoother, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values,
               stamps: Mapping[int, float]) -> gtsam.Values:
        smoother.update(factors, values, stamps)
        for _ in range(self.options.extra_iterations):
            smoother.update()
        estimate = smoother.calculateEstimate()
        for key in stamps:
            if not np.all(np.isfinite(estimate.atVector(key))):
                raise FloatingPointError(f"non-finite estimate of {gtsam.DefaultKeyFormatter(key)}")
        return estimate

    def _recover(self, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values,
                 stamps: Mapping[int, float]) -> gtsam.Values:
        """A fresh smoother: the window pinned at its last good estimate, then the new step."""
        self.recoveries += 1
        smoother = _new_smoother(self.options)
        graph, start = gtsam.NonlinearFactorGraph(), gtsam.Values()
        for key in self._stamps:
            value = self._estimate.atVector(key)
            start.insert(key, value)
            graph.add(gtsam.PriorFactorVector(key, value, gtsam.noiseModel.Isotropic.Sigma(value.shape[0],
                                                                                           self.options.recovery_sigma)))
        graph.push_back(factors)
        start.insert(values)
        try:
            estimate = self._solve(smoother, graph, start, {**self._stamps, **stamps})
        except (RuntimeError, FloatingPointError) as exc:
            raise MbstateError(f"the smoother failed twice in a row, at step {max(stamps.values()):g}: {exc}") from None
        self._smoother = smoother
        return estimate

    def _remember(self, estimate: gtsam.Values, stamps: Mapping[int, float]) -> None:
        self._estimate = estimate
        self._stamps.update(stamps)
        oldest = max(self._stamps.values()) - self.options.lag
        self._stamps = {key: stamp for key, stamp in self._stamps.items() if stamp >= oldest}
