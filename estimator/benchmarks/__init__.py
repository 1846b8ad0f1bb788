"""Benchmarks: wall time per step (compilation and warm-up excluded), with the machine and date.

Each case runs once to warm up (numba compilation, GTSAM set-up), then ``repeat`` times; the
median is reported, with the spread (min-max) showing the machine's other load. One module per
suite; ``estimator/cli/bench.py`` lists the suites. ``accuracy`` is apart: the online estimator's
errors, latency and failures over a matrix of mechanisms, sensor sets and motions.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "mechanisms"


@dataclass(frozen=True)
class Timing:
    """Seconds per step (or per point): median and spread over repeats; ``note`` for accuracy or
    totals that go with the figure."""

    case: str
    per_step: float
    fastest: float
    slowest: float
    steps: int
    note: str = ""


def time_per_step(case: str, run: Callable[[], object], steps: int, repeat: int) -> Timing:
    """Run once to warm up, then ``repeat`` timed runs of ``steps`` steps each."""
    run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) / steps)
    return Timing(case, float(np.median(samples)), min(samples), max(samples), steps)


@dataclass(frozen=True)
class Stalls:
    """Pauses seen by a loop that only reads the clock: how often the machine itself stops a
    running Python thread (other load, the hypervisor), whatever the code being measured."""

    seconds: float
    over_half_ms: int
    over_1ms: int
    longest_ms: float


def clock_gaps(seconds: float, floor: float = 5e-4) -> np.ndarray:
    """Spin for ``seconds`` reading ``time.perf_counter``; the gaps between two reads longer than
    ``floor`` [s] (a read itself takes orders of magnitude less: such a gap is the machine's, not the
    loop's). Also ``mbstate doctor``'s stall probe."""
    gaps = []
    start = last = time.perf_counter()
    while last - start < seconds:
        now = time.perf_counter()
        if now - last > floor:
            gaps.append(now - last)
        last = now
    return np.array(gaps)


def machine_stalls(seconds: float = 5.0) -> Stalls:
    """Count the clock-reading loop's gaps (clock_gaps) over 0.5 and 1 ms in ``seconds``."""
    gaps = clock_gaps(seconds)
    return Stalls(seconds, int(np.sum(gaps > 5e-4)), int(np.sum(gaps > 1e-3)),
                  1e3 * float(gaps.max()) if len(gaps) else 0.0)


def machine() -> str:
    """One line naming the machine, the BLAS threads (estimator.threads) and the date, to go with every
    reported figure."""
    threads = sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})
    return (f"{platform.machine()} {os.cpu_count()} cores, BLAS threads {'/'.join(map(str, threads)) or '—'}, "
            f"Python {platform.python_version()}, {date.today()}")
