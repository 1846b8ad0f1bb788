"""The node's long fault cases, end to end: a real node process (``mbstate run``) on the four-bar
(configs/estimator/fourbar.yaml, endpoints on ipc:// in a temporary directory, recording a log), fed
simulated readings (the demo's crank motion, estimator.demo.cases, configs/sensors/fourbar.yaml: 2,600
messages per second of sensor time), or with ``--mechanism panda`` on the Panda arm
(configs/estimator/panda.yaml: the demo's arm motion, seven encoders, 7,000 messages per second) over
ZeroMQ by this process (one PUB with ZeroMQ's default send queue of
1000 messages, as a sensor has), with one fault in the middle:

    burst   the input at ``--speed`` (10) times its rate for ``--burst-s`` (10) s of wall time,
    flood   the same burst from a PUB whose send queue never drops (SNDHWM 0): nothing is lost, and
            the node, behind, skips the backlog in estimation (node.max_lag_s),
    outage  no message for ``--outage-s`` (10) s while the sensors' clocks run on,
    jump    every stamp ``--jump-s`` (1000) s later from then on (a clock jump),

``--before-s`` (5) s of sensor time at the rated pace before the fault and ``--after-s`` (5) s after it.
Then the node is asked for its status and shut down, and the log is read. Two cases kill the node
instead, with the log's flush settings of the configuration (``node.log``):

    kill9       ``--before-s`` of rated input, then the status until ``received`` has not changed for
                ``--idle-s`` (3) s (an idle stream: longer than ``flush_seconds``), SIGKILL. The bar:
                every message received is in the log;
    kill9-load  the status and SIGKILL ``--before-s`` into rated input that runs on: the bar,
                at most ``flush_records`` lost (received by the status, just before, less those in
                the log: messages taken between the two are not counted);

each followed by ``mbstate log info`` and ``mbstate replay`` of the crashed log (a warning, exit 0).
And one damages a log:

    corrupt     a log recorded over ``--before-s`` of rated input (node shut down), then ``--flips`` (50)
                copies, each with one bit flipped at a seeded random offset, read by ``mbstate log
                info`` (the first ``--replays`` (3) by ``mbstate replay`` too): detected (exit 2, one
                line naming a byte offset; whether it is the damaged frame's is counted), an error
                without an offset, accepted, or a traceback. The bar: 49 of 50 detected, no
                traceback. Then cuts: ``--hole-bytes`` (4096) cut out of the middle and the first file
                of a rotated copy (estimator.logfile's writer) cut in half must be errors; the last 5 bytes
                cut (a crash's cut) a warning, exit 0, and replay.

One table row per case:

    sent        messages this process sent (a PUB that cannot keep up drops some: they count as sent)
    received    taken off the socket by the node; accepted; dropped and malformed by reason; gaps
                (sequence numbers the node never saw: lost by the queues)
    log         reading records in the node's log
    resyncs, reinit   the node's resyncs and the estimator's re-initializations
    resume s    sensor time from the first reading after the fault to the first estimate at or after
                it (the bar: within 1 s; flood: none, the node skips past it to the newest readings)
    catch-up s  wall time from sending that reading to receiving that estimate (the backlog's delay)
    current s   wall time from the fault's end (the first reading after it sent) until every estimate
                received is within 1 s of sensor time of the stream (the stamp last sent by then;
                the bar for flood: within 2 s)
    skipped     readings the node recorded but did not estimate, and the rate it took them at while it
                skipped [readings/s]: how fast it catches up (receive, check, record)
    states      the status states seen, in order
    log after   kill and corrupt cases: what was lost and what ``mbstate`` made of the log
    survived    the node exited 0 after ``shutdown``, estimates resumed within 1 s (flood: were current
                within 2 s) and reached the last second of input; for kill and corrupt cases, their bars

    PYTHONPATH=. python scripts/fault_suite.py [--mechanism fourbar|panda] [--cases burst flood outage jump kill9
                                               kill9-load corrupt] ...

The readings repeat the crank motion's period (π s) as often as needed (stamps shifted by whole
periods; the sequence numbers run on). Timing depends on the machine's load: quote the machine.
"""

from __future__ import annotations

import argparse
import bisect
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import numpy as np
import yaml
import zmq

from estimator.demo.cases import CASES as DEMO_CASES
from estimator.demo.cases import DemoCase
from estimator.logfile import FRAME, MAGIC, LogStream, LogWriter, read_log
from estimator.model_protocol import load_model
from estimator.node.config import LogParams
from estimator.wire import pack
from replay.publish import connect_publisher
from sensors.config import load_sensors
from sensors.virtual import simulate_readings

REPO = Path(__file__).resolve().parents[1]
RESUME_BAR_S = 1.0
CURRENT_BAR_S = 2.0  # flood: the estimates within RESUME_BAR_S of the stream this long after the burst [s]
SENSOR_HWM = 1000  # the sensors' send queue [messages]: ZeroMQ's default
UNBOUNDED = 0  # flood: a send queue that never drops
SEED = 1


@dataclass(frozen=True)
class Machine:
    """What the node runs (``--mechanism``): its node file and the demo case whose motion feeds it."""

    config: Path
    case: DemoCase


MACHINES = {"fourbar": Machine(REPO / "configs" / "estimator" / "fourbar.yaml", DEMO_CASES["fourbar"]),
            "panda": Machine(REPO / "configs" / "estimator" / "panda.yaml", DEMO_CASES["panda"])}
machine = MACHINES["fourbar"]  # the one of --mechanism: main sets it before any case runs


def period_readings() -> list[dict]:
    """One period of the machine's motion as simulated readings (message maps), stamps in [0, period)."""
    node = yaml.safe_load(machine.config.read_text())
    mech = load_model((machine.config.parent / node["mechanism"]).resolve())
    sensors = load_sensors((machine.config.parent / node["sensors"]).resolve(), mech)
    period = machine.case.period
    truth = machine.case.truth(mech, period + 0.01)
    return [r.to_map() for r in simulate_readings(sensors.sensors, truth, SEED) if 0.0 <= r.t < period]


def stream(period: list[dict]) -> Iterator[dict]:
    """The period's readings repeated without end, stamps shifted by whole periods, seq numbers running on."""
    repeat = 0
    counts: dict[str, int] = {}
    while True:
        for message in period:
            seq = counts.get(message["sensor"], 0)
            counts[message["sensor"]] = seq + 1
            yield {**message, "t": message["t"] + repeat * machine.case.period, "seq": seq}
        repeat += 1


@dataclass
class Schedule:
    """The messages of one case with the wall time [s from the start] at which each is sent."""

    messages: list[dict] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    resume_t: float = 0.0  # stamp of the first message after the fault
    sent: int = 0  # messages sent so far
    sent_at: list[float] = field(default_factory=list)  # time.monotonic() of each message sent


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
    if case in ("burst", "flood"):
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
    end = before + (args.burst_s * args.speed if case in ("burst", "flood")
                    else args.outage_s if case == "outage" else 0.0)
    take(end + args.after_s, lambda s: s - offset, shift)
    return plan


def node_settings(args: argparse.Namespace) -> dict:
    """The node keys the options change: ``--queue``, ``--no-skip`` (``max_lag_s`` null)."""
    return {**({} if args.queue is None else {"queue": args.queue}), **({"max_lag_s": None} if args.no_skip else {})}


def node_config(directory: Path, settings: dict) -> Path:
    """The machine's node file with its files made absolute, ipc:// endpoints in ``directory``, a log
    and the node ``settings`` (node_settings)."""
    node = yaml.safe_load(machine.config.read_text())
    node.setdefault("node", {}).update(settings)
    for key in ("mechanism", "sensors"):
        node[key] = str((machine.config.parent / node[key]).resolve())
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
        self.last_status: dict = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.socket.poll(100):
                continue
            message = msgpack.unpackb(self.socket.recv(), strict_map_key=False)
            if message.get("type") == "estimate":
                self.estimates.append((message["t"], tuple(message["flags"]), time.monotonic()))
            elif message.get("type") == "status":
                self.last_status = message
                if not self.states or self.states[-1] != message["state"]:
                    self.states.append(message["state"])


def request(context: zmq.Context, endpoint: str, command: str, timeout_s: float = 30.0) -> dict:
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    socket.send(pack({"command": command}))
    try:
        if not socket.poll(int(1000 * timeout_s)):
            raise RuntimeError(f"no reply to {command} within {timeout_s:g} s")
        return msgpack.unpackb(socket.recv(), strict_map_key=False)
    finally:
        socket.close()


def send(publisher: zmq.Socket, plan: Schedule, stop: threading.Event | None = None) -> float | None:
    """Each message at its wall time (in batches of those due), until ``stop`` is set; the wall time the
    first message after the fault went out."""
    start, resumed = time.monotonic(), None
    for message, due in zip(plan.messages, plan.wall):
        if stop is not None and stop.is_set():
            break
        delay = start + due - time.monotonic()
        if delay > 0.002:
            time.sleep(delay)
        publisher.send(pack(message))
        plan.sent += 1
        plan.sent_at.append(time.monotonic())
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


@dataclass
class Node:
    """A node process recording ``log`` in ``directory``, its ZeroMQ context and a listener on its output."""

    directory: Path
    config: Path
    process: subprocess.Popen
    context: zmq.Context
    listener: Listener

    def endpoint(self, name: str) -> str:
        return f"ipc://{self.directory / name}"

    @property
    def log(self) -> Path:
        return self.directory / "run.log"

    def publisher(self, hwm: int = SENSOR_HWM) -> zmq.Socket:
        return connect_publisher(self.context, self.endpoint("sub"), wait_s=120.0, hwm=hwm)

    def request(self, command: str) -> dict:
        return request(self.context, self.endpoint("control"), command)

    def stop(self) -> list[str]:
        """Shut the node down (exit code in ``process.returncode``); its last lines of output."""
        self.request("shutdown")
        self.process.wait(timeout=60)
        time.sleep(0.3)
        self.listener.stop.set()
        self.listener.join()
        return (self.directory / "node.out").read_text().strip().splitlines()[-3:]


@contextmanager
def node(directory: Path, settings: dict) -> Iterator[Node]:
    """``mbstate run`` on the suite's configuration (``node_config``), killed if still running at the end."""
    config = node_config(directory, settings)
    with (directory / "node.out").open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "estimator", "run", "--config", str(config), "--quiet"],
                                   cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
        context = zmq.Context()
        context.setsockopt(zmq.LINGER, 0)
        try:
            listener = Listener(context, f"ipc://{directory / 'pub'}")
            listener.start()
            yield Node(directory, config, process, context, listener)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            listener.stop.set()
            listener.join()
            context.destroy()


def counts(status: dict) -> dict:
    """The status counters of a row."""
    return {"received": status["received"], "accepted": status["accepted"], "dropped": status["dropped_by_reason"],
            "skipped": status["skipped_by_reason"], "skipping_s": status["skipping_s"],
            "malformed": status["malformed_by_reason"], "late": status["late"], "gaps": status["gaps"],
            "resyncs": status["resyncs"], "reinit": status["estimator"].get("reinitializations", 0),
            "outliers": status["estimator"].get("outlier", 0)}


def current_after(plan: Schedule, estimates: list[tuple[float, tuple[str, ...], float]], since: float) -> float:
    """Wall time from ``since`` until every estimate received is within RESUME_BAR_S of sensor time of the
    stream (the stamp of the last message sent by then) [s]; inf when the last one is not."""
    stamps = [message["t"] for message in plan.messages[:len(plan.sent_at)]]
    became = float("inf")
    for t, _, wall in estimates:
        if wall < since:
            continue
        if stamps[bisect.bisect_right(plan.sent_at, wall) - 1] - t > RESUME_BAR_S:
            became = float("inf")
        elif became == float("inf"):
            became = wall
    return became - since


def run_case(case: str, args: argparse.Namespace, period: list[dict]) -> dict:
    plan = schedule(case, args, period)
    with (tempfile.TemporaryDirectory(prefix="mbstate-fault-") as name,
          node(Path(name), node_settings(args)) as running):
        publisher = running.publisher(UNBOUNDED if case == "flood" else SENSOR_HWM)
        resumed = send(publisher, plan)
        status = settle(running.context, running.endpoint("control"))
        publisher.close()
        printed = running.stop()
        log = read_log(running.log)
    listener, process = running.listener, running.process
    after = [(t, wall) for t, _, wall in listener.estimates if t >= plan.resume_t]
    resume = after[0][0] - plan.resume_t if after else float("inf")
    catch_up = after[0][1] - resumed if after else float("inf")
    current = current_after(plan, listener.estimates, resumed) if resumed is not None else float("inf")
    last_t = plan.messages[-1]["t"]
    on_time = current <= CURRENT_BAR_S if case == "flood" else resume <= RESUME_BAR_S
    survived = process.returncode == 0 and on_time and bool(after) and after[-1][0] >= last_t - RESUME_BAR_S
    return {"case": case, "sent": plan.sent, **counts(status), "log": len(log.readings),
            "estimates": len(listener.estimates),
            "flagged": sum(1 for _, flags, _ in listener.estimates
                           if {"resync", "caught_up", "reinitialized"} & set(flags)),
            "resume_s": resume, "catch_up_s": catch_up, "current_s": current, "states": listener.states,
            "fault_sent_s": resumed - plan.sent_at[0] - args.before_s if resumed is not None else None,
            "exit": process.returncode, "survived": survived, "output": printed}


@dataclass
class Outcome:
    """What one ``mbstate`` command said: exit code, its ``error:`` lines, ``warning:`` lines, a traceback."""

    code: int
    errors: list[str]
    warnings: list[str]
    traceback: bool

    @property
    def offset(self) -> int | None:
        """The byte offset its one error line names (None: not exactly one line, or no offset)."""
        found = re.search(r"at byte (\d+)", self.errors[0]) if len(self.errors) == 1 else None
        return int(found.group(1)) if found else None

    @property
    def verdict(self) -> str:
        """``detected`` (exit 2, one error line naming an offset), ``no offset`` (exit 2 otherwise),
        ``warned`` / ``silent`` (exit 0 with / without a warning) or ``traceback`` (any other end)."""
        if self.traceback or self.code not in (0, 2):
            return "traceback"
        if self.code == 2:
            return "detected" if self.offset is not None else "no offset"
        return "warned" if self.warnings else "silent"


def mbstate(*arguments: str | Path) -> Outcome:
    """Run ``mbstate`` (this checkout's) and sort its output."""
    done = subprocess.run([sys.executable, "-m", "estimator", *map(str, arguments)], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    lines = (done.stdout + "\n" + done.stderr).splitlines()
    return Outcome(done.returncode, [line for line in done.stderr.splitlines() if ": error: " in line],
                   [line for line in lines if line.startswith("warning:") or ": warning:" in line],
                   "Traceback (most recent call last)" in done.stderr)


def log_settings() -> tuple[int, float]:
    """The node configuration's ``log.flush_records`` and ``log.flush_seconds``."""
    log = (yaml.safe_load(machine.config.read_text()).get("node") or {}).get("log", {})
    return log.get("flush_records", LogParams.flush_records), log.get("flush_seconds", LogParams.flush_seconds)


def rated(period: list[dict], seconds: float) -> Schedule:
    """``seconds`` of sensor time at the rated pace (no fault: ``resume_t`` after the last message)."""
    plan = Schedule(resume_t=float("inf"))
    for message in stream(period):
        t = message["t"] - period[0]["t"]
        if t >= seconds:
            return plan
        plan.messages.append(message)
        plan.wall.append(t)
    raise AssertionError("stream() does not end")


def run_kill(case: str, args: argparse.Namespace, period: list[dict]) -> dict:
    """``kill9``: ``--before-s`` of rated input, then the node's status until its received count has not
    changed for ``--idle-s`` (an idle stream, the backlog done), SIGKILL; ``kill9-load``: the
    status and SIGKILL after ``--before-s`` while the input runs on. Then the log against the status's
    received count, ``mbstate log info`` and ``mbstate replay`` of it."""
    flush_records, flush_seconds = log_settings()
    idle = case == "kill9"
    plan = rated(period, args.before_s + (0.0 if idle else args.after_s))
    with (tempfile.TemporaryDirectory(prefix="mbstate-fault-") as name,
          node(Path(name), node_settings(args)) as running):
        publisher, stop = running.publisher(), threading.Event()
        sender = threading.Thread(target=send, args=(publisher, plan, stop))
        sender.start()
        if idle:
            sender.join()
            status = settle(running.context, running.endpoint("control"), quiet_s=args.idle_s)
        else:
            time.sleep(args.before_s)
            status = running.request("status")
        replied = time.monotonic()
        os.kill(running.process.pid, signal.SIGKILL)
        killed = time.monotonic() - replied
        stop.set()
        sender.join()
        running.process.wait(timeout=60)
        log = read_log(running.log)
        info = mbstate("log", "info", running.log)
        replayed = mbstate("replay", running.log, "--config", running.config, "--out",
                           running.directory / "replayed.csv", "--quiet")
    lost = status["received"] - len(log.inputs)
    bar = 0 if idle else flush_records
    survived = (lost <= bar and info.verdict in ("warned", "silent") and info.code == 0
                and replayed.code == 0 and not replayed.traceback)
    return {"case": case, "sent": plan.sent, **counts(status), "log": len(log.readings), "lost": lost, "bar": bar,
            "flush": (flush_records, flush_seconds), "info": info, "replay": replayed,
            "estimates": len(running.listener.estimates), "states": running.listener.states,
            "exit": running.process.returncode, "survived": survived, "status_to_kill_s": killed}


def frame_starts(data: bytes) -> list[int]:
    """The byte offsets of the frames of a version-3 log (estimator.logfile)."""
    starts, pos = [], len(MAGIC)
    while pos + FRAME.size <= len(data):
        starts.append(pos)
        pos += FRAME.size + FRAME.unpack_from(data, pos)[0]
    return starts


def rotated(source: Path, target: Path, parts: int) -> list[Path]:
    """``source``'s records rewritten by LogWriter as a recording rotated into about ``parts`` files."""
    stream = LogStream(source)
    header = {k: v for k, v in stream.header.items() if k not in ("format", "version", "created")}
    with LogWriter(target, header, rotate_bytes=source.stat().st_size // parts) as writer:
        for kind, body in stream:
            writer.write(kind, body)
    return writer.paths


def run_corrupt(case: str, args: argparse.Namespace, period: list[dict]) -> dict:
    """A log recorded over ``--before-s`` of rated input (node shut down), then ``--flips`` copies with one
    bit flipped each at a seeded random offset, each read by ``mbstate log info`` (the first ``--replays``
    by ``mbstate replay`` too); then cuts: a hole in the middle, the first file of a rotated copy cut
    in half (both errors), the last bytes cut (a crash's: a warning)."""
    plan = rated(period, args.before_s)
    with (tempfile.TemporaryDirectory(prefix="mbstate-fault-") as name,
          node(Path(name), node_settings(args)) as running):
        send(running.publisher(), plan)
        status = settle(running.context, running.endpoint("control"))
        running.stop()
        original = running.log.read_bytes()
        log = read_log(running.log)
        starts = frame_starts(original)
        copy = running.directory / "damaged.log"
        rng = np.random.default_rng(SEED)
        flips = []
        for number, bit in enumerate(rng.integers(0, 8 * len(original), args.flips)):
            data = bytearray(original)
            data[bit // 8] ^= 1 << (bit % 8)
            copy.write_bytes(data)
            damaged = starts[bisect.bisect_right(starts, bit // 8) - 1] if bit // 8 >= len(MAGIC) else 0
            outcomes = [mbstate("log", "info", copy)]
            if number < args.replays:
                outcomes.append(mbstate("replay", copy, "--config", running.config, "--out",
                                        running.directory / "replayed.csv", "--quiet"))
            flips.append((int(bit), damaged, outcomes))
        middle = len(original) // 2
        copy.write_bytes(original[:middle] + original[middle + args.hole_bytes:])
        hole = mbstate("log", "info", copy)
        parts = rotated(running.log, running.directory / "rotated.log", 3)
        parts[0].write_bytes(parts[0].read_bytes()[:parts[0].stat().st_size // 2])
        part_cut = mbstate("log", "info", *parts)
        copy.write_bytes(original[:-5])
        end_cut = mbstate("log", "info", copy)
        end_replay = mbstate("replay", copy, "--config", running.config, "--out",
                             running.directory / "replayed.csv", "--quiet")
    verdicts = [outcomes[0].verdict for _, _, outcomes in flips]
    tally = {v: verdicts.count(v) for v in ("detected", "no offset", "warned", "silent", "traceback")}
    at_frame = sum(1 for _, damaged, outcomes in flips if outcomes[0].offset == damaged)
    replays = [outcomes[1].verdict for _, _, outcomes in flips if len(outcomes) > 1]
    cuts = {"hole": hole, "part": part_cut, "end": end_cut, "end replay": end_replay}
    survived = (tally["detected"] >= args.flips - args.flips // 50 and tally["traceback"] == 0
                and all(v == "detected" for v in replays) and hole.verdict == "detected"
                and part_cut.verdict == "detected" and end_cut.verdict == "warned"
                and end_replay.code == 0 and end_replay.warnings != [])
    return {"case": case, "sent": plan.sent, **counts(status), "log": len(log.readings), "bytes": len(original),
            "hole_bytes": args.hole_bytes,
            "tally": tally, "at_frame": at_frame, "replays": replays, "cuts": cuts, "parts": len(parts),
            "states": running.listener.states, "exit": running.process.returncode, "survived": survived,
            "flips": [(bit, damaged, [(o.verdict, o.offset, o.errors[:1] or o.warnings[:1]) for o in outcomes])
                      for bit, damaged, outcomes in flips]}


def afterwards(row: dict) -> str:
    """The table's last column: what the log held and what ``mbstate`` made of it (kill and corrupt cases)."""
    if row["case"].startswith("kill9"):
        info, replayed = row["info"], row["replay"]
        return (f"lost {row['lost']} (bar {row['bar']}); log info: exit {info.code}, "
                f"{len(info.warnings)} warning(s); replay: exit {replayed.code}")
    if row["case"] == "corrupt":
        tally, cuts = row["tally"], row["cuts"]
        replays = row["replays"]
        return (f"{sum(tally.values())} flips: {tally['detected']} detected ({row['at_frame']} at the damaged "
                f"frame's offset), {tally['no offset']} without an offset, {tally['warned'] + tally['silent']} "
                f"accepted, {tally['traceback']} tracebacks; replay {replays.count('detected')}/{len(replays)} "
                f"detected; hole of {row['hole_bytes']} B: {cuts['hole'].verdict}; part 1 of {row['parts']} "
                f"cut: {cuts['part'].verdict}; last 5 B cut: {cuts['end'].verdict} (exit {cuts['end'].code}), "
                f"replay exit {cuts['end replay'].code}")
    return "—"


def skipped(row: dict) -> str:
    """The table's skipped column: readings skipped by reason, at what rate the node took them."""
    total = sum(row["skipped"].values())
    if not total:
        return "—"
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["skipped"].items()))
    return f"{reasons} ({total / max(row['skipping_s'], 1e-9):,.0f}/s)"


def table(rows: list[dict], args: argparse.Namespace) -> str:
    lines = ["| case | sent | received | accepted | dropped by reason | gaps | late | in the log | resyncs | "
             "reinit. | resume [s] | catch-up [s] | current [s] | skipped | states | log after the fault | survived |",
             "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- "
             "| --- | --- |"]
    labels = {"burst": f"burst {args.speed:g}x for {args.burst_s:g} s",
              "flood": f"burst {args.speed:g}x for {args.burst_s:g} s, unbounded sender queue",
              "outage": f"outage {args.outage_s:g} s",
              "jump": f"clock jump {args.jump_s:+g} s", "kill9": f"kill -9 after {args.idle_s:g} s idle",
              "kill9-load": "kill -9 under rated input", "corrupt": f"corrupted log ({args.flips} bit flips, cuts)"}
    for row in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["dropped"].items())) or "—"
        timing = (f"{row['resume_s']:.3f} | {row['catch_up_s']:.2f} | {row['current_s']:.2f}" if "resume_s" in row
                  else "— | — | —")
        lines.append(f"| {labels[row['case']]} | {row['sent']} | {row['received']} | {row['accepted']} | {reasons} | "
                     f"{row['gaps']} | {row['late']} | {row['log']} | {row['resyncs']} | {row['reinit']} | "
                     f"{timing} | {skipped(row)} | {' → '.join(row['states'])} | {afterwards(row)} | "
                     f"{'yes' if row['survived'] else 'NO'} |")
    return "\n".join(lines)


CASES = {"burst": run_case, "flood": run_case, "outage": run_case, "jump": run_case, "kill9": run_kill,
         "kill9-load": run_kill,
         "corrupt": run_corrupt}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=tuple(CASES), default=list(CASES))
    parser.add_argument("--mechanism", choices=tuple(MACHINES), default="fourbar",
                        help="the node's machine: the four-bar (default) or the Panda arm")
    parser.add_argument("--speed", type=float, default=10.0, help="burst, flood: times the rated input")
    parser.add_argument("--burst-s", type=float, default=10.0, help="burst, flood: wall seconds")
    parser.add_argument("--outage-s", type=float, default=10.0, help="outage: seconds of silence")
    parser.add_argument("--jump-s", type=float, default=1000.0, help="clock jump [s]")
    parser.add_argument("--idle-s", type=float, default=3.0, help="kill9: the node idle this long before the kill [s]")
    parser.add_argument("--flips", type=int, default=50, help="corrupt: single-bit flips")
    parser.add_argument("--replays", type=int, default=3, help="corrupt: flipped copies also replayed")
    parser.add_argument("--hole-bytes", type=int, default=4096, help="corrupt: bytes cut out of the middle")
    parser.add_argument("--before-s", type=float, default=5.0, help="rated input before the fault [s]")
    parser.add_argument("--after-s", type=float, default=5.0, help="rated input after the fault [s]")
    parser.add_argument("--queue", type=int, help="the node's input queue [messages] (default: the config's)")
    parser.add_argument("--no-skip", action="store_true",
                        help="node.max_lag_s null: the node estimates every reading in order, however late")
    args = parser.parse_args()
    global machine
    machine = MACHINES[args.mechanism]
    period = period_readings()
    rows = []
    for case in args.cases:
        row = CASES[case](case, args, period)
        print(f"{case}: {row}", file=sys.stderr, flush=True)
        rows.append(row)
    print(table(rows, args))
    return 0 if all(row["survived"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
