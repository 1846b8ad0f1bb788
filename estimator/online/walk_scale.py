"""The density of a random walk, matched to the estimated motion (``auto`` walk densities of
estimator.online.config: ``jerk_random_walk``, ``force_random_walk``).

A random walk of density D changes by D² T in variance over a horizon T; a smooth signal x whose rate
has the rms value r changes by about (r T)² there. Matching the two over T (covariance matching of the
walk to the signal, at one horizon) gives D² = E[(x(t) − x(t − T))²] / T, so that with a smooth motion
D = r √T: for the drive's white jerk, a quarter of its rms jerk at T = 1/16 s, the rule
configs/estimator/README.md measured as each mechanism's best density.

The signal is known only through its estimate x̂ = x + e, and the estimate's error e, which the walk's
own density sets (the readings' noise it lets through), adds 2 Var e to the mean square change at
every horizon longer than the error's correlation time: matched at one horizon, that error raises D,
and the larger D lets more of the readings' noise through (a slow joint read by a fine encoder: D
several times its motion's). The mean square change of x̂ over the horizon τ, the variogram

    V(τ) = E[(x̂(t) − x̂(t − τ))²] ≈ c + a τ + b τ²,

is taken at τ = T, 2T, 3T instead: c the estimate's error (2 Var e), a τ a walk's part (a signal that
jumps at times) and b τ² a smooth motion's ((r τ)²). The three give each part, and the walk matched
to the signal's own parts over T is

    D² = a + b T = (3 V(2T) − 2 V(T) − V(3T)) / T,

a walk's density for a walk, r √T for a smooth motion, whatever the estimate's error. Each V is an
exponentially weighted mean over the estimates of x (each component on its own), with time constant
``memory`` (the plain mean of the changes seen while they span less). The first T of estimates after a
start are left out (the estimate converging from its start, not the signal); until the longest horizon
of estimates is in, D is the ``start`` value. The difference of means of a few hundred milliseconds can
fall to zero by chance, and a walk of density near 0 would hold its estimate still and so keep D there:
D stays at least WALK_SHARE of the one-horizon match √(V(T) / T) (which the estimate's error raises) and
at least ``floor``.
"""

from __future__ import annotations

import numpy as np

from estimator.factors.estimation_state import EstimationLayout
from estimator.online.config import AUTO, FORCE_RATE_TIME, WALK_FLOOR, WALK_MEMORY, WALK_SHARE, EstimatorConfig
from estimator.online.drafting import Drafter

RESCALE_RATIO = 2 ** 0.25  # a density this far from the one the process factors were built with: built again


class WalkScale:
    """Running D of the module docstring for a signal of ``size`` components sampled every ``dt``."""

    def __init__(self, size: int, dt: float, horizon: float, memory: float, start: float, floor: float) -> None:
        self.lag = max(1, int(round(horizon / dt)))
        self.horizon = self.lag * dt
        self.lags = (self.lag, 2 * self.lag, 3 * self.lag)  # T, 2T, 3T
        self._matching = np.array([-2.0, 3.0, -1.0]) / self.horizon  # D² from V(T), V(2T), V(3T)
        self.weight = min(1.0, dt / memory)
        self.floor = floor
        self._ring = np.zeros((self.lags[-1], size))
        self._count = 0
        self._settling = self.lags[0]  # estimates left out after a start (module docstring)
        self._seen = [0, 0, 0]  # changes over each horizon taken into its mean
        self._means = np.zeros((3, size))  # V(T), V(2T), V(3T) of each component
        self._start = np.full(size, float(start))
        self._change = np.empty(size)

    def add(self, x: np.ndarray) -> None:
        """The estimate of the signal at the next step."""
        if self._settling:
            self._settling -= 1
            return
        ring, count = self._ring, self._count
        for i, lag in enumerate(self.lags):
            if count >= lag:
                np.subtract(x, ring[(count - lag) % len(ring)], out=self._change)
                self._change *= self._change
                self._seen[i] += 1
                self._means[i] += max(self.weight, 1.0 / self._seen[i]) * (self._change - self._means[i])
        ring[count % len(ring)] = x
        self._count = count + 1

    @property
    def density(self) -> np.ndarray:
        """D of each component [the signal's unit per √s], at least ``floor``."""
        if not self._seen[-1]:
            return np.maximum(self._start, self.floor)
        square = np.maximum(self._matching @ self._means, WALK_SHARE ** 2 * self._means[0] / self.horizon)
        return np.maximum(np.sqrt(square), self.floor)

    def restart(self) -> None:
        """A break in the signal (the estimator starts again): the next horizons start afresh, the means stay."""
        self._count = 0
        self._settling = self.lags[0]


class AdaptiveWalks:
    """The ``auto`` densities of one estimator: K of the unknown forces (their walk, or their rate's in the
    smooth model) from the estimated forces, D of the white-jerk walk from the estimated accelerations it
    walks, each a WalkScale over FORCE_RATE_TIME; the drafter's process factors are built again when one has
    moved by more than RESCALE_RATIO since they were."""

    def __init__(self, config: EstimatorConfig, layout: EstimationLayout, drafter: Drafter) -> None:
        self.drafter = drafter
        self.scales: list[tuple[np.ndarray, WalkScale]] = []  # (state columns, their scale)
        self._force = self._jerk = None
        if layout.forces and config.force_model != "jerk" and config.adapts_force_walk:
            self._force = self._add(np.arange(layout.size)[layout.force], config.dt, config.force_walk)
        if len(drafter.jerk_columns) and config.jerk_random_walk == AUTO:
            self._jerk = self._add(drafter.jerk_columns, config.dt, config.jerk_walk)
        self._built = self._densities()

    def _add(self, columns: np.ndarray, dt: float, start: float) -> WalkScale:
        scale = WalkScale(len(columns), dt, FORCE_RATE_TIME, WALK_MEMORY, start, WALK_FLOOR * start)
        self.scales.append((columns, scale))
        return scale

    def _densities(self) -> tuple[np.ndarray, np.ndarray]:
        return (self.drafter.force_walk if self._force is None else self._force.density,
                self.drafter.jerk_walk if self._jerk is None else self._jerk.density)

    def observe(self, x: np.ndarray) -> None:
        """The estimate of the next grid step."""
        for columns, scale in self.scales:
            scale.add(x[columns])

    def rescale_if_moved(self) -> bool:
        """Build the process factors again if a density has moved by more than RESCALE_RATIO; whether it did."""
        if not self.scales:
            return False
        now = self._densities()
        moved = any(np.any(np.abs(np.log(a / b)) > np.log(RESCALE_RATIO)) for a, b in zip(now, self._built) if a.size)
        if moved:
            self.drafter.rescale(*now)
            self._built = now
        return moved

    def restart(self) -> None:
        for _, scale in self.scales:
            scale.restart()
