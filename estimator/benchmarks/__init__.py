"""Benchmarks: wall time per step (compilation and warm-up excluded), with the machine and date.

Each case runs once to warm up (numba compilation, GTSAM set-up), then ``repeat`` times; the
median is reported, with the spread (min-max) showing the machine's other load. One module per
suite; ``estimator/cli/bench.py`` lists the suites.
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


def machine() -> str:
    """One line naming the machine and the date, to go with every reported figure."""
    return f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}"
