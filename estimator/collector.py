"""Python's garbage collector kept out of the estimator's steps.

CPython's cyclic collector runs when allocations cross a threshold, i.e. at an arbitrary point, often
inside a smoother update. A collection scans every tracked object of its generations, and the
objects alive after start-up (numpy, numba, GTSAM, the model) are many: a generation-1 collection
can take longer than a step's latency budget, a full one far longer (docs/performance.md).
Hence, while a run is in ``steady_collection``:

- the objects alive at its start are frozen (``gc.freeze``): no collection scans them again;
- automatic collection is off, and ``collect_if_due`` — called by the estimator between steps (at
  the next reading, once the estimates are out) — runs the collection CPython would have run by
  now (the same thresholds and generations), so the collector still runs, between steps.

Outside ``steady_collection`` the collector is automatic and ``collect_if_due`` does nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def steady_collection() -> Iterator[None]:
    """Freeze the objects alive now and collect only through ``collect_if_due`` until the block ends;
    nothing changes if automatic collection is already off (a nested block, or the host's choice)."""
    if not gc.isenabled():
        yield
        return
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def collect_if_due() -> int:
    """The collection the automatic collector would have run by now, if it is off; the generation
    collected, or −1 for none. CPython's rule: once the count of generation 0 (allocations minus
    deallocations) exceeds its threshold, collect the oldest generation whose count exceeds its
    threshold (the count of generation g ≥ 1: collections of g − 1 since its last one)."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    if gc.isenabled() or not thresholds[0] or counts[0] <= thresholds[0]:
        return -1
    generation = max(g for g in range(3) if counts[g] > thresholds[g])
    gc.collect(generation)
    return generation
