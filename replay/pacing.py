"""Real-time pacing of recorded messages: each is released when the wall clock has advanced, since
the first one, by its stamp minus the first stamp, divided by ``speed``."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def stamp(message: Any) -> float | None:
    """The message's ``t`` (a map's key, or an attribute as of a sensors.messages.Reading) when it is a
    finite number (malformed messages go out at once)."""
    t = message.get("t") if isinstance(message, dict) else getattr(message, "t", None)
    ok = isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t)
    return float(t) if ok else None


def paced(messages: Iterable[Any], speed: float = 1.0, stop: threading.Event | None = None,
          stamp_of: Callable[[Any], float | None] = stamp) -> Iterator[Any]:
    """Yield ``messages`` in order, each no earlier than its time ``stamp_of(message)`` (see the module
    docstring); ends early when ``stop`` is set. Stamps that go back release their message at once."""
    start, first = time.monotonic(), None
    for message in messages:
        t = stamp_of(message)
        if t is not None:
            first = t if first is None else first
            delay = start + (t - first) / speed - time.monotonic()
            if delay > 0.0 and (stop.wait(delay) if stop is not None else time.sleep(delay)):
                return
        if stop is not None and stop.is_set():
            return
        yield message
