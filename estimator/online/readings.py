"""Readings attached to grid steps (the estimator.online.estimator module docstring, Readings): a
reading for a step not yet processed waits in ``pending`` (or, once the step is drafted, in its
draft's rows); one for a processed step still in the window goes to ``late`` (its own factor with
the next update); older ones are not used. At most ``max_pending`` readings wait; beyond that the
oldest is dropped (drafts first: they are the earliest steps)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from estimator.factors.keys import drop_oldest
from estimator.factors.observation_stack import Observation
from estimator.online.drafting import DraftStep

log = logging.getLogger(__name__)


class StepReadings:
    """The readings waiting for their steps; ``count`` of those pending or in drafts. ``counters``
    (the estimator's, shared) receive ``dropped``."""

    def __init__(self, max_pending: int, lag: int, counters: dict[str, int]) -> None:
        self.max_pending, self.lag, self.counters = max_pending, lag, counters
        self.pending: dict[int, list[Observation]] = {}
        self.drafts: dict[int, DraftStep] = {}  # the next update's steps, drafted ahead, by step
        self.late: dict[int, list[Observation]] = {}
        self.count = 0

    def place(self, observation: Observation, k: int, next_step: int,
              rows: tuple[np.ndarray, np.ndarray] | None = None) -> str:
        """Attach a reading of step k (``next_step``: the first step not processed; ``rows``: its rows at
        the guess of step k's draft, if already evaluated); its disposition, ``pending``, ``used`` or
        ``late``."""
        if k >= next_step:
            if k in self.drafts:
                self.drafts[k].rows.add(observation, rows)
            else:
                self.pending.setdefault(k, []).append(observation)
            self.count += 1
            if self.count > self.max_pending:
                self._drop_oldest()
            return "pending"
        if k >= max(0, next_step - 1 - self.lag):
            self.late.setdefault(k, []).append(observation)
            return "used"
        log.debug("late reading %s of step %d (window starts at step %d): not used",
                  observation.term.sensor.params.name, k, next_step - 1 - self.lag)
        return "late"

    def _drop_oldest(self) -> None:
        """Discard the oldest reading of the earliest step not yet processed (drafts come first)."""
        drafted = [draft.rows for draft in self.drafts.values() if draft.rows.observations]
        if drafted:
            drafted[0].drop_oldest()
        else:
            drop_oldest(self.pending)
        self.count -= 1
        self.counters["dropped"] += 1

    def due(self, k: int, draft: Callable[[int], DraftStep]) -> DraftStep:
        """Step k's draft (made by ``draft`` if it was not drafted ahead), its readings no longer waiting."""
        step = self.drafts.pop(k, None) or draft(k)
        self.count -= len(step.rows.observations)
        return step

    def take_late(self) -> dict[int, list[Observation]]:
        """The late readings by step, and none left."""
        late, self.late = self.late, {}
        return late
