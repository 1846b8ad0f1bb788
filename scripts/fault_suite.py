"""The node's long fault cases, end to end: a real node process (``mbstate run``) on the four-bar
(configs/estimator/fourbar.yaml, endpoints on ipc:// in a temporary directory, recording a log), fed
simulated readings (replay.demo's crank motion, configs/sensors/fourbar.yaml: 2,600 messages per
second of sensor time) over ZeroMQ by this process (one PUB with ZeroMQ's default send queue of
1000 messages, as a sensor has), with one fault in the middle:

    burst   the input at ``--speed`` (10) times its rate for ``--burst-s`` (10) s of wall time,
    outage  no message for ``--outage-s`` (10) s while the sensors' clocks run on,
    jump    every stamp ``--jump-s`` (1000) s later from then on (a clock jump),

``--before-s`` (5) s of sensor time at the rated pace before the fault and ``--after-s`` (5) s after it.
Then the node is asked for its status and shut down, and the log is read. One table row per case:

    sent        messages this process sent (a PUB that cannot keep up drops some: they count as sent)
    received    taken off the socket by the node; accepted; dropped and malformed by reason; gaps
                (sequence numbers the node never saw: lost by the queues)
    log         reading records in the node's log
    resyncs, reinit   the node's resyncs and the estimator's re-initializations
    resume s    sensor time from the first reading after the fault to the first estimate at or after
                it (the bar: within 1 s)
    catch-up s  wall time from sending that reading to receiving that estimate (the backlog's delay)
    states      the status states seen, in order
    survived    the node exited 0 after ``shutdown``, estimates resumed within 1 s and reached the
                last second of input

    PYTHONPATH=. python scripts/fault_suite.py [--cases burst outage jump] [--burst-s S] [--outage-s S] ...

The readings repeat the crank motion's period (π s) as often as needed (stamps shifted by whole
periods; the sequence numbers run on). Timing depends on the machine's load: quote the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import numpy as np
import yaml
import zmq

from estimator.mechanism_file import load_mechanism
from replay.demo import crank_truth
from replay.log import read_log
from replay.publish import connect_publisher
from sensors.config import load_sensors
from sensors.virtual import simulate_readings

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "estimator" / "fourbar.yaml"
PERIOD = np.pi  # [s] of the crank motion θ = 1.2 (1 − cos 2t)
RESUME_BAR_S = 1.0
SENSOR_HWM = 1000  # the sensors' send queue [messages]: ZeroMQ's default
SEED = 1


def period_readings() -> list[dict]:
    """One period of simulated readings (message maps), stamps in [0, π)."""
    node = yaml.safe_load(CONFIG.read_text())
    mech = load_mechanism((CONFIG.parent / node["mechanism"]).resolve())
    sensors = load_sensors((CONFIG.parent / node["sensors"]).resolve(), mech)
    truth = crank_truth(mech, PERIOD + 0.01)
    return [r.to_map() for r in simulate_readings(sensors.sensors, truth, SEED) if 0.0 <= r.t < PERIOD]


def stream(period: list[dict]) -> Iterator[dict]:
    """The period's readings repeated without end, stamps shifted by whole periods, seq numbers running on."""
    repeat = 0
    counts: dict[str, int] = {}
    while True:
        for message in period:
            seq = counts.get(message["sensor"], 0)
            counts[message["sensor"]] = seq + 1
            yield {**message, "t": message["t"] + repeat * PERIOD, "seq": seq}
        repeat += 1


@dataclass
class Schedule:
    """The messages of one case with the wall time [s from the start] at which each is sent."""

    messages: list[dict] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    resume_t: float = 0.0  # stamp of the first message after the fault


def schedule(case: str, args: argparse.Namespace, period: list[dict]) -> Schedule:
    """Rated pace (wall = sensor time) before and after the fault; the fault in between (module docstring)."""
    plan, source = Schedule(), stream(period)
    message = next(source)
    t0 = message["t"]

    def take(until: float, wall_of, shift: float = 0.0) -> None:
        nonlocal message
        while message["t"] - t0 < until:
            plan.messages.append({**message, "t": message["t"] + shift})
            plan.wall.append(wall_of(message["t"] - t0))
            message = next(source)

    take(args.before_s, lambda s: s)
    before = args.before_s
    if case == "burst":
        span = args.speed * args.burst_s
        take(before + span, lambda s: before + (s - before) / args.speed)
        offset = before + span - (before + args.burst_s)  # sensor time gained over the wall clock
    elif case == "outage":
        while message["t"] - t0 < before + args.outage_s:
            message = next(source)
        offset = 0.0
    else:
        offset = 0.0
    shift = args.jump_s if case == "jump" else 0.0
    plan.resume_t = message["t"] + shift
    end = before + (args.burst_s * args.speed if case == "burst" else args.outage_s if case == "outage" else 0.0)
    take(end + args.after_s, lambda s: s - offset, shift)
    return plan


def node_config(directory: Path, queue: int | None) -> Path:
    """configs/estimator/fourbar.yaml with its files made absolute, ipc:// endpoints in ``directory``, a log
    and, if given, another input ``queue``."""
    node = yaml.safe_load(CONFIG.read_text())
    if queue is not None:
        node["node"]["queue"] = queue
    for key in ("mechanism", "sensors"):
        node[key] = str((CONFIG.parent / node[key]).resolve())
    node["node"].update({name: f"ipc://{directory / name}" for name in ("sub", "pub", "control")})
    node["node"]["log"] = {**node["node"].get("log", {}), "path": str(directory / "run.log")}
    path = directory / "node.yaml"
    path.write_text(yaml.safe_dump(node), encoding="utf-8")
    return path


class Listener(threading.Thread):
    """Collects the node's estimates (t, flags) and the states of its status messages."""

    def __init__(self, context: zmq.Context, endpoint: str) -> None:
        super().__init__(daemon=True)
        self.socket = context.socket(zmq.SUB)
        self.socket.subscribe(b"")
        self.socket.setsockopt(zmq.RCVHWM, 0)
        self.socket.connect(endpoint)
        self.estimates: list[tuple[float, tuple[str, ...], float]] = []  # t, flags, wall time received
        self.states: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.socket.poll(100):
                continue
            message = msgpack.unpackb(self.socket.recv(), strict_map_key=False)
            if message.get("type") == "estimate":
                self.estimates.append((message["t"], tuple(message["flags"]), time.monotonic()))
            elif message.get("type") == "status" and (not self.states or self.states[-1] != message["state"]):
                self.states.append(message["state"])


def request(context: zmq.Context, endpoint: str, command: str, timeout_s: float = 30.0) -> dict:
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    socket.send(msgpack.packb({"command": command}))
    try:
        if not socket.poll(int(1000 * timeout_s)):
            raise RuntimeError(f"no reply to {command} within {timeout_s:g} s")
        return msgpack.unpackb(socket.recv(), strict_map_key=False)
    finally:
        socket.close()


def send(publisher: zmq.Socket, plan: Schedule) -> float:
    """Each message at its wall time (in batches of those due); the wall time the first message after the
    fault went out."""
    start, resumed = time.monotonic(), None
    for message, due in zip(plan.messages, plan.wall):
        delay = start + due - time.monotonic()
        if delay > 0.002:
            time.sleep(delay)
        publisher.send(msgpack.packb(message))
        if resumed is None and message["t"] >= plan.resume_t:
            resumed = time.monotonic()
    return resumed


def settle(context: zmq.Context, endpoint: str, quiet_s: float = 2.0, limit_s: float = 120.0) -> dict:
    """The node's status once its received count has stopped changing for ``quiet_s``."""
    deadline, last, since = time.monotonic() + limit_s, None, time.monotonic()
    while True:
        status = request(context, endpoint, "status")
        if status["received"] != last:
            last, since = status["received"], time.monotonic()
        if time.monotonic() - since >= quiet_s or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def run_case(case: str, args: argparse.Namespace, period: list[dict]) -> dict:
    plan = schedule(case, args, period)
    with tempfile.TemporaryDirectory(prefix="mbstate-fault-") as name:
        directory = Path(name)
        config = node_config(directory, args.queue)
        output = (directory / "node.out").open("w")
        process = subprocess.Popen([sys.executable, "-m", "estimator", "run", "--config", str(config), "--quiet"],
                                   cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
        context = zmq.Context()
        context.setsockopt(zmq.LINGER, 0)
        try:
            listener = Listener(context, f"ipc://{directory / 'pub'}")
            listener.start()
            publisher = connect_publisher(context, f"ipc://{directory / 'sub'}", wait_s=120.0, hwm=SENSOR_HWM)
            resumed = send(publisher, plan)
            status = settle(context, f"ipc://{directory / 'control'}")
            request(context, f"ipc://{directory / 'control'}", "shutdown")
            process.wait(timeout=60)
            output.close()
            printed = (directory / "node.out").read_text().strip().splitlines()
            time.sleep(0.3)
            listener.stop.set()
            listener.join()
            log = read_log(directory / "run.log")
        finally:
            if process.poll() is None:
                process.kill()
            context.destroy()
    after = [(t, wall) for t, _, wall in listener.estimates if t >= plan.resume_t]
    resume = after[0][0] - plan.resume_t if after else float("inf")
    catch_up = after[0][1] - resumed if after else float("inf")
    last_t = plan.messages[-1]["t"]
    survived = (process.returncode == 0 and resume <= RESUME_BAR_S and bool(after)
                and after[-1][0] >= last_t - RESUME_BAR_S)
    estimator = status["estimator"]
    return {"case": case, "sent": len(plan.messages), "received": status["received"], "accepted": status["accepted"],
            "dropped": status["dropped_by_reason"], "malformed": status["malformed_by_reason"],
            "late": status["late"], "gaps": status["gaps"], "log": len(log.readings),
            "resyncs": status["resyncs"], "reinit": estimator.get("reinitializations", 0),
            "outliers": estimator.get("outlier", 0), "estimates": len(listener.estimates),
            "flagged": sum(1 for _, flags, _ in listener.estimates if {"resync", "reinitialized"} & set(flags)),
            "resume_s": resume, "catch_up_s": catch_up, "states": listener.states, "exit": process.returncode, "survived": survived,
            "output": printed[-3:]}


def table(rows: list[dict], args: argparse.Namespace) -> str:
    lines = ["| case | sent | received | accepted | dropped by reason | gaps | late | in the log | resyncs | "
             "reinit. | resume [s] | catch-up [s] | states | survived |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    labels = {"burst": f"burst {args.speed:g}x for {args.burst_s:g} s", "outage": f"outage {args.outage_s:g} s",
              "jump": f"clock jump {args.jump_s:+g} s"}
    for row in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["dropped"].items())) or "—"
        lines.append(f"| {labels[row['case']]} | {row['sent']} | {row['received']} | {row['accepted']} | {reasons} | "
                     f"{row['gaps']} | {row['late']} | {row['log']} | {row['resyncs']} | {row['reinit']} | "
                     f"{row['resume_s']:.3f} | {row['catch_up_s']:.2f} | {' → '.join(row['states'])} | "
                     f"{'yes' if row['survived'] else 'NO'} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=("burst", "outage", "jump"), default=["burst", "outage", "jump"])
    parser.add_argument("--speed", type=float, default=10.0, help="burst: times the rated input")
    parser.add_argument("--burst-s", type=float, default=10.0, help="burst: wall seconds")
    parser.add_argument("--outage-s", type=float, default=10.0, help="outage: seconds of silence")
    parser.add_argument("--jump-s", type=float, default=1000.0, help="clock jump [s]")
    parser.add_argument("--before-s", type=float, default=5.0, help="rated input before the fault [s]")
    parser.add_argument("--after-s", type=float, default=5.0, help="rated input after the fault [s]")
    parser.add_argument("--queue", type=int, help="the node's input queue [messages] (default: the config's)")
    args = parser.parse_args()
    period = period_readings()
    rows = []
    for case in args.cases:
        row = run_case(case, args, period)
        print(f"{case}: {row}", file=sys.stderr, flush=True)
        rows.append(row)
    print(table(rows, args))
    return 0 if all(row["survived"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
