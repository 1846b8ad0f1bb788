"""What ``mbstate doctor`` reads from the machine: one function per fact, each replaceable in tests.

Linux interfaces: cpufreq's ``scaling_governor`` per CPU, ``/sys/devices/system/cpu/isolated`` (the
``isolcpus=`` kernel parameter), the clocksource sysfs files, and ``adjtimex(2)`` read-only (modes
0) for the kernel's view of time synchronization (NTP, chrony, PTP via phc2sys all set it). A fact a
machine does not expose (a virtual machine's cpufreq, another OS) is None or empty, not an error.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

from estimator.benchmarks import clock_gaps

SYS_CPU = Path("/sys/devices/system/cpu")
CLOCKSOURCE = Path("/sys/devices/system/clocksource/clocksource0")
TIME_ERROR = 5  # adjtimex's return value for a clock not synchronized
STALL_FLOOR_S = 5e-5  # gaps of the clock-reading loop recorded from this length [s]


@dataclass(frozen=True)
class TimeSync:
    """The kernel's time-synchronization state: ``synchronized`` None when unknown; ``max_error_us``
    the kernel's maximum error estimate [µs]."""

    synchronized: bool | None
    max_error_us: float | None = None


class _Timex(ctypes.Structure):
    """The head of Linux's ``struct timex`` and room for the rest (adjtimex writes all of it)."""

    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("rest", ctypes.c_byte * 256)]


def governors() -> dict[str, str]:
    """CPU name → its cpufreq scaling governor; empty where cpufreq is not exposed."""
    found = {}
    for path in sorted(SYS_CPU.glob("cpu[0-9]*/cpufreq/scaling_governor")):
        found[path.parents[1].name] = path.read_text().strip()
    return found


def isolated_cpus() -> str:
    """The isolated CPU list (``isolcpus=``), e.g. ``"1"`` or ``"2-3"``; empty when none."""
    path = SYS_CPU / "isolated"
    return path.read_text().strip() if path.is_file() else ""


def cpu_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def blas_threads() -> list[tuple[str, int]]:
    """(library, threads) of every BLAS loaded in this process (after ``mbstate``'s one-thread limit)."""
    return [(Path(pool["filepath"]).name, int(pool["num_threads"]))
            for pool in threadpool_info() if pool["user_api"] == "blas"]


def clock_source() -> tuple[str | None, tuple[str, ...]]:
    """(current, available) clock sources; (None, ()) where sysfs does not show them."""
    current, available = CLOCKSOURCE / "current_clocksource", CLOCKSOURCE / "available_clocksource"
    if not current.is_file():
        return None, ()
    return current.read_text().strip(), tuple(available.read_text().split()) if available.is_file() else ()


def time_sync() -> TimeSync:
    """The kernel's synchronization state by ``adjtimex`` (read only); unknown off Linux."""
    try:
        adjtimex = ctypes.CDLL(None, use_errno=True).adjtimex
    except (OSError, AttributeError):
        return TimeSync(None)
    timex = _Timex()
    state = adjtimex(ctypes.byref(timex))
    if state < 0:
        return TimeSync(None)
    return TimeSync(state != TIME_ERROR, float(timex.maxerror))


def stall_gaps(seconds: float) -> np.ndarray:
    """Gaps [s] of at least STALL_FLOOR_S in ``seconds`` of a loop that only reads the clock."""
    return clock_gaps(seconds, STALL_FLOOR_S)


def free_bytes(path: Path) -> int:
    """Free bytes for an unprivileged writer on the file system that holds ``path`` (or its nearest
    existing parent)."""
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


@dataclass(frozen=True)
class Probes:
    """The probes ``mbstate doctor`` runs; tests give their own results."""

    governors: Callable[[], dict[str, str]] = governors
    isolated_cpus: Callable[[], str] = isolated_cpus
    cpu_count: Callable[[], int] = cpu_count
    blas_threads: Callable[[], list[tuple[str, int]]] = blas_threads
    clock_source: Callable[[], tuple[str | None, tuple[str, ...]]] = clock_source
    time_sync: Callable[[], TimeSync] = time_sync
    stall_gaps: Callable[[float], np.ndarray] = stall_gaps
    free_bytes: Callable[[Path], int] = free_bytes
