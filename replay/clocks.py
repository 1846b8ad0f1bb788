"""The clocks replay and tests give an online estimator instead of the wall clock (it reads its clock
twice per smoother update, at the start and at the end: the difference is the update's latency)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from estimator.node.stats import LatencyWindow


class FixedClock:
    """Starts at 0 and advances ``tick`` seconds at every read: ``FixedClock()`` never advances (every
    latency 0: a deterministic replay), ``FixedClock(tick)`` makes every update last ``tick`` s."""

    def __init__(self, tick: float = 0.0) -> None:
        self.tick, self.now = tick, 0.0

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


class MeasuredFixedClock:
    """The estimator's clock of a deterministic replay: every read returns 0, as a ``FixedClock()``
    does (latency 0: the estimator never degrades), while the wall time between the two reads of
    each smoother update (start, end) goes to ``latency``, for the status only."""

    def __init__(self) -> None:
        self.latency, self.reads, self.started = LatencyWindow(), 0, 0.0

    def __call__(self) -> float:
        now = time.perf_counter()
        if self.reads % 2:
            self.latency.add(now - self.started)
        self.started, self.reads = now, self.reads + 1
        return 0.0


class RecordedClock:
    """The live run's timing, replayed: each smoother update (two clock reads, start and end) lasts
    what the same update lasted on the node, by the log's estimate records. The estimator then
    degrades, coalesces and recovers as it did live, so replay gives the live estimates even when the
    node ran over its budget (a recorded share equal to the budget to the last bit aside: the record
    keeps it in ms). Updates beyond the recorded ones last 0 s."""

    def __init__(self, durations: Sequence[float]) -> None:
        self.durations, self.reads = list(durations), 0

    def __call__(self) -> float:
        update, end = divmod(self.reads, 2)
        self.reads += 1
        return self.durations[update] if end and update < len(self.durations) else 0.0
