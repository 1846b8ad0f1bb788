"""How far behind its input stream the node is, and when it skips the backlog (estimator.node.runtime).

The node is *current* when, after it has taken a message, no other message waits on its input: it
has everything the senders have sent. At that moment the sensor clock is mapped to the node's wall
clock by the delay of the newest admitted stamp t_n, taken at wall time w:

    d₀ = w − t_n                                                         [s]

While messages keep waiting, each message taken measures how far the newest stamp is behind the
sensor clock so mapped:

    lag = (w − t_n) − d₀                                                 [s]

(a stream whose stamps follow the wall clock: the time the node took beyond the sensor time it
covered). Every message taken since the node was last current, at wall time w₀, was sent after w₀:
it has waited at most ``busy = w − w₀``, so a node busy for less than ``max_lag_s`` is never more
than that behind. Beyond it, and with the lag beyond ``max_lag_s`` either way, the node skips the
backlog in estimation:

- ``behind``: lag > max_lag_s: the node takes the readings slower than the sensors stamp them, and
  the ones it takes are that much older than the stream's newest;
- ``burst``: lag < −max_lag_s: the stamps taken ran that far ahead of the wall clock, so the stream
  arrives faster than real time (a burst, a log published at speed, a backlog released at once),
  the mapping cannot tell how far behind the node is, and the node has been busy for longer than
  ``max_lag_s``. A sender that pours its readings out as fast as it can (a log published at full
  speed) is such a burst: to have every reading estimated, ``max_lag_s`` null (or ``mbstate replay``).

A stream that keeps to the wall clock moves the lag by the node's own hiccups only (an update of a
few milliseconds, a garbage collection, the estimator's start-up): ``max_lag_s`` (0.25 s by default,
the span ``max_future_s`` already restarts the estimator over when the stamps jump it) stays clear
of those, and well under the 1 s of sensor time the estimates may trail the stream: a node taking
a faster-than-real-time stream at r times real time sees it after max(1, 1/(r − 1)) · max_lag_s of
wall time.

Skipping ends at the next moment the node is current (the mapping is then taken again). A new time
base of the stamps (the intake forgot them: a reset, a resync) maps the clocks again at the next
message, current or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BEHIND, BURST = "behind", "burst"


class BacklogWatch:
    """The lag of the module docstring, measured after every message the node takes; ``clock``: the
    wall clock [s]."""

    def __init__(self, max_lag_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_lag_s, self.clock = max_lag_s, clock
        self.delay: float | None = None  # d₀ [s], None before a mapping
        self.epoch: int | None = None  # the intake's time base of d₀
        self.current_at = 0.0  # w₀ [s]
        self.lag = 0.0

    def verdict(self, newest: float | None, epoch: int, waiting: bool) -> str | None:
        """After a message taken: ``newest`` admitted stamp [s] (None: none yet), ``epoch`` of the
        intake's stamps, whether more messages ``waiting``; the reason to skip (``behind``, ``burst``)
        or None (current, or within ``max_lag_s``)."""
        now = self.clock()
        if newest is None:
            self.delay, self.lag = None, 0.0
            return None
        if not waiting or self.delay is None or epoch != self.epoch:
            self.delay, self.epoch, self.current_at, self.lag = now - newest, epoch, now, 0.0
            return None
        self.lag = now - newest - self.delay
        if now - self.current_at <= self.max_lag_s:
            return None
        return BEHIND if self.lag > self.max_lag_s else BURST if self.lag < -self.max_lag_s else None
