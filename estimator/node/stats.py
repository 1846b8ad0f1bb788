"""Counters and latency statistics of the running node, reported in its status messages."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np

from sensors.messages import SEQ_LIMIT


class LatencyWindow:
    """The last ``size`` step latencies [s] with p50 / p99 over them and the maximum since start."""

    def __init__(self, size: int = 10_000) -> None:
        self._samples: deque[float] = deque(maxlen=size)
        self.count = 0
        self.worst = 0.0

    def add(self, seconds: float) -> None:
        self._samples.append(seconds)
        self.count += 1
        self.worst = max(self.worst, seconds)

    def summary_ms(self) -> dict[str, float]:
        """p50, p99 over the window and the maximum since start, in milliseconds."""
        if not self._samples:
            return {"p50": 0.0, "p99": 0.0, "max": 0.0}
        p50, p99 = np.percentile(np.fromiter(self._samples, float), [50, 99])
        return {"p50": 1e3 * float(p50), "p99": 1e3 * float(p99), "max": 1e3 * self.worst}


MAX_SEQ_GAP = 2**24  # a longer jump forward is taken as a restarted counter, not as lost readings


@dataclass
class SensorTrack:
    """What the node has seen of one sensor: the last accepted stamp, the last sequence number of a valid
    reading (admitted or not), how many readings it accepted, the sequence numbers it never saw
    (``gaps``: lost upstream or by the input queue; a reading dropped for its stamp or value is not a
    gap) and how often its counter restarted (``restarts``).

    The step from one ``seq`` to the next is taken modulo 2**64: +1 is the normal case, +2 …
    +MAX_SEQ_GAP + 1 adds the skipped numbers to ``gaps``; anything else (back, repeated, or a jump of
    more than MAX_SEQ_GAP, which no queue or link drop explains) is a restart of the sensor's counter.
    """

    last_t: float | None = None
    last_seq: int | None = None
    accepted: int = 0
    gaps: int = 0
    restarts: int = 0
    period_count: int = 0

    def see(self, seq: int) -> bool:
        """Note the sequence number of a valid reading; True if numbers were skipped (a gap)."""
        skipped = False
        if self.last_seq is not None:
            step = (seq - self.last_seq) % SEQ_LIMIT
            if 1 < step <= MAX_SEQ_GAP + 1:
                self.gaps += step - 1
                skipped = True
            elif step != 1:
                self.restarts += 1
        self.last_seq = seq
        return skipped

    def accept(self, t: float) -> None:
        self.last_t = t
        self.accepted += 1
        self.period_count += 1

    def report(self, period: float) -> dict:
        """Status entry; the rate [Hz] is over the ``period`` [s] since the previous report."""
        entry = {"rate_hz": self.period_count / max(period, 1e-9), "accepted": self.accepted, "gaps": self.gaps,
                 "restarts": self.restarts, "last_t": self.last_t}
        self.period_count = 0
        return entry


@dataclass
class NodeCounters:
    """Everything the node counts about its input, with the reason of every drop.

    ``received``: messages taken off the socket; ``malformed``: rejected by validation, one reason
    per message, the first problem found (``undecodable``, ``too_deep``, ``unknown_sensor``,
    ``invalid``: sensors.messages); ``dropped``: valid but not used (reasons below); ``late``: the
    estimator's window had passed; ``accepted``: handed to the estimator; ``steps`` / ``overruns``:
    estimates published / over the latency budget; ``disconnects``: input peers ZeroMQ dropped (an
    oversized message disconnects its sender); ``bad_requests``: control requests that were not a
    known command (answered with an error); ``resyncs``: restarts at a new sensor time
    (estimator.node.intake). Dropped reasons: ``backwards``, ``future``, ``range`` and ``cov``
    (sensors.plausibility), ``ignored`` and ``outlier`` (the estimator's). ``skipped``: admitted
    (recorded, stamps checked) but not estimated while the node caught up with its input, by the
    reason it was behind (``behind``, ``burst``: estimator.node.backlog).
    """

    received: int = 0
    accepted: int = 0
    late: int = 0
    steps: int = 0
    overruns: int = 0
    disconnects: int = 0
    bad_requests: int = 0
    resyncs: int = 0
    dropped: Counter = field(default_factory=Counter)
    malformed: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"received": self.received, "accepted": self.accepted, "late": self.late, "steps": self.steps,
                "overruns": self.overruns, "disconnects": self.disconnects, "bad_requests": self.bad_requests,
                "resyncs": self.resyncs,
                "dropped": sum(self.dropped.values()), "dropped_by_reason": dict(self.dropped),
                "malformed": sum(self.malformed.values()), "malformed_by_reason": dict(self.malformed),
                "skipped": sum(self.skipped.values()), "skipped_by_reason": dict(self.skipped)}
