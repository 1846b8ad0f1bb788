"""The outlier gate of the online estimator (EstimatorConfig, Outliers): a reading whose squared
Mahalanobis distance from the state carried to its stamp exceeds ``outlier_gate``² is refused,
unless its sensor has had ``outlier_release`` refusals in a row (then the estimate, not the
sensor, is taken to be off, and the reading goes in)."""

from __future__ import annotations

import numpy as np

from estimator.online.config import EstimatorConfig


class OutlierGate:
    """The gate and its refusals in a row, by sensor."""

    def __init__(self, config: EstimatorConfig) -> None:
        self.config = config
        self.runs: dict[str, int] = {}

    def reference(self, k: int, states: dict[int, np.ndarray], next_step: int) -> int | None:
        """The step whose state a reading of step k is checked against, carried to its stamp: k, else
        k − 1, where that state is solved or is the guess of the next step to solve (one step
        predicted; guesses further ahead, while coalescing, are no reference: the accelerometer's q̈
        is held over the steps). None: not checked, nor in the first window after a start (the start
        prior leaves q̈, λ and the forces loose)."""
        if self.config.outlier_gate is None or k <= self.config.lag:
            return None
        return next((j for j in (k, k - 1) if j in states and j <= next_step), None)

    def refuses(self, sensor: str, distance: float) -> bool:
        """Whether a reading of ``sensor`` at squared distance ``distance`` from its reference is refused."""
        gate = self.config.outlier_gate
        run = self.runs.get(sensor, 0)
        if distance <= gate * gate:
            self.runs[sensor] = 0
            return False
        if run >= self.config.outlier_release:
            return False
        self.runs[sensor] = run + 1
        return True
