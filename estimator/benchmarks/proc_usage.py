"""CPU use of processes read from /proc while they run: the proxies of one process's cost to another
that hold on a shared machine, where latency percentiles do not.

A :class:`ProcessSampler` thread reads, every PERIOD_S, ``utime + stime`` (/proc/PID/stat, in clock ticks)
of each process it finds by a role function over a process tree, and the context switches of one process's
main thread (/proc/PID/status: the thread that runs the node's loop in ``mbstate demo``). A role's CPU
share is the sum over its processes of their ticks between the first and the last sample inside the
window, divided by the window's wall time [cores]; the context switches are per second of that window.
Linux only.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PERIOD_S = 0.2  # [s] between two reads of /proc
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")  # [s] per clock tick of utime and stime


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (empty once it has gone)."""
    found = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in path.read_text().split()]
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """``pid``'s children, their children, and so on."""
    found, todo = [], children(pid)
    while todo:
        found.append(todo.pop())
        todo += children(found[-1])
    return found


def cpu_ticks(pid: int) -> int | None:
    """utime + stime of ``pid`` [clock ticks]; None once it has gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the ")"


def context_switches(pid: int) -> tuple[int, int] | None:
    """(voluntary, involuntary) context switches of ``pid``'s main thread; None once it has ended."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    if any(line.startswith("State:") and ("Z" in line or "X" in line) for line in lines):
        return None
    counts = dict(line.split(":") for line in lines if line.endswith(tuple("0123456789")) and "ctxt" in line)
    return int(counts["voluntary_ctxt_switches"]), int(counts["nonvoluntary_ctxt_switches"])


def command_line(pid: int) -> str:
    """``pid``'s command line, its arguments joined by spaces ("" once it has gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Usage:
    """A role's samples: per pid, the first and last ticks seen in the window."""

    first: dict[int, int] = field(default_factory=dict)
    last: dict[int, int] = field(default_factory=dict)


class ProcessSampler:
    """Samples the processes under ``root`` that ``role`` names from their pid and command line (None: not
    sampled), from :meth:`open_window` until :meth:`stop`, and the context switches of process ``watched``."""

    def __init__(self, root: int, role: Callable[[int, str], str | None], watched: int) -> None:
        self.root, self.role, self.watched = root, role, watched
        self.usage: dict[str, Usage] = {}
        self.switches: list[tuple[int, int]] = []
        self.open = False
        self.started: float | None = None
        self.ended = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proc-sampler", daemon=True)
        self._thread.start()

    def open_window(self) -> None:
        """Count from the next sample on."""
        self.open = True

    def _run(self) -> None:
        while not self._stop.wait(PERIOD_S):
            if self.open:
                self._sample()

    def _sample(self) -> None:
        """One read of every process, while the watched one runs."""
        now, switches = time.monotonic(), context_switches(self.watched)
        if switches is None:
            return
        for pid in descendants(self.root):
            role = self.role(pid, command_line(pid))
            ticks = cpu_ticks(pid) if role else None
            if ticks is not None:
                usage = self.usage.setdefault(role, Usage())
                usage.first.setdefault(pid, ticks)
                usage.last[pid] = ticks
        self.switches.append(switches)
        self.started, self.ended = self.started or now, now

    def stop(self) -> dict[str, float]:
        """Stop sampling; {role: cores used, ``voluntary/s`` and ``involuntary/s``: the watched process's
        main thread's context switches per second} over the window, from its first to its last sample
        while the watched process ran."""
        self._stop.set()
        self._thread.join()
        wall = max(self.ended - (self.started or self.ended), 1e-9)
        result = {role: TICK_S * sum(usage.last[pid] - usage.first[pid] for pid in usage.first) / wall
                  for role, usage in self.usage.items()}
        if len(self.switches) > 1:
            (v0, n0), (v1, n1) = self.switches[0], self.switches[-1]
            result["voluntary/s"], result["involuntary/s"] = (v1 - v0) / wall, (n1 - n0) / wall
        return result
