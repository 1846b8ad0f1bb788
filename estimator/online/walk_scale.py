"""The density of a random walk, matched to the estimated motion (``auto`` walk densities of
estimator.online.config: ``jerk_random_walk``, ``force_random_walk``).

A random walk of density D changes by D² T in variance over a horizon T; a smooth signal x whose rate
has the rms value r changes by about (r T)² there. Matching the two over T (covariance matching of the
walk to the signal, at one horizon) gives

    D² = E[(x(t) − x(t − T))²] / T,

so that with a smooth motion D = r √T: for the drive's white jerk, a quarter of its rms jerk at
T = 1/16 s, the rule configs/estimator/README.md measured as each mechanism's best density. The
expectation is an exponentially weighted mean over the estimates of x (each component on its own),
with time constant ``memory`` (the plain mean of the changes seen while they span less); until one
horizon of estimates is in, D is the ``start`` value.
"""

from __future__ import annotations

import numpy as np

from estimator.factors.estimation_state import EstimationLayout
from estimator.online.config import AUTO, FORCE_RATE_TIME, WALK_FLOOR, WALK_MEMORY, EstimatorConfig
from estimator.online.drafting import Drafter

RESCALE_RATIO = 2 ** 0.25  # a density this far from the one the process factors were built with: built again


class WalkScale:
    """Running D of the module docstring for a signal of ``size`` components sampled every ``dt``."""

    def __init__(self, size: int, dt: float, horizon: float, memory: float, start: float, floor: float) -> None:
        self.lag = max(1, int(round(horizon / dt)))
        self.horizon = self.lag * dt
        self.weight = min(1.0, dt / memory)
        self.floor = floor
        self._ring = np.zeros((self.lag, size))
        self._count = 0
        self._seen = 0  # changes over the horizon taken into the mean
        self._mean_square = np.full(size, start**2 * self.horizon)
        self._change = np.empty(size)

    def add(self, x: np.ndarray) -> None:
        """The estimate of the signal at the next step."""
        slot = self._count % self.lag
        if self._count >= self.lag:
            np.subtract(x, self._ring[slot], out=self._change)
            self._change *= self._change
            self._seen += 1
            self._mean_square += max(self.weight, 1.0 / self._seen) * (self._change - self._mean_square)
        self._ring[slot] = x
        self._count += 1

    @property
    def density(self) -> np.ndarray:
        """D of each component [the signal's unit per √s], at least ``floor``."""
        return np.maximum(np.sqrt(self._mean_square / self.horizon), self.floor)

    def restart(self) -> None:
        """A break in the signal (the estimator starts again): the next horizon starts afresh, the mean stays."""
        self._count = 0


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
