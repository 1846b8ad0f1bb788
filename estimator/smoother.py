"""A fixed-lag smoother over time steps: GTSAM's incremental (iSAM2) or batch (Levenberg-Marquardt)
fixed-lag smoother behind one small interface, with recovery from solver failures.

Time stamps are step indices: with a lag of N_w the states of steps k − N_w … k stay in the window
once step k is added (N_w + 1 states); older ones are marginalized. Factors of step k may still
involve step k − N_w − 1: GTSAM marginalizes after adding the new factors.

With stacked states (one variable per step) a window this short is always
"mostly affected" by an update, so iSAM2 takes its batch path and re-linearizes every factor in the
window at each step (see estimator.factors.memo). Driving ``gtsam.ISAM2`` directly with our own
``marginalizeLeaves`` was tried and dropped: GTSAM 4.3 raised "Asking to remove variables from the
variable index that are not unused" and once crashed the process.

Recovery. GTSAM raises RuntimeError for an ill-conditioned or indeterminate linear system
("Indeterminate linear system"), and its fixed-lag marginalization has known bugs. When ``update``
raises, or returns non-finite values for the new variables, a fresh smoother is started from the
last good estimate of every variable still in the window (a prior of standard deviation
``recovery_sigma`` on each) plus the new factors, and the failure is counted in ``recoveries``. A
second failure in a row raises ``SolverFailure`` (the online estimator then re-initializes). The restarted smoother factorizes by QR, whatever the options:
Cholesky works on the normal equations, which square the spread of weights between the tight
priors (1e-9) and the step factors (1e-10); after a forced failure on the four-bar it reported an
"Indeterminate linear system" at the following steps, QR did not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import gtsam
import numpy as np

from estimator.errors import MbstateError, one_line

FACTORIZATIONS = ("CHOLESKY", "QR")
ORDERINGS = ("COLAMD", "METIS")  # GTSAM takes NATURAL only with an explicit ordering, which a sliding window lacks
BACKENDS = ("incremental", "batch")


class SolverFailure(MbstateError):
    """The smoother failed twice in a row: once, and again after restarting from the window's estimate."""


@dataclass(frozen=True)
class SmootherOptions:
    """Solver settings.

    ``lag``: steps kept behind the newest (N_w). ``backend``: ``incremental`` (GTSAM's
    IncrementalFixedLagSmoother: iSAM2, relinearizing variables whose update exceeds
    ``relinearize_threshold`` (None: never), checked every ``relinearize_skip`` updates;
    ``factorization`` CHOLESKY or QR) or ``batch`` (BatchFixedLagSmoother: Levenberg-Marquardt over
    the window at every step, elimination ``ordering`` COLAMD or METIS, multifrontal
    ``factorization``; iSAM2 picks its own constrained COLAMD ordering). ``extra_iterations``: further updates without new factors
    per step (iSAM2 relinearizes in them). ``recovery_sigma``: standard deviation of the priors that
    pin the window when the smoother is restarted after a failure (units of each variable).
    """

    lag: int = 2
    backend: str = "incremental"
    factorization: str = "CHOLESKY"
    ordering: str = "COLAMD"
    relinearize_threshold: float | None = 1e-3
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
        threshold_ok = self.relinearize_threshold is None or self.relinearize_threshold >= 0.0
        if self.relinearize_skip < 1 or self.extra_iterations < 0 or not threshold_ok:
            raise MbstateError("need relinearize_skip >= 1, extra_iterations >= 0 and relinearize_threshold >= 0")
        if not self.recovery_sigma > 0.0:
            raise MbstateError(f"recovery_sigma must be positive, got {self.recovery_sigma}")


def new_gtsam_smoother(options: SmootherOptions) -> gtsam.FixedLagSmoother:
    """A GTSAM fixed-lag smoother configured by ``options`` (lag in steps)."""
    if options.backend == "batch":
        params = gtsam.LevenbergMarquardtParams()
        params.setOrderingType(options.ordering)
        params.setLinearSolverType(f"MULTIFRONTAL_{options.factorization}")
        return gtsam.BatchFixedLagSmoother(float(options.lag), params)
    params = gtsam.ISAM2Params()
    params.setFactorization(options.factorization)
    if options.relinearize_threshold is None:
        params.enableRelinearization = False
    else:
        params.setRelinearizeThreshold(options.relinearize_threshold)
    params.relinearizeSkip = options.relinearize_skip
    params.findUnusedFactorSlots = True  # else the factor list grows by the marginalized slots, step after step
    return gtsam.IncrementalFixedLagSmoother(float(options.lag), params)


class FixedLagSmoother:
    """Owns a GTSAM fixed-lag smoother; ``update`` adds one step's factors and returns the estimate.

    ``update_for`` is the lean form of the online estimator: GTSAM computes the estimates of the
    requested variables only, a fraction of the cost of the whole window's, and the window's
    estimate, which a recovery restarts from, is computed by ``keep_window`` — called between
    steps, else by the next update before it changes anything."""

    def __init__(self, options: SmootherOptions = SmootherOptions()) -> None:
        self.options = options
        self.recoveries = 0
        self._smoother = new_gtsam_smoother(options)
        self._stamps: dict[int, float] = {}  # variables in the window and their steps
        self._estimate = gtsam.Values()  # of the window, when not _stale
        self._stale = False
        self.new_factor_indices: list[int] = []  # GTSAM's slots of the factors of the last update

    def update(self, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values,
               stamps: Mapping[int, float]) -> gtsam.Values:
        """Add new variables (``values``: initial guesses, ``stamps``: their steps) and factors; returns
        the estimate of every variable in the window. Recovers once from a solver failure (module doc)."""
        self.update_for(factors, values, stamps, list(stamps))
        self.keep_window()
        return self._estimate

    def update_for(self, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values, stamps: Mapping[int, float],
                   keys: Sequence[int], remove: Sequence[int] = ()) -> list[np.ndarray]:
        """``update``, returning the estimates of ``keys`` only (they must include the new variables);
        the factors in GTSAM's slots ``remove`` are taken out in the same update."""
        self.keep_window()
        try:
            vectors = self._solve(self._smoother, factors, values, stamps, keys, remove)
        except (RuntimeError, FloatingPointError):
            vectors = self._recover(factors, values, stamps, keys)
        self.new_factor_indices = list(self._smoother.getISAM2Result().getNewFactorsIndices())[-factors.size():] \
            if isinstance(self._smoother, gtsam.IncrementalFixedLagSmoother) and factors.size() else []
        self._stamps.update(stamps)
        oldest = max(self._stamps.values()) - self.options.lag
        self._stamps = {key: stamp for key, stamp in self._stamps.items() if stamp >= oldest}
        self._stale = True
        return vectors

    def replace_factors(self, remove: Sequence[int], factors: gtsam.NonlinearFactorGraph,
                        keys: Sequence[int]) -> list[np.ndarray]:
        """Swap factors of the window (GTSAM slots ``remove``) for ``factors`` on variables already in it
        (a relinearization); the estimates of ``keys``. ``new_factor_indices`` are then the new slots."""
        return self.update_for(factors, gtsam.Values(), {}, keys, remove)

    def keep_window(self) -> None:
        """Compute the window's estimate after an ``update_for``, for a recovery (no-op if done)."""
        if self._stale:
            self._estimate, self._stale = self._smoother.calculateEstimate(), False

    def estimate(self, key: int) -> np.ndarray:
        """Last estimate of a variable in the window."""
        self.keep_window()
        return self._estimate.atVector(key)

    def marginal_covariance(self, key: int) -> np.ndarray:
        """Marginal covariance of a variable in the window (GTSAM's, from the current Bayes tree)."""
        return self._smoother.marginalCovariance(key)

    def _solve(self, smoother: gtsam.FixedLagSmoother, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values,
               stamps: Mapping[int, float], keys: Sequence[int], remove: Sequence[int] = ()) -> list[np.ndarray]:
        """Update ``smoother`` (removing the factors in slots ``remove``); the estimates of ``keys``, checked
        finite."""
        smoother.update(factors, values, stamps, list(remove))
        for _ in range(self.options.extra_iterations):
            smoother.update()
        vectors = [smoother.calculateEstimateVector(key) for key in keys]
        for key, vector in zip(keys, vectors):
            if not np.isfinite(vector).all():
                raise FloatingPointError(f"non-finite estimate of {gtsam.DefaultKeyFormatter(key)}")
        return vectors

    def _recover(self, factors: gtsam.NonlinearFactorGraph, values: gtsam.Values, stamps: Mapping[int, float],
                 keys: Sequence[int]) -> list[np.ndarray]:
        """A fresh smoother: the window pinned at its last good estimate, then the new step."""
        self.recoveries += 1
        smoother = new_gtsam_smoother(replace(self.options, factorization="QR"))
        graph, start = gtsam.NonlinearFactorGraph(), gtsam.Values()
        for key in self._stamps:
            value = self._estimate.atVector(key)
            start.insert(key, value)
            graph.add(gtsam.PriorFactorVector(key, value, gtsam.noiseModel.Isotropic.Sigma(
                value.shape[0], self.options.recovery_sigma)))
        graph.push_back(factors)
        start.insert(values)
        try:
            vectors = self._solve(smoother, graph, start, {**self._stamps, **stamps}, keys)
        except (RuntimeError, FloatingPointError) as exc:
            step = max({**self._stamps, **stamps}.values(), default=0.0)
            raise SolverFailure(f"the smoother failed twice in a row, at step {step:g}: {one_line(exc)}") from None
        self._smoother = smoother
        return vectors
