"""The node's loop thread at a real-time priority and on chosen cores (``mbstate run / demo --priority --cpu``).

On a lab PC the systemd unit grants both to the whole process (deploy/mbstate.service: CPUSchedulingPolicy=fifo,
CPUSchedulingPriority=, CPUAffinity=); these options do it by hand, for the loop's thread only (Linux: pid 0
of sched_setscheduler / sched_setaffinity is the calling thread): ZeroMQ's I/O threads and a process the
node's process starts keep the normal policy (SCHED_RESET_ON_FORK). Why: on a machine whose cores the
node shares (a browser showing the view, docs/view.md), SCHED_FIFO lets no process of the normal policy
preempt a step. A step that never blocks would hold its core; the kernel's real-time throttling (95 % of
each second by default) still leaves the rest to others. Without the permission (root, CAP_SYS_NICE, or
RLIMIT_RTPRIO as the unit's LimitRTPRIO=) the loop runs as before after one warning.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

from estimator.errors import MbstateError

LOGGER = logging.getLogger("mbstate.node")
PRIORITIES = range(1, 100)  # SCHED_FIFO's priorities on Linux


@dataclass(frozen=True)
class LoopScheduling:
    """``priority``: the loop thread's SCHED_FIFO priority (1–99; None: the normal policy); ``cpus``: the
    cores it may run on (empty: those of the process)."""

    priority: int | None = None
    cpus: frozenset[int] = frozenset()

    def check(self) -> None:
        """MbstateError naming the option when a value cannot be used on this machine."""
        if self.priority is not None and self.priority not in PRIORITIES:
            raise MbstateError(f"--priority: expected 1 to 99, got {self.priority}")
        allowed = os.sched_getaffinity(0)
        if not self.cpus <= allowed:
            raise MbstateError(f"--cpu: no core {', '.join(map(str, sorted(self.cpus - allowed)))} here "
                               f"(this process may use {', '.join(map(str, sorted(allowed)))})")


def cpu_list(text: str) -> frozenset[int]:
    """argparse type: cores as ``1`` or ``0,2``."""
    try:
        cpus = frozenset(int(part) for part in text.split(","))
    except ValueError:
        cpus = frozenset({-1})
    if not cpus or min(cpus) < 0:
        raise ValueError(text)  # argparse: "invalid cpu_list value"
    return cpus


@contextlib.contextmanager
def scheduled(scheduling: LoopScheduling) -> Iterator[None]:
    """The calling thread at ``scheduling`` inside the block, and what it changed put back after it; a
    warning when the priority is not permitted."""
    with contextlib.ExitStack() as stack:
        if scheduling.cpus:
            stack.callback(os.sched_setaffinity, 0, os.sched_getaffinity(0))
            os.sched_setaffinity(0, scheduling.cpus)
        if scheduling.priority is not None:
            policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(scheduling.priority))
                stack.callback(os.sched_setscheduler, 0, policy, param)
            except PermissionError:
                LOGGER.warning("node: not permitted to run the loop at SCHED_FIFO priority %d (root, CAP_SYS_NICE or "
                               "LimitRTPRIO=); it runs at the normal priority", scheduling.priority)
        yield
