"""The outlier gate of the online estimator (EstimatorConfig, Outliers): a reading whose squared
Mahalanobis distance from the state carried to its stamp exceeds ``outlier_gate``² is refused,
unless its sensor has had ``outlier_release`` refusals in a row (then the estimate, not the
sensor, is taken to be off, and the reading goes in)."""

from __future__ import annotations

import numpy as np

from estimator.factors.observation_stack import Observation, squared_innovation
from estimator.online.config import EstimatorConfig


class OutlierGate:
    """The gate and its refusals in a row, by sensor."""

    def __init__(self, config: EstimatorConfig) -> None:
        self.config = config
        self.runs: dict[str, int] = {}

    def refuses(self, sensor: str, observation: Observation, k: int, states: dict[int, np.ndarray],
                next_step: int) -> bool:
        """The reading against the state of step k, else of step k − 1, carried to its stamp, where that
        state is solved or is the guess of the next step to solve (one step predicted; guesses further
        ahead, while coalescing, are no reference: the accelerometer's q̈ is held over the steps). Not
        in the first window after a start either: the start prior leaves q̈, λ and the forces loose."""
        gate = self.config.outlier_gate
        if gate is None or k <= self.config.lag:
            return False
        j = next((j for j in (k, k - 1) if j in states and j <= next_step), None)
        if j is None:
            return False
        distance = squared_innovation(observation, states[j], observation.delta + (k - j) * self.config.dt)
        run = self.runs.get(sensor, 0)
        if distance <= gate * gate:
            self.runs[sensor] = 0
            return False
        if run >= self.config.outlier_release:
            return False
        self.runs[sensor] = run + 1
        return True
