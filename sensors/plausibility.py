"""Bounds a well-formed reading must meet before the estimator sees it (configs/sensors/README.md).

Value: every component within the sensor's ``range`` [low, high] (SensorParams.range: the key, else
the noise's saturation, else the kind's span). A value beyond what the device can report is not a
measurement, and one such as 1e300 would swamp every row of its step. Nor is a component at its
saturation (NoiseParams.saturation, the device's full scale): the device clipped it, so it bounds the
quantity instead of measuring it, and taken as a measurement it would pull the estimate to full scale
(reason ``saturated``).

Covariance: every eigenvalue μ of a reading's ``cov`` within

    (COV_FLOOR σ)² ≤ μ ≤ (COV_CEILING σ)²,

σ the sensor's configured per-sample σ (NoiseParams.sample_sigma). A reading that claims to be a
thousand times more precise than its datasheet would outweigh every other row of its step (at
1e-300 the step's linear system is indeterminate); one a million times less precise tells nothing
and, whitened, nearly vanishes next to the model rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sensors.base import Sensor
from sensors.messages import Reading

COV_FLOOR = 1e-3  # smallest σ of a reading's cov, in units of the configured σ
COV_CEILING = 1e6  # largest, the same


@dataclass(frozen=True)
class ReadingBounds:
    """The value range [low, high] of one sensor, its full scale [full_low, full_high] (±inf: none) and the
    eigenvalue range [var_low, var_high] of a cov."""

    low: float
    high: float
    var_low: float
    var_high: float
    full_low: float = -np.inf
    full_high: float = np.inf

    def problem(self, reading: Reading) -> str | None:
        """``range``, ``saturated`` or ``cov`` for a reading out of bounds (the first found), None when within."""
        values = reading.value.tolist()  # a few floats: Python's min and max beat numpy's calls here
        smallest, largest = min(values), max(values)
        if smallest < self.low or largest > self.high:
            return "range"
        if smallest <= self.full_low or largest >= self.full_high:
            return "saturated"
        if reading.cov is not None:
            eigenvalues = np.linalg.eigvalsh(reading.cov)
            if eigenvalues[0] < self.var_low or eigenvalues[-1] > self.var_high:
                return "cov"
        return None


def reading_bounds(sensors: Iterable[Sensor]) -> dict[str, ReadingBounds]:
    """Sensor id → its bounds (module docstring)."""
    bounds = {}
    for sensor in sensors:
        params = sensor.params
        sigma = params.noise.sample_sigma(params.rate)
        full = params.noise.saturation or (-np.inf, np.inf)
        bounds[params.name] = ReadingBounds(*params.range, (COV_FLOOR * sigma) ** 2, (COV_CEILING * sigma) ** 2, *full)
    return bounds
