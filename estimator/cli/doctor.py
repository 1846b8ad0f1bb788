"""``mbstate doctor [--config CONFIG.yaml] [--probe-seconds S]``: is this machine fit for the node's
real-time work, and what to change (docs/deploy.md).

Each check gives one finding: ``ok``; ``change`` (the node runs, but this costs latency margin,
security or recording time, and the line says what to change); ``breaks`` (a step would miss the
latency budget, ``estimator.latency_budget_ms``, 1 ms by default). Exit code 0, or 1 when a finding
breaks the budget. The checks: CPU governor, isolated cores, BLAS threads, clock source, time
synchronization, the machine's stalls (a loop reading the clock for ``--probe-seconds``, binned), and
with ``--config`` the disk the recording needs and the binding of the node's sockets. The machine's
facts come from estimator.cli.doctor_probes.
"""

from __future__ import annotations

import argparse
import platform
from dataclasses import dataclass
from datetime import date
from typing import Any

import msgpack
import numpy as np

from estimator.argument_types import positive_float
from estimator.cli.doctor_probes import Probes
from estimator.logfile import FRAME
from estimator.node.access import beyond_loopback
from estimator.node.config import NodeConfig, load_node_config

DEFAULT_BUDGET_MS = 1.0
PROBE_SECONDS = 10.0
STALL_BINS_MS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)  # histogram edges [ms]; the last bin is open
FAST_GOVERNORS = ("performance",)
FAST_CLOCKSOURCES = ("tsc", "kvm-clock", "hyperv_clocksource_tsc_page", "arch_sys_counter")
DISK_HOURS_WANTED = 24.0  # recording time the free disk should hold [h]


@dataclass(frozen=True)
class Finding:
    """One check's result: ``level`` ``ok``, ``change`` or ``breaks``; ``found`` what the machine shows; ``advice`` what
    to change and why (empty when ok)."""

    check: str
    level: str
    found: str
    advice: str = ""
    why: str = ""  # a breaking finding's reason, for the verdict


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check the machine for real-time work and say what to change",
        description="Check what the node's 1 ms steps need of this machine: CPU governor, isolated cores, BLAS "
                    "threads, clock source, time synchronization, stalls in a short probe; with --config also the "
                    "free disk for its recording and its sockets' binding. Exit code 0, or 1 when a finding would "
                    "break the latency budget (docs/deploy.md).")
    parser.add_argument("--config", metavar="CONFIG.yaml", help="a node configuration: check its recording's disk "
                                                                 "and its sockets, take its latency budget")
    parser.add_argument("--probe-seconds", type=positive_float, default=PROBE_SECONDS, metavar="S",
                        help=f"length of the stall probe [s] (default {PROBE_SECONDS:g})")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = load_node_config(args.config) if args.config else None
    budget_ms = _budget_ms(config)
    print(f"mbstate doctor: {platform.machine()}, Python {platform.python_version()}, {date.today()}; "
          f"latency budget {budget_ms:g} ms per step")
    results = findings(Probes(), config, args.probe_seconds, budget_ms)
    width = max(len(f.check) for f in results)
    for finding in results:
        print(f"{finding.level:<7} {finding.check:<{width}}  {finding.found}")
        if finding.advice:
            print(f"{'':<7} {'':<{width}}  -> {finding.advice}")
    breaking = [f for f in results if f.level == "breaks"]
    if not config:
        print("(give --config CONFIG.yaml to check the recording's disk and the sockets)")
    if breaking:
        print(f"verdict: {len(breaking)} finding(s) break the {budget_ms:g} ms budget: "
              + "; ".join(f"{f.check}: {f.why}" for f in breaking))
        return 1
    changes = sum(f.level == "change" for f in results)
    print(f"verdict: fit for the {budget_ms:g} ms budget" + (f"; {changes} change(s) advised" if changes else ""))
    return 0


def _budget_ms(config: NodeConfig | None) -> float:
    return float(getattr(config.estimator, "latency_budget_ms", DEFAULT_BUDGET_MS)) if config else DEFAULT_BUDGET_MS


def findings(probes: Probes, config: NodeConfig | None, probe_seconds: float,
             budget_ms: float = DEFAULT_BUDGET_MS) -> list[Finding]:
    """Every check's finding, in the order printed."""
    results = [governor(probes), isolation(probes), blas(probes), clock(probes), time_sync(probes),
               stalls(probes, probe_seconds, budget_ms)]
    if config is not None:
        results += [disk(probes, config), *sockets(config)]
    return results


def governor(probes: Probes) -> Finding:
    found = probes.governors()
    if not found:
        return Finding("governor", "ok", "cpufreq not exposed (a virtual machine: the host sets the clock speed)")
    slow = sorted({g for g in found.values() if g not in FAST_GOVERNORS})
    if not slow:
        return Finding("governor", "ok", f"performance on all {len(found)} CPUs")
    cpus = [cpu for cpu, g in found.items() if g not in FAST_GOVERNORS]
    return Finding("governor", "change", f"{'/'.join(slow)} on {', '.join(cpus)}",
                   "a step's time grows as the clock slows down and each idle core takes time to speed up: "
                   "`cpupower frequency-set -g performance` (or the BIOS's performance profile)")


def isolation(probes: Probes) -> Finding:
    isolated, cpus = probes.isolated_cpus(), probes.cpu_count()
    if isolated:
        return Finding("isolated cores", "ok", f"CPUs {isolated} isolated",
                       f"run the node there: CPUAffinity={isolated} in deploy/mbstate.service")
    if cpus < 2:
        return Finding("isolated cores", "change", "one CPU: nothing to isolate",
                       "every other process preempts the node; a machine with 2 or more cores")
    return Finding("isolated cores", "change", f"none of {cpus} CPUs isolated",
                   f"other processes share the node's core: boot with `isolcpus={cpus - 1} nohz_full={cpus - 1} "
                   f"rcu_nocbs={cpus - 1}` and set CPUAffinity={cpus - 1} in deploy/mbstate.service")


def blas(probes: Probes) -> Finding:
    pools = probes.blas_threads()
    if not pools:
        return Finding("BLAS threads", "ok", "no BLAS loaded")
    shown = ", ".join(f"{name} {threads}" for name, threads in pools)
    if all(threads == 1 for _, threads in pools):
        return Finding("BLAS threads", "ok", f"{shown} (mbstate limits BLAS to one thread, estimator/threads.py)")
    return Finding("BLAS threads", "breaks", shown,
                   "a second BLAS thread spins on another core and the estimator waits for it whenever that core "
                   "is busy (p99 8 ms measured, docs/performance.md); call estimator.threads.one_blas_thread() "
                   "first, or set OPENBLAS_NUM_THREADS=1",
                   why="a BLAS library runs more than one thread, whose spinning delays the estimator's steps")


def clock(probes: Probes) -> Finding:
    current, available = probes.clock_source()
    if current is None:
        return Finding("clock source", "ok", "not shown by this system")
    if current in FAST_CLOCKSOURCES:
        return Finding("clock source", "ok", f"{current} (read in user space, tens of ns)")
    better = next((name for name in FAST_CLOCKSOURCES if name in available), None)
    advice = (f"`echo {better} > {'/sys/devices/system/clocksource/clocksource0/current_clocksource'}` "
              f"(and clocksource={better} on the kernel command line)" if better
              else "no faster clock source is available: a machine whose TSC is stable")
    return Finding("clock source", "change", f"{current} (a system call per read, about a µs)",
                   "the node reads the clock for every message and step; " + advice)


def time_sync(probes: Probes) -> Finding:
    state = probes.time_sync()
    if state.synchronized is None:
        return Finding("time sync", "change", "unknown", "make sure chrony, systemd-timesyncd or PTP keeps the clock")
    if state.synchronized:
        error = f", maximum error {state.max_error_us / 1e3:.3g} ms" if state.max_error_us is not None else ""
        return Finding("time sync", "ok", f"synchronized{error}")
    return Finding("time sync", "change", "not synchronized",
                   "the recording's names and status times drift, and sensors on other hosts stamp by their own "
                   "clocks: readings more than node.max_future_s ahead are dropped; run chrony (or PTP for "
                   "sensors on other machines)")


def stall_histogram(gaps: np.ndarray) -> list[tuple[str, int]]:
    """(bin label, count) of the gaps [s] binned by STALL_BINS_MS."""
    edges = (*STALL_BINS_MS, np.inf)
    counts = np.histogram(1e3 * np.asarray(gaps, float), bins=edges)[0]
    labels = [f"{lo:g}-{hi:g}" for lo, hi in zip(STALL_BINS_MS, STALL_BINS_MS[1:])] + [f">={STALL_BINS_MS[-1]:g}"]
    return list(zip(labels, (int(c) for c in counts)))


def stalls(probes: Probes, seconds: float, budget_ms: float) -> Finding:
    gaps = 1e3 * np.asarray(probes.stall_gaps(seconds), float)
    histogram = ", ".join(f"{label} ms: {count}" for label, count in stall_histogram(gaps / 1e3) if count)
    longest = float(gaps.max()) if gaps.size else 0.0
    found = (f"{gaps.size} pauses of 0.05 ms or more in {seconds:g} s of a loop reading the clock, longest "
             f"{longest:.3g} ms" + (f" ({histogram})" if histogram else ""))
    over = int(np.sum(gaps >= budget_ms))
    if over:
        return Finding("stalls", "breaks", found,
                       f"{over} pause(s) of the budget or more: the step they hit misses it whatever the code does "
                       "(the node then coalesces steps and recovers); other load on the core or the hypervisor: "
                       "isolate a core for the node, move other jobs off it, a machine that is not a shared VM",
                       why=f"{over} pause(s) of {budget_ms:g} ms or more in {seconds:g} s (longest {longest:.3g} ms): "
                           "each makes the step it hits miss the budget")
    if np.any(gaps >= budget_ms / 2):
        return Finding("stalls", "change", found,
                       "pauses of half the budget leave a slow step (0.5-0.9 ms on the larger mechanisms) no "
                       "margin: isolate a core for the node")
    return Finding("stalls", "ok", found)


def recording_bytes_per_second(config: NodeConfig) -> float:
    """About what the node's recording writes [B/s]: each sensor's readings at its rate, and with
    ``record_estimates`` one estimate per grid step (msgpack sizes of typical records, framed)."""
    total = sum(sensor.params.rate * _record_bytes("reading", {
        "sensor": sensor.params.name, "t": 0.0, "seq": 1 << 31,
        "value": [0.0] * sensor.dimension if sensor.dimension > 1 else 0.0}) for sensor in config.sensors.sensors)
    if config.node.log.record_estimates:
        n, m = config.mech.n, getattr(config.mech, "m", 0)
        forces = getattr(config.estimator, "unknown_forces", ())
        estimate = {"type": "estimate", "step": 1 << 31, "t": 0.0, "q": [0.0] * n, "qd": [0.0] * n,
                    "qdd": [0.0] * n, "lam": [0.0] * m, "forces": {name: 0.0 for name in forces},
                    "latency_ms": 0.0, "update_steps": 1, "flags": []}
        total += float(getattr(config.estimator, "rate", 0.0)) * _record_bytes("estimate", estimate)
    return total


def _record_bytes(kind: str, body: dict[str, Any]) -> int:
    return FRAME.size + len(msgpack.packb([kind, body]))


def disk(probes: Probes, config: NodeConfig) -> Finding:
    log = config.node.log
    path = log.resolved_path()
    if path is None:
        return Finding("disk", "ok", "recording off (node.log.path null)")
    rate = recording_bytes_per_second(config)
    free = probes.free_bytes(path.parent)
    hours = free / rate / 3600.0 if rate > 0 else float("inf")
    rotation = (f"files of {log.rotate_mb:g} MB" if log.rotate_mb else "") + \
               (f"{' or ' if log.rotate_mb else 'files of '}{log.rotate_minutes:g} min" if log.rotate_minutes else "")
    found = (f"{free / 1e9:.3g} GB free at {path.parent.absolute()}: {hours:.3g} h of recording at about {rate / 1e6:.2g} MB/s"
             + (f" ({rotation})" if rotation else " (one file, no rotation)"))
    if hours >= DISK_HOURS_WANTED:
        return Finding("disk", "ok", found)
    return Finding("disk", "change", found,
                   f"less than {DISK_HOURS_WANTED:g} h: rotation (node.log.rotate_mb / rotate_minutes) splits the "
                   "recording but deletes nothing; move or delete old files on a schedule, or record elsewhere "
                   "(configs/estimator/README.md, node)")


def sockets(config: NodeConfig) -> list[Finding]:
    """One finding per bound endpoint: loopback or local, or reachable from the network, and CURVE."""
    node, curve = config.node, config.node.curve is not None
    results = []
    for name in ("sub", "pub", "control", "plot"):
        endpoint = getattr(node, name)
        if endpoint is None:
            continue
        reach = "network" if beyond_loopback(endpoint) else "loopback" if endpoint.startswith("tcp://") else "local"
        found = f"{endpoint}: {reach}, CURVE {'on' if curve else 'off'}"
        if reach == "network" and not curve:
            results.append(Finding(f"socket {name}", "change", found,
                                   "anyone who reaches this host can send readings and commands (shutdown) or read "
                                   "the estimates: set node.curve (mbstate keys; configs/estimator/README.md, "
                                   "Access) or bind 127.0.0.1"))
        else:
            results.append(Finding(f"socket {name}", "ok", found))
    return results

