"""Soak test (issue 14): hours of sensor time through replay, minutes live through the node.

    python scripts/soak.py [--hours 1] [--live-minutes 10] [--window-minutes 10]
                           [--live-window-minutes 3] [--replay-wall-minutes M] [--dir DIR] [--json FILE]

The four-bar of the node's example (configs/estimator/fourbar.yaml: coupler IMU, crank encoder,
rocker load cell; the crank torque estimated), moving freely under gravity (``--forces motor=0``):

1. simulate: ``mbstate simulate configs/mechanisms/fourbar_crank.yaml --sensors
   configs/sensors/fourbar.yaml --forces motor=0 --t-end 3600·HOURS --out DIR/soak.mbslog`` in a
   child process: its peak resident set (the kernel's, os.wait4) and its wall time.
2. replay: a child process runs what ``mbstate replay LOG --config configs/estimator/fourbar.yaml
   --out DIR/est.csv`` runs (replay.replay.replay, deterministic, the estimates written as they
   come by estimator.cli.replay.EstimatesCsv) and, beside it, times every smoother update on the
   wall clock (the two clock reads of an update, as replay's MeasuredFixedClock does for its
   summary; each step gets its update's share, as the node's ``latency_ms``) and reads its own
   resident set once per second of sensor time. ``--replay-wall-minutes`` stops it early (a slow
   machine): what was replayed is reported as such.
3. live: ``mbstate run`` on a copy of that configuration (free loopback ports, the log in DIR) and
   the first ``--live-minutes`` of the simulated log published to it at real time
   (replay.publish.publish, as ``mbstate publish`` does): every ``--sample-s`` the node's resident
   set (/proc) and its status (control socket: counters, latency p99 over its last 10 000 steps);
   then ``shutdown``, and the node's log read back: every estimate's ``latency_ms``. A node short of
   CPU falls behind real time without losing readings (they wait in the sockets' queues): the lag
   of its newest stamp behind the publisher's clock is reported.

Accuracy (crank angle theta0 and motor torque RMSE against the log's truth, interpolated at the
estimates' times) and step latency p99 are kept per tenth of a window of sensor time and compared
over the first and the last window (``--window-minutes`` for replay, ``--live-window-minutes``
live); resident set likewise (mean of the samples in each window). Latency percentiles come from
log-spaced histograms (bins 1 % wide): constant memory in the measuring process too. Linux only
(/proc, os.wait4).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from itertools import islice, takewhile
from pathlib import Path
from typing import Any

import numpy as np
import yaml
import zmq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from estimator.cli.replay import EstimatesCsv  # noqa: E402
from estimator.logfile import LogStream  # noqa: E402
from estimator.node.config import load_node_config  # noqa: E402
from estimator.node.intake import online_estimator  # noqa: E402
from estimator.threads import one_blas_thread  # noqa: E402
from replay.node_control import NodeControl  # noqa: E402
from replay.pacing import stamp  # noqa: E402
from replay.publish import log_messages, publish  # noqa: E402
from replay.replay import replay  # noqa: E402
from sensors.base import wrap_angle  # noqa: E402

MECHANISM = REPO / "configs" / "mechanisms" / "fourbar_crank.yaml"
SENSORS = REPO / "configs" / "sensors" / "fourbar.yaml"
CONFIG = REPO / "configs" / "estimator" / "fourbar.yaml"
COORDINATE, ACTUATOR = "theta0", "motor"  # the crank angle and the torque on it
EDGES = np.geomspace(1e-6, 10.0, int(np.log(1e7) / np.log(1.01)) + 1)  # latency histogram bins [s]
CHUNK = 50_000  # rows per chunk of the accuracy's streamed comparison


class Series:
    """Per-bucket (a tenth of a window of sensor time) sums: squared crank and torque errors, a
    latency histogram and resident-set samples; ``window`` summarizes the first and the last window."""

    def __init__(self, bucket_s: float) -> None:
        self.bucket_s = bucket_s
        self.sq: dict[int, np.ndarray] = {}  # [crank² rad², torque² (N·m)², count]
        self.latency: dict[int, np.ndarray] = {}
        self.rss: dict[int, list[float]] = {}
        self.span: list[float] = []

    def _seen(self, t: float) -> int:
        self.span[:] = [min(self.span[0], t), max(self.span[1], t)] if self.span else [t, t]
        return int(t // self.bucket_s)

    def add_errors(self, t: np.ndarray, crank: np.ndarray, torque: np.ndarray) -> None:
        self._seen(float(t[0]))
        self._seen(float(t[-1]))
        buckets = (t // self.bucket_s).astype(int)
        for b in np.unique(buckets):
            mask = buckets == b
            self.sq[b] = self.sq.get(b, np.zeros(3)) + [np.sum(crank[mask] ** 2), np.sum(torque[mask] ** 2), mask.sum()]

    def add_latency(self, t: float, seconds: float) -> None:
        b = self._seen(t)
        if b not in self.latency:
            self.latency[b] = np.zeros(len(EDGES) + 1, np.int64)
        self.latency[b][np.searchsorted(EDGES, seconds)] += 1

    def add_rss(self, t: float, mb: float) -> None:
        self.rss.setdefault(self._seen(t), []).append(mb)

    def window(self, window_s: float, last: bool) -> dict[str, Any]:
        """RMSE, latency p50/p99 [ms] and mean resident set [MB] over the first (or last) ``window_s``
        of the span, by whole buckets."""
        count = max(1, round(window_s / self.bucket_s))
        start = int((self.span[1] if last else self.span[0]) // self.bucket_s)
        buckets = range(start - count + 1, start + 1) if last else range(start, start + count)
        sq = sum((self.sq[b] for b in buckets if b in self.sq), np.zeros(3))
        hist = sum((self.latency[b] for b in buckets if b in self.latency), np.zeros(len(EDGES) + 1, np.int64))
        rss = [mb for b in buckets for mb in self.rss.get(b, [])]
        return {"from_s": buckets[0] * self.bucket_s, "to_s": (buckets[-1] + 1) * self.bucket_s,
                "crank_rmse_rad": math.sqrt(sq[0] / sq[2]) if sq[2] else None,
                "torque_rmse_nm": math.sqrt(sq[1] / sq[2]) if sq[2] else None,
                "latency_p50_ms": percentile_ms(hist, 0.5), "latency_p99_ms": percentile_ms(hist, 0.99),
                "rss_mb": float(np.mean(rss)) if rss else None}

    def latency_json(self) -> dict[str, list[list[int]]]:
        return {str(b): [[int(i), int(n)] for i in np.flatnonzero(h) for n in [h[i]]] for b, h in self.latency.items()}

    def load_latency(self, data: dict[str, list[list[int]]]) -> None:
        for b, pairs in data.items():
            hist = np.zeros(len(EDGES) + 1, np.int64)
            for i, n in pairs:
                hist[i] = n
            self.latency[int(b)] = hist


def percentile_ms(hist: np.ndarray, q: float) -> float | None:
    """The q-quantile of a latency histogram (upper edge of its bin) [ms]."""
    total = hist.sum()
    if not total:
        return None
    index = int(np.searchsorted(np.cumsum(hist), q * total))
    return 1e3 * float(EDGES[min(index, len(EDGES) - 1)])


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident set of a process [MB] (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def waited(process: subprocess.Popen) -> float:
    """Wait for a child; its peak resident set [MB] (the kernel's maximum, os.wait4)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def mbstate(*arguments: str, **popen: Any) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "estimator", *arguments], env=child_env(), **popen)


def checked(process: subprocess.Popen, peak: float, what: str, output: Path) -> float:
    if process.returncode != 0:
        raise SystemExit(f"{what} failed (exit {process.returncode}); see {output}")
    return peak


# --- 1. simulate -----------------------------------------------------------------------------------

def simulate(log: Path, seconds: float, directory: Path) -> dict[str, Any]:
    """Part 1 of the module docstring: ``mbstate simulate`` in a child process; its figures."""
    output = directory / "simulate.out"
    started = time.monotonic()
    with open(output, "w") as out:
        process = mbstate("simulate", str(MECHANISM), "--sensors", str(SENSORS), "--forces", f"{ACTUATOR}=0",
                          "--t-end", f"{seconds:g}", "--out", str(log), stdout=out, stderr=subprocess.STDOUT)
        peak = checked(process, waited(process), "simulate", output)
    return {"sensor_s": seconds, "wall_s": time.monotonic() - started, "peak_rss_mb": peak,
            "log_mb": log.stat().st_size / 1e6}


# --- 2. replay (the child) -------------------------------------------------------------------------

class Stopped(Exception):
    """The replay's wall-time limit was reached."""


class UpdateTimer:
    """The estimator's clock, wrapped: returns what ``clock`` returns (a replay's fixed clock: the
    estimates do not change) and measures the wall time between the two reads of every update."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock, self.reads, self.started, self.pending = clock, 0, 0.0, 0.0

    def __call__(self) -> float:
        now = time.perf_counter()
        if self.reads % 2:
            self.pending += now - self.started
        self.started, self.reads = now, self.reads + 1
        return self.clock()

    def take(self) -> float:
        """The update time measured since the last ``take`` [s]."""
        pending, self.pending = self.pending, 0.0
        return pending


def replay_child(log: str, out: str, result: str, bucket_s: float, wall_limit_s: float | None) -> None:
    """The replay as ``mbstate replay`` runs it, timed and sampled; its figures to the JSON file ``result``."""
    one_blas_thread()
    config = load_node_config(CONFIG)
    csv = EstimatesCsv(out, config.mech)
    series, made = Series(bucket_s), {}
    started = time.monotonic()
    next_sample = [0.0]

    def factory(config: Any, clock: Callable[[], float]) -> Any:
        made["timer"] = UpdateTimer(clock)
        made["estimator"] = online_estimator(config, made["timer"])
        return made["estimator"]

    def sink(estimates: list[Any]) -> None:
        if not estimates:
            return
        share = made["timer"].take() / len(estimates)
        for estimate in estimates:
            series.add_latency(estimate.t, share)
        if estimates[-1].t >= next_sample[0]:
            series.add_rss(estimates[-1].t, rss_mb())
            next_sample[0] = math.floor(estimates[-1].t) + 1.0
        csv(estimates)
        if wall_limit_s is not None and time.monotonic() - started > wall_limit_s:
            raise Stopped

    stopped = False
    try:
        replay(log, config, estimator_factory=factory, sink=sink)
    except Stopped:
        stopped = True
    csv.finish()
    wall = time.monotonic() - started
    Path(result).write_text(json.dumps({
        "wall_s": wall, "span": series.span, "stopped": stopped, "estimator": dict(made["estimator"].counters),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss": {str(b): v for b, v in series.rss.items()}, "latency": series.latency_json()}))


def run_replay(log: Path, directory: Path, bucket_s: float, wall_limit_s: float | None) -> tuple[dict, Series]:
    """Part 2 of the module docstring, in a child process (replay_child); its figures and series."""
    output, result = directory / "replay.out", directory / "replay.json"
    command = [sys.executable, __file__, "--replay-child", str(log), str(directory / "est.csv"), str(result),
               str(bucket_s), str(wall_limit_s or 0)]
    with open(output, "w") as out:
        process = subprocess.Popen(command, env=child_env(), stdout=out, stderr=subprocess.STDOUT)
        peak = checked(process, waited(process), "replay", output)
    data = json.loads(result.read_text())
    series = Series(bucket_s)
    series.span = data["span"]
    series.rss = {int(b): v for b, v in data["rss"].items()}
    series.load_latency(data["latency"])
    sensor_s = data["span"][1] - data["span"][0]
    summary = {"sensor_s": sensor_s, "wall_s": data["wall_s"], "throughput": sensor_s / data["wall_s"],
               "stopped_early": data["stopped"], "peak_rss_mb": peak, "steps": int(sum(h.sum() for h in
                                                                                     series.latency.values())),
               "smoother_failures": int(data["estimator"].get("solver_recoveries", 0)),
               "estimator": data["estimator"]}
    return summary, series


# --- accuracy: estimates against the truth, streamed ----------------------------------------------

def truth_chunks(log: Path, coordinate: int, actuator: int) -> Iterator[np.ndarray]:
    """Rows (t, crank angle, torque) of the log's truth records, CHUNK at a time."""
    rows = ([body["t"], body["q"][coordinate], body["f"][actuator]] for kind, body in LogStream(log)
            if kind == "truth")
    yield from chunked(rows)


def csv_chunks(path: Path, coordinate: str, force: str) -> Iterator[np.ndarray]:
    """Rows (t, crank angle, torque) of an estimates CSV (the time-series convention), CHUNK at a time."""
    with open(path) as stream:
        header = stream.readline().strip().split(",")
        columns = [header.index("t"), header.index(f"q.{coordinate}"), header.index(f"Q.{coordinate}")]
        while lines := list(islice(stream, CHUNK)):
            yield np.loadtxt(lines, delimiter=",", usecols=columns, ndmin=2)


def estimate_records(log: Path, coordinate: int, force: str, series: Series) -> Iterator[np.ndarray]:
    """Rows (t, crank angle, torque) of a node log's estimate records, CHUNK at a time; each record's
    ``latency_ms`` goes to ``series``."""
    def rows() -> Iterator[list[float]]:
        for kind, body in LogStream(log):
            if kind == "estimate":
                series.add_latency(body["t"], 1e-3 * body["latency_ms"])
                yield [body["t"], body["q"][coordinate], body["forces"].get(force, math.nan)]
    yield from chunked(rows())


def chunked(rows: Iterable[list[float]]) -> Iterator[np.ndarray]:
    iterator = iter(rows)
    while block := list(islice(iterator, CHUNK)):
        yield np.array(block, float)


def add_errors(series: Series, estimates: Iterable[np.ndarray], truths: Iterator[np.ndarray]) -> None:
    """The estimates' crank angle (wrapped) and torque errors against the truth interpolated at their
    times, into ``series`` (estimates outside the truth's span are left out)."""
    buffer = np.empty((0, 3))
    for chunk in estimates:
        while len(buffer) == 0 or buffer[-1, 0] < chunk[-1, 0]:
            more = next(truths, None)
            if more is None:
                break
            buffer = np.vstack([buffer, more])
        inside = chunk[(chunk[:, 0] >= buffer[0, 0]) & (chunk[:, 0] <= buffer[-1, 0])] if len(buffer) else chunk[:0]
        if len(inside):
            t = inside[:, 0]
            series.add_errors(t, wrap_angle(inside[:, 1] - np.interp(t, buffer[:, 0], buffer[:, 1])),
                              inside[:, 2] - np.interp(t, buffer[:, 0], buffer[:, 2]))
        buffer = buffer[max(int(np.searchsorted(buffer[:, 0], chunk[-1, 0])) - 1, 0):]


# --- 3. live ---------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def live_config(directory: Path) -> Path:
    """A copy of CONFIG with absolute model paths, free loopback ports and the log in ``directory``."""
    data = yaml.safe_load(CONFIG.read_text())
    data["mechanism"], data["sensors"] = str(MECHANISM), str(SENSORS)
    node = data.setdefault("node", {})
    for key in ("sub", "pub", "control"):
        node[key] = f"tcp://127.0.0.1:{free_port()}"
    node.setdefault("log", {})["path"] = str(directory / "node.mbslog")
    path = directory / "node.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_live(log: Path, seconds: float, directory: Path, sample_s: float, bucket_s: float) -> tuple[dict, Series]:
    """Part 3 of the module docstring: the node fed the log's first ``seconds``; its figures and series."""
    config_path = live_config(directory)
    node_config = yaml.safe_load(config_path.read_text())["node"]
    output = directory / "node.out"
    series = Series(bucket_s)
    samples: list[dict[str, Any]] = []
    with open(output, "w") as out:
        process = mbstate("run", "--config", str(config_path), "--quiet", stdout=out, stderr=subprocess.STDOUT)
        context = zmq.Context()
        control = NodeControl(context, node_config["control"], wait_s=2.0)
        try:
            deadline = time.monotonic() + 180.0
            while control.request("status") is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the node did not start; see {output}")
            messages = takewhile(lambda m: (stamp(m) or 0.0) <= seconds, log_messages(log))
            sent: list[int] = []
            publisher = threading.Thread(target=lambda: sent.append(publish(messages, node_config["sub"], wait_s=30.0)))
            started = time.monotonic()
            publisher.start()
            while publisher.is_alive():
                publisher.join(sample_s)
                samples.append(_sample(process.pid, control, started))
                if samples[-1]["t"] is not None and samples[-1]["rss_mb"] is not None:
                    series.add_rss(samples[-1]["t"], samples[-1]["rss_mb"])
            if not sent:
                raise SystemExit("the publisher failed")
            published_s = time.monotonic() - started
            control.wait_for_intake(sent[0], idle_s=10.0)  # a message lost upstream would not come
            drained_s = time.monotonic() - started
            final = control.request("status")
            control.request("shutdown")
        finally:
            context.destroy(linger=0)
        peak = checked(process, waited(process), "the node", output)
    meta = LogStream(log).header
    coordinate = meta["coordinates"].index(COORDINATE)
    add_errors(series, estimate_records(directory / "node.mbslog", coordinate, ACTUATOR, series),
               truth_chunks(log, coordinate, meta["actuators"].index(ACTUATOR)))
    assert final is not None
    lag = [sample["wall_s"] - sample["t"] for sample in samples if sample["t"] is not None]
    summary = {"sensor_s": seconds, "published": sent[0], "published_s": published_s, "drained_s": drained_s,
               "max_lag_s": max(lag, default=None),
               "peak_rss_mb": peak, "smoother_failures": int(final["estimator"].get("solver_recoveries", 0)),
               "counters": {key: final[key] for key in ("received", "accepted", "late", "dropped", "malformed",
                                                         "steps", "overruns", "recoveries")},
               "status_latency_ms": final["latency_ms"], "samples": samples}
    return summary, series


def _sample(pid: int, control: NodeControl, started: float) -> dict[str, Any]:
    status = control.request("status") or {}
    return {"wall_s": time.monotonic() - started, "t": status.get("t"), "rss_mb": rss_mb(pid),
            "p99_ms": status.get("latency_ms", {}).get("p99"), "overruns": status.get("overruns"),
            "late": status.get("late"), "dropped": status.get("dropped"), "recoveries": status.get("recoveries")}


# --- report ----------------------------------------------------------------------------------------

def compared(series: Series, window_s: float) -> dict[str, Any]:
    first, last = series.window(window_s, last=False), series.window(window_s, last=True)
    ratio = {key: last[key] / first[key] for key in first if not key.endswith("_s")
             and first[key] and last[key] is not None}
    return {"first": first, "last": last, "last_over_first": ratio}


def table(name: str, comparison: dict[str, Any]) -> list[str]:
    first, last, ratio = comparison["first"], comparison["last"], comparison["last_over_first"]
    lines = [f"  {name}: first [{first['from_s']:g}, {first['to_s']:g}) s vs last [{last['from_s']:g}, "
             f"{last['to_s']:g}) s of sensor time"]
    for key, unit in (("crank_rmse_rad", "rad"), ("torque_rmse_nm", "N·m"), ("latency_p50_ms", "ms"),
                      ("latency_p99_ms", "ms"), ("rss_mb", "MB")):
        value = ratio.get(key)
        lines.append(f"    {key:16s} {_g(first[key]):>10s} {_g(last[key]):>10s} {unit:4s} "
                     f"last/first {'—' if value is None else f'{value:.3f}'}")
    return lines


def _g(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--replay-child":
        log, out, result, bucket, limit = sys.argv[2:7]
        return replay_child(log, out, result, float(bucket), float(limit) or None)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0, help="sensor time simulated and replayed [h] (default 1)")
    parser.add_argument("--replay-wall-minutes", type=float,
                        help="stop the replay after this wall time [min] (a slow machine; default: the whole log)")
    parser.add_argument("--live-minutes", type=float, default=10.0, help="live through the node [min] (default 10)")
    parser.add_argument("--window-minutes", type=float, default=10.0,
                        help="replay: first vs last window of sensor time [min] (default 10)")
    parser.add_argument("--live-window-minutes", type=float, default=3.0,
                        help="live: first vs last window [min] (default 3)")
    parser.add_argument("--sample-s", type=float, default=5.0, help="live: node sampled every [s] (default 5)")
    parser.add_argument("--dir", type=Path, help="working folder (default: a new one under /tmp); its logs and "
                                                 "CSV are kept")
    parser.add_argument("--skip", choices=("replay", "live"), action="append", default=[], help="leave a part out")
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="soak-"))
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "soak.mbslog"
    report: dict[str, Any] = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                              "machine": f"{platform.machine()} {os.cpu_count()} cores, load average at start "
                                         f"{os.getloadavg()[0]:.1f}", "dir": str(directory)}
    print(f"soak: {report['date']}, {report['machine']}, in {directory}", flush=True)
    report["simulate"] = simulate(log, 3600.0 * args.hours, directory)
    s = report["simulate"]
    print(f"simulate: {s['sensor_s']:g} s of sensor time, {s['log_mb']:.1f} MB, {s['wall_s']:.0f} s wall, "
          f"peak RSS {s['peak_rss_mb']:.0f} MB", flush=True)
    lines = []
    if "replay" not in args.skip:
        window_s = 60.0 * args.window_minutes
        summary, series = run_replay(log, directory, window_s / 10, None if args.replay_wall_minutes is None
                                     else 60.0 * args.replay_wall_minutes)
        meta = LogStream(log).header
        coordinate = meta["coordinates"].index(COORDINATE)
        add_errors(series, csv_chunks(directory / "est.csv", COORDINATE, ACTUATOR),
                   truth_chunks(log, coordinate, meta["actuators"].index(ACTUATOR)))
        summary["windows"] = compared(series, window_s)
        report["replay"] = summary
        lines += [f"replay: {summary['sensor_s']:.0f} s of sensor time"
                  f"{' (stopped at the wall-time limit)' * summary['stopped_early']} in {summary['wall_s']:.0f} s "
                  f"wall: {summary['throughput']:.3f} sensor s per wall s; peak RSS {summary['peak_rss_mb']:.0f} MB; "
                  f"{summary['steps']} steps; smoother failures {summary['smoother_failures']}",
                  *table("replay", summary["windows"])]
        print("\n".join(lines), flush=True)
    if "live" not in args.skip:
        live_window_s = 60.0 * args.live_window_minutes
        summary, series = run_live(log, min(60.0 * args.live_minutes, 3600.0 * args.hours), directory,
                                   args.sample_s, live_window_s / 10)
        summary["windows"] = compared(series, live_window_s)
        report["live"] = summary
        live = [f"live: {summary['sensor_s']:g} s, {summary['published']} readings published at real time in "
                f"{summary['published_s']:.0f} s wall, all received by {summary['drained_s']:.0f} s (newest stamp "
                f"behind the publisher's clock by up to {summary['max_lag_s'] or 0:.0f} s); peak RSS "
                f"{summary['peak_rss_mb']:.0f} MB; smoother failures {summary['smoother_failures']}; "
                f"{', '.join(f'{k} {v}' for k, v in summary['counters'].items())}",
                *table("live", summary["windows"])]
        print("\n".join(live), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
