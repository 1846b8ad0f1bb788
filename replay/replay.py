"""Offline replay of a log through the node's own per-message path, without sockets.

The node's input records of the log go, in file order, through estimator.node.intake.Intake — the
object the live node runs each message through (it records every message before processing it):
``reading`` maps to ``handle``, ``raw`` bytes to ``receive``, a ``reset`` control record to
``reset``; at the log's end ``finish`` processes the last due steps, as the node does at shutdown.
Same messages, same order, same estimator calls: the same estimates and counters, step for step —
as long as the estimator's degradation, which follows the steps' latency, takes the same course,
and the node estimated every reading. Where it was behind its input it skipped a backlog
(``skip`` and ``resume`` control records, estimator.node.backlog): ``as_recorded`` takes those
decisions again (the live estimates), the other clocks pass them over and estimate every reading.

The clock the estimator times its steps with decides that course:

- by default, ``MeasuredFixedClock``: the estimator reads a clock that does not advance, as with
  estimator.online.estimator.FixedClock() (latency 0: it never degrades or coalesces), so the
  same log and configuration give the same estimates, bit for bit, on every run; the steps' wall
  time is measured aside, for the status' latency figures only;
- ``as_recorded`` (``mbstate replay --as-recorded``): the steps last what the node's estimate
  records say they took (``RecordedClock``), so the estimator degrades as it did live and gives
  the live estimates — deterministic as well;
- ``realtime`` (``--realtime``, readings released at their stamps' pace): the wall clock, as on a
  live node; the estimates then depend on the machine's load.

Before any input, the log's header is checked against the configuration
(estimator.node.recorded_for); a log none of whose readings is from a configured sensor is an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from estimator.collector import steady_collection
from estimator.errors import MbstateError, shown
from estimator.logfile import LogStream, Record
from estimator.model_protocol import Model, actuators, constraint_count
from estimator.node.config import NodeConfig
from estimator.node.intake import RESUME, SKIP, EstimatorFactory, Intake, intake_for, online_estimator
from estimator.node.recorded_for import check_recorded_for, shortened
from estimator.timeseries import Trajectory
from replay.clocks import MeasuredFixedClock, RecordedClock
from replay.pacing import paced, stamp

Progress = Callable[[int, int], None]


@dataclass
class ReplayResult:
    """The estimates of a replay and its status (the node's status fields over the whole replay)."""

    estimates: list[Any]
    status: dict[str, Any]


def replay(paths: str | Path | Sequence[str | Path], config: NodeConfig,
           estimator_factory: EstimatorFactory = online_estimator, realtime: bool = False,
           progress: Progress | None = None, as_recorded: bool = False,
           note: Callable[[str], None] = lambda line: None,
           sink: Callable[[list[Any]], None] | None = None) -> ReplayResult:
    """Run the log's input (readings, raw messages, resets) through a fresh estimator, then ``finish``;
    the clock by the module docstring (``realtime``: also at the pace of the readings' stamps).
    ``paths``: a log, or several files and folders read as one stream (estimator.logfile), in constant
    memory. ``progress(done, total)`` [bytes of the stream] is called after each input record,
    ``note(line)`` with each note of the header's check and each warning of the reading (a crash's
    damage, an old log without checksums). ``sink(estimates)``, when given, takes the estimates as
    they come and the result keeps none (a long log's estimates need not fit in memory)."""
    stream = LogStream(paths, note)
    for line in check_recorded_for(stream.name, stream.header, config):
        note(line)
    clock: Callable[[], float] = (RecordedClock(update_durations(stream.name, LogStream(paths))) if as_recorded
                                  else time.perf_counter if realtime else MeasuredFixedClock())
    intake = intake_for(config, estimator_factory(config, clock))
    kept: list[Any] = []
    take = sink or kept.extend
    sensors = ReadingSensors()
    started = time.monotonic()
    with steady_collection():
        inputs = sensors.seen(stream.inputs())
        if progress is not None:
            inputs = _reported(inputs, stream, progress)
        for estimate in feed(stream.name, intake, inputs, realtime, skips=as_recorded):
            take([estimate])
        take(intake.finish())
    sensors.check(stream.name, config)
    status = intake.status(time.monotonic() - started)
    if isinstance(clock, MeasuredFixedClock):
        status["latency_ms"] = clock.latency.summary_ms()
    return ReplayResult(estimates=kept, status=status)


def _reported(inputs: Iterable[Record], stream: LogStream, progress: Progress) -> Iterator[Record]:
    for record in inputs:
        yield record
        progress(stream.done_bytes, stream.total_bytes)
    progress(stream.done_bytes, stream.total_bytes)


class ReadingSensors:
    """The sensor ids of a log's readings, gathered as they stream past, and the check that some are
    configured (a log of other sensors would replay to no estimate at all)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.count = 0

    def seen(self, inputs: Iterable[Record]) -> Iterator[Record]:
        for kind, body in inputs:
            if kind == "reading":
                self.count += 1
                if isinstance(body.get("sensor"), str):
                    self.names.add(body["sensor"])
            yield kind, body

    def check(self, name: str, config: NodeConfig) -> None:
        """MbstateError when the log had readings and none from a sensor of ``config``."""
        configured = config.sensors.dimensions()
        if self.names and not self.names & set(configured):
            raise MbstateError(f"{name}: none of its {self.count} readings is from a sensor of the configuration "
                               f"(the log's: {shortened(sorted(self.names))}; the configuration's: "
                               f"{shortened(list(configured))})")



def feed(name: str | Path, intake: Intake, inputs: Iterable[Record], realtime: bool = False,
         skips: bool = False) -> Iterator[Any]:
    """Input records ``(kind, body)`` of the log ``name`` (named in errors) through ``intake`` in order
    (``realtime``: at the pace of their stamps; ``skips``: the node's skip decisions taken, as
    ``take_input``), each completed estimate yielded as it comes (a caller that stops at an error
    keeps those before)."""
    for kind, body in paced(inputs, stamp_of=lambda record: stamp(record[1])) if realtime else inputs:
        yield from take_input(name, intake, kind, body, skips)



def update_durations(name: str | Path, records: Iterable[Record]) -> list[float]:
    """Wall seconds of each smoother update of a node's run, from the estimate records among
    ``records`` (one per grid step: the step's share ``latency_ms`` of an update of ``update_steps``
    steps)."""
    durations, skip = [], 0
    for kind, record in records:
        if kind != "estimate":
            continue
        if skip:
            skip -= 1
            continue
        steps = record.get("update_steps")
        if not isinstance(steps, int) or steps < 1 or not isinstance(record.get("latency_ms"), (int, float)):
            raise MbstateError(f"{name}: an estimate record without latency_ms and update_steps: {shown(record, 80)}")
        durations.append(1e-3 * record["latency_ms"] * steps)
        skip = steps - 1
    if not durations:
        raise MbstateError(f"{name}: no estimate records to replay the timing of (the node records them "
                           f"with node.log.record_estimates: true)")
    return durations


def take_input(name: str | Path, intake: Intake, kind: str, body: dict[str, Any], skips: bool = False) -> list[Any]:
    """One input record through the node's path: a reading map to ``handle``, a raw message's bytes
    to ``receive``, a reset to ``reset`` (the steps due before it); the node's ``skip`` and ``resume``
    to ``skip`` and ``resume`` when ``skips`` (``--as-recorded``), else passed over (every reading
    estimated); the estimates it completed."""
    if kind == "reading":
        return intake.handle(body)
    if kind == "raw":
        return intake.receive(body["data"])
    command = body["command"]
    if command == "reset":
        return intake.reset()
    if command == SKIP and isinstance(body.get("reason"), str):
        return intake.skip(body["reason"]) if skips else []
    if command == RESUME:
        if skips:
            intake.resume()
        return []
    raise MbstateError(f"{name}: a control command this reader cannot replay: {shown(body['command'])}")


def estimates_trajectory(mech: Model, estimates: Sequence[Any]) -> Trajectory:
    """Estimates as a Trajectory (for estimator.timeseries.write_csv): an actuator's force is the
    generalized force on its coordinate (``Q.<coordinate>``); other named forces keep their name; the
    model-error states (``model``) are columns ``model.<name>``, the external wrenches ``W.<frame>.<axis>``."""
    coordinate_of = {name: mech.coordinate_names[c] for name, c in actuators(mech)}
    names = list(estimates[0].forces) if estimates else []
    return Trajectory(t=np.array([e.t for e in estimates], float), coordinate_names=mech.coordinate_names,
                      q=np.array([e.q for e in estimates], float).reshape(-1, mech.n),
                      qd=np.array([e.qd for e in estimates], float).reshape(-1, mech.n),
                      qdd=np.array([e.qdd for e in estimates], float).reshape(-1, mech.n),
                      forces={coordinate_of.get(name, name): np.array([e.forces.get(name, np.nan) for e in estimates])
                              for name in names},
                      lam=np.array([e.lam for e in estimates], float).reshape(len(estimates), constraint_count(mech)),
                      model={name: np.array([e.model.get(name, np.nan) for e in estimates])
                             for name in (estimates[0].model if estimates else {})},
                      wrenches={name: np.array([e.wrenches.get(name, np.full(6, np.nan)) for e in estimates], float)
                                for name in (estimates[0].wrenches if estimates else {})})


@dataclass(frozen=True)
class Run:
    """One pass of the readings through the node's path: the estimates (up to an error), the
    estimator's counters and the error's message (None: ran to the end)."""

    estimates: list[Any]
    counters: dict[str, int]
    error: str | None


def replay_readings(config: NodeConfig, readings: list[dict[str, Any]], clock: Callable[[], float],
                    estimator_factory: EstimatorFactory = online_estimator) -> Run:
    """The readings (message maps) through the node's intake and estimator, then ``finish``, as ``mbstate
    replay`` does; any exception of the estimator ends the pass and is reported (a failing cell is a
    result)."""
    inputs = [("reading", message) for message in readings]
    estimates: list[Any] = []
    intake = None
    with steady_collection():
        try:
            intake = intake_for(config, estimator_factory(config, clock))
            for estimate in feed(config.source, intake, inputs):
                estimates.append(estimate)
            estimates += intake.finish()
        except Exception as exc:  # whatever it is, it is the cell's result, not the matrix's end
            text = str(exc) if isinstance(exc, MbstateError) else f"{type(exc).__name__}: {exc}"
            return Run(estimates, dict(intake.estimator.counters) if intake else {}, " ".join(text.split()))
    return Run(estimates, dict(intake.estimator.counters), None)
