"""The online estimator's load governor: degradation levels from the step latencies (the
estimator.online.estimator module docstring, Load).

Every update's steps get its time divided by their number (their share); a share over the budget is
an overrun and raises the level by one. After ``recover_steps`` steps without an overrun the level
drops by one if their mean share is under ``recover_fraction`` of the budget (the mean, not every
step in a row: isolated machine stalls would keep the level up long after the load has gone); either
way the count starts again. Level 1 stops marginal sigmas and freezes relinearizations (the factors
answer from their last linearization, estimator.factors.frozen); level L ≥ 2 also coalesces
min(L, max_coalesce) grid steps into one update. A level that changes nothing in the configuration
is skipped."""

from __future__ import annotations

from estimator.factors.frozen import FreezeSwitch
from estimator.online.config import EstimatorConfig


class LoadGovernor:
    """The degradation level and its bookkeeping; ``counters`` (the estimator's, shared) receive
    ``overruns`` and ``recoveries``; ``freeze`` is switched on at level 1 and above."""

    def __init__(self, config: EstimatorConfig, counters: dict[str, int], freeze: FreezeSwitch) -> None:
        self.config, self.counters, self.freeze = config, counters, freeze
        first_helps = config.relinearize_threshold is not None or config.publish_sigmas
        self.levels = [0] + [1] * first_helps + list(range(2, config.max_coalesce + 1))
        self.reset()

    def reset(self) -> None:
        """Level 0, the calm count cleared."""
        self.level, self.calm, self.calm_seconds = 0, 0, 0.0
        self.freeze.on = False

    @property
    def group_size(self) -> int:
        """Grid steps per smoother update at the current level (1 below level 2)."""
        return min(self.level, self.config.max_coalesce) if self.level >= 2 else 1

    def record(self, share: float, steps: int) -> bool:
        """After an update of ``steps`` steps of ``share`` seconds each: the level raised on an overrun,
        lowered after a calm stretch (module docstring); True if it was lowered."""
        budget = 1e-3 * self.config.latency_budget_ms
        recovered = False
        if share > budget:
            self.counters["overruns"] += steps
            self.level = self.levels[min(self.levels.index(self.level) + 1, len(self.levels) - 1)]
            self.calm, self.calm_seconds = 0, 0.0
        else:
            self.calm += steps
            self.calm_seconds += share * steps
            if self.calm >= self.config.recover_steps:
                if self.level and self.calm_seconds < self.config.recover_fraction * budget * self.calm:
                    self.level = self.levels[self.levels.index(self.level) - 1]
                    self.counters["recoveries"] += 1
                    recovered = True
                self.calm, self.calm_seconds = 0, 0.0
        self.freeze.on = self.level >= 1
        return recovered
