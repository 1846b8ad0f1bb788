"""The per-message path shared by the live node and replay: validate, record, admit, estimate.

For each message received (bytes off the socket, or a map read back from a log):

1. unpack msgpack (sensors.messages.unpack; failure: malformed ``undecodable``, or ``too_deep``
   for lists and maps nested more than sensors.messages.MAX_DEPTH levels);
2. record it, verbatim and before anything else: a message that unpacks to a map (valid or not) as a
   ``reading`` record, any other bytes (undecodable, too deep, another msgpack type) as a ``raw``
   record, so that replaying the log reproduces the estimates and the counters;
3. validate it (sensors.messages.validate with the sensor set's dimensions; failure: malformed
   with the reason of the first problem found: ``unknown_sensor`` or ``invalid`` — types, shapes,
   NaN / inf, unknown keys);
4. admit it: per sensor the stamp must increase (else dropped ``backwards``), and it must not lie
   more than ``max_future_s`` after the newest accepted stamp (else dropped ``future``); its value and
   cov must lie within the sensor's bounds (sensors.plausibility: dropped ``range``, ``cov``);
   sequence numbers, of every valid reading, only reveal gaps (readings lost upstream or by the
   input queue), a restart is allowed;
5. ``estimator.add(reading)`` (``late``: outside the window; ``ignored`` and ``outlier``: dropped
   with that reason);
6. ``estimator.advance(newest accepted stamp)``: every estimate returned is timed (overruns: latency
   over the budget), recorded (``estimate`` record) and returned for publishing (steps 5 and 6 not
   while catching up, below).

Resync. A reading more than ``max_future_s`` ahead of the newest admitted stamp (or that far behind it
and behind its sensor's last stamp) is a jump candidate; its sensor's newest candidate stamp is kept,
with the number of its candidates in a row that each follow the one before within ``max_future_s``,
until a reading is admitted in the current time, which forgets them all. A sensor confirms a new time
with JUMP_CONFIRMATION such candidates (one stray stamp is only dropped). When the confirming sensors
whose newest candidates lie within ``max_future_s`` of the newest one include every sensor with an
admitted stamp, or the candidates span ``max_future_s`` (sensors that stay silent do not block),
the sensors have moved to a new time (an outage with clocks running on, a clock jump, input lost for
longer than ``max_future_s``): the steps due in the old time are estimated (``finish``), the estimator
is reset with reason ``resync`` (its first estimates flagged ``resync``), the stamps are forgotten
and the reading is admitted as the first of the new time (counted in ``resyncs``). One sensor's clock
jumping while the others carry on never resyncs: their admitted readings forget its candidates.
Replay takes the same decisions from the same input, so a resync is not recorded.

Catching up. The node skips a backlog (:meth:`Intake.skip`, its decision: estimator.node.backlog):
from then on admitted readings go through steps 1–4, are counted in ``skipped`` by the skip's reason
and do not reach the estimator, which was finished first (its due steps estimated). :meth:`Intake.resume`
restarts the estimator (reason ``caught_up``: its first estimates flagged so) from the next reading.
Both are recorded as ``control`` records at their place among the readings, and only replay
``--as-recorded`` takes them (the live estimates); a resync or a reset in between does not end a skip.

At the end of the input (:meth:`Intake.finish`: a log's end in replay, the node's shutdown) the
estimator advances with ``final=True``, so the last due steps are processed even while it coalesces.

Replay feeds the log's reading maps to :meth:`Intake.handle` and its raw records to
:meth:`Intake.receive`, and resets where the node did (``control`` records); the node feeds socket
bytes to :meth:`Intake.receive`, which unpacks and calls the same method: identical input, identical
calls to the estimator. Problems are logged through ``logging`` at most once per kind per interval.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from estimator.logfile import LogWriter
from estimator.model_protocol import actuators
from estimator.node.config import NodeConfig
from estimator.node.publishing import UNPACK_ERRORS, estimate_fields, unpack
from estimator.node.recorded_for import setup_header
from estimator.node.stats import LatencyWindow, NodeCounters, SensorTrack
from estimator.online.interface import Estimator, StepEstimate
from sensors.messages import MessageError, Reading, validate
from sensors.plausibility import ReadingBounds, reading_bounds

LOGGER = logging.getLogger("mbstate.node")
JUMP_CONFIRMATION = 2  # readings in a row of a sensor that confirm its new time (module docstring, Resync)
SKIP, RESUME = "skip", "resume"  # the control records of the node's own skip decisions (module docstring)
CAUGHT_UP = "caught_up"  # the estimator's reset reason on resuming after a skip


class Throttle:
    """Log lines rate-limited per kind: the first at once, then at most one per ``interval`` [s]
    saying how many were suppressed (wall clock; it never changes what the node computes)."""

    def __init__(self, interval: float, logger: logging.Logger = LOGGER,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval, self.logger, self.clock = interval, logger, clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def warn(self, kind: str, text: str, level: int = logging.WARNING) -> None:
        now = self.clock()
        if kind in self._last and now - self._last[kind] < self.interval:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return
        more = self._suppressed.pop(kind, 0)
        self._last[kind] = now
        self.logger.log(level, "%s: %s%s", kind, text, f" (and {more} more since the last report)" if more else "")


class Intake:
    """Owns the estimator's input side and the statistics of one run (see the module docstring).

    ``estimator``: an estimator.online.interface.Estimator (the smoother or a filter); ``publish``: called
    with each estimate's map (estimator.node.publishing.estimate_fields, made once per step for the
    log and the publisher), or None; ``budget_s``: step
    latency budget [s]; ``log``: where messages and (``record_estimates``) estimates are recorded, or
    None; ``bounds``: sensor id → sensors.plausibility.ReadingBounds (none: no bounds); ``quiet_s``
    [s] and ``clock`` (wall time) only decide the status ``state``. An ``estimate`` record is the estimate
    message without ``type``, plus ``f``: the forces of ``actuators`` in that order (nan if absent),
    so it has the keys of a ``truth`` record.
    """

    def __init__(self, estimator: Estimator, dimensions: Mapping[str, int], max_future_s: float, budget_s: float,
                 log: LogWriter | None = None, record_estimates: bool = True, actuators: tuple[str, ...] = (),
                 throttle: Throttle | None = None, bounds: Mapping[str, ReadingBounds] | None = None,
                 quiet_s: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 publish: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.estimator, self.dimensions, self.actuators = estimator, dict(dimensions), actuators
        self.publish = publish
        self.max_future_s, self.budget_s = max_future_s, budget_s
        self.log, self.record_estimates = log, record_estimates
        self.throttle = throttle or Throttle(5.0)
        self.bounds = dict(bounds or {})
        self.quiet_s, self.clock = quiet_s, clock
        self.counters = NodeCounters()
        self.latency = LatencyWindow()
        self.tracks = {name: SensorTrack() for name in self.dimensions}
        self.newest: float | None = None
        # sensor → its newest stamp beyond max_future_s and how many in a row agree (module docstring)
        self.jumped: dict[str, tuple[float, int]] = {}
        self._jump_first: float | None = None  # the first such stamp since the last admitted reading
        # wall time of the last admission, of the last new gap, of the last reading skipped
        self._admitted_at = self._gap_at = self._skipped_at = -math.inf
        self.epoch = 0  # changes whenever the stamps are forgotten (reset, resync)
        self.skipping: str | None = None  # why admitted readings are skipped (None: they are estimated)
        self.skipped_s, self._skip_began = 0.0, 0.0  # wall seconds spent skipping, start of the current skip

    def receive(self, data: bytes) -> list[StepEstimate]:
        """Handle the bytes of one socket message; the estimates it completed."""
        try:
            message = unpack(data)
        except UNPACK_ERRORS as exc:
            self._record_raw(data)
            self.counters.received += 1
            self._malformed(exc.reason, str(exc))
            return []
        if not isinstance(message, dict):
            self._record_raw(data)
        return self.handle(message, depth_checked=True)

    def _record_raw(self, data: bytes) -> None:
        if self.log is not None:
            self.log.raw(data)

    def handle(self, message: Any, depth_checked: bool = False) -> list[StepEstimate]:
        """Handle one unpacked message; the estimates it completed (StepEstimate). ``depth_checked``: it
        came from sensors.messages.unpack (``receive``), which bounded its nesting already."""
        self.counters.received += 1
        if self.log is not None and isinstance(message, dict):
            self.log.reading(message)
        try:
            reading = validate(message, self.dimensions, depth_checked)
        except MessageError as exc:
            self._malformed(exc.reason, str(exc))
            return []
        track = self.tracks[reading.sensor]
        if track.see(reading.seq):
            self._gap_at = self.clock()
        estimates = self._resync(reading) if self._jump(reading) else []
        reason = self._admission(reading)
        if reason:
            self.counters.dropped[reason] += 1
            self.throttle.warn(f"dropped {reason}", f"{reading.sensor} t={reading.t!r} seq={reading.seq}")
            return estimates
        track.accept(reading.t)
        self.newest = reading.t if self.newest is None else max(self.newest, reading.t)
        self._admitted_at = self.clock()
        self.jumped, self._jump_first = {}, None
        if self.skipping is not None:
            self.counters.skipped[self.skipping] += 1
            self._skipped_at = self._admitted_at
            return estimates
        self.counters.accepted += 1
        verdict = self.estimator.add(reading)
        if verdict == "late":
            self.counters.late += 1
            self.throttle.warn("late", f"{reading.sensor} t={reading.t!r} is behind the estimator's window")
        elif verdict in ("ignored", "outlier"):
            self.counters.dropped[verdict] += 1
            if verdict == "outlier":
                self.throttle.warn("dropped outlier", f"{reading.sensor} t={reading.t!r} is far off the prediction")
        return estimates + self._advance()

    def _admission(self, reading: Reading) -> str | None:
        """Why a valid reading is not admitted (None: admitted): the first problem of its stamp, then of
        its value and cov (sensors.plausibility)."""
        last_t = self.tracks[reading.sensor].last_t
        if last_t is not None and reading.t <= last_t:
            return "backwards"
        if self.newest is not None and reading.t > self.newest + self.max_future_s:
            return "future"
        bounds = self.bounds.get(reading.sensor)
        return None if bounds is None else bounds.problem(reading)

    def _jump(self, reading: Reading) -> bool:
        """Note a reading stamped more than ``max_future_s`` ahead of the newest admitted stamp, or behind
        it and its sensor's last stamp; True when the sensors agree on a new time (module docstring)."""
        if self.newest is None:
            return False
        last_t = self.tracks[reading.sensor].last_t
        ahead = reading.t > self.newest + self.max_future_s
        behind = reading.t < self.newest - self.max_future_s and last_t is not None and reading.t <= last_t
        if not (ahead or behind):
            return False
        t, count = self.jumped.get(reading.sensor, (-math.inf, 0))
        self.jumped[reading.sensor] = (reading.t, count + 1 if t < reading.t <= t + self.max_future_s else 1)
        self._jump_first = reading.t if self._jump_first is None else self._jump_first
        newest = max(t for t, _ in self.jumped.values())
        agreeing = {name for name, (t, count) in self.jumped.items()
                    if t >= newest - self.max_future_s and count >= JUMP_CONFIRMATION}
        active = {name for name, track in self.tracks.items() if track.last_t is not None}
        return bool(agreeing) and (agreeing >= active or abs(newest - self._jump_first) >= self.max_future_s)

    def _resync(self, reading: Reading) -> list[StepEstimate]:
        """Follow the sensors to their new time: the steps due in the old one estimated (``finish``), the
        estimator restarted (reason ``resync``: its next estimates are flagged so), stamps forgotten."""
        estimates = self.finish()
        self.estimator.reset("resync")
        for track in self.tracks.values():
            track.last_t = None
        self.throttle.warn("resync", f"the sensors moved from t={self.newest!r} to t={reading.t!r}: "
                                     "estimator restarted there")
        self.newest, self.jumped, self._jump_first = None, {}, None
        self.epoch += 1
        self.counters.resyncs += 1
        return estimates

    def _advance(self) -> list[StepEstimate]:
        return self._took(self.estimator.advance(self.newest))

    def finish(self) -> list[StepEstimate]:
        """The end of the input (a log's end, the node's shutdown): every step due by the newest stamp,
        also those a coalescing estimator still holds back for a full group; timed, recorded and
        returned like any estimates."""
        if self.newest is None or self.skipping is not None:  # skipping: finished when the skip began
            return []
        return self._took(self.estimator.advance(self.newest, final=True))

    def _took(self, estimates: list[StepEstimate]) -> list[StepEstimate]:
        """Estimates the estimator returned: counted, timed against the budget, recorded, published."""
        recording = self.log is not None and self.record_estimates
        for estimate in estimates:
            self.counters.steps += 1
            self.latency.add(estimate.latency)
            if estimate.latency > self.budget_s:
                self.counters.overruns += 1
            if recording or self.publish is not None:
                fields = estimate_fields(estimate)
                if recording:
                    forces = [float(estimate.forces.get(name, math.nan)) for name in self.actuators]
                    self.log.write("estimate", {**fields, "f": forces})
                if self.publish is not None:
                    self.publish(fields)
        return estimates

    def _malformed(self, reason: str, text: str) -> None:
        self.counters.malformed[reason] += 1
        self.throttle.warn(f"malformed {reason}", text)

    def reset(self) -> list[StepEstimate]:
        """Forget every reading (the ``reset`` command): estimator, per-sensor stamps, newest stamp;
        recorded as a ``control`` record, for replay. The steps already due are estimated first
        (``finish``, also those a coalescing estimator held back) and returned."""
        estimates = self.finish()
        if self.log is not None:
            self.log.write("control", {"command": "reset"})
        self.estimator.reset()
        self.tracks = {name: SensorTrack() for name in self.dimensions}
        self.newest, self.jumped, self._jump_first = None, {}, None
        self.epoch += 1
        return estimates

    def skip(self, reason: str) -> list[StepEstimate]:
        """From the next message on, admitted readings are recorded and counted (``skipped`` by
        ``reason``) but not estimated: the node is behind its input (estimator.node.backlog). Recorded
        as a ``skip`` control record; the steps already due are estimated first (``finish``) and
        returned."""
        estimates = self.finish()
        if self.log is not None:
            self.log.write("control", {"command": SKIP, "reason": reason})
        self.skipping, self._skip_began = reason, self.clock()
        self.throttle.warn("skipping", f"behind the input stream ({reason}) at t={self.newest!r}: its backlog is "
                                       "recorded, not estimated")
        return estimates

    def resume(self) -> None:
        """Estimate again from the next message on, after ``skip``: the estimator restarts from the
        newest readings (reset with reason ``caught_up``). Recorded as a ``resume`` control record."""
        if self.log is not None:
            self.log.write("control", {"command": RESUME})
        self.skipping = None
        self.skipped_s += self.clock() - self._skip_began
        self.estimator.reset(CAUGHT_UP)
        LOGGER.info("caught up with the input stream at t=%r: estimating again", self.newest)

    def status(self, period: float) -> dict[str, Any]:
        """The status fields this side knows (see estimator.node.publishing); ``period`` [s] since the
        previous status, for the sensor rates."""
        estimator_counters = dict(self.estimator.counters)
        observability = self.estimator.observability
        return {"state": self.state(int(estimator_counters.get("level", 0))), "t": self.newest,
                "sensors": {name: track.report(period) for name, track in self.tracks.items()},
                "gaps": sum(track.gaps for track in self.tracks.values()),
                **self.counters.as_dict(), "recoveries": int(estimator_counters.get("recoveries", 0)),
                "skipping_s": self.skipped_s + (0.0 if self.skipping is None else self.clock() - self._skip_began),
                "latency_ms": self.latency.summary_ms(), "estimator": estimator_counters,
                "observability": None if observability is None else observability.as_dict()}


    def state(self, level: int) -> str:
        """The status ``state`` (the first that holds): ``waiting`` (readings were admitted, but none for
        ``quiet_s``: silence, or readings held back until the sensors agree on a new time), ``starting``
        (the estimator's start-up, also before any input), ``catching_up`` (a reading was skipped within
        ``quiet_s``: the node is behind its input, ``skip``), ``shedding`` (a sequence gap appeared within
        ``quiet_s``: input lost upstream or by the input queue), ``degraded`` (degradation ``level``
        above 0), ``running``."""
        now = self.clock()
        if math.isfinite(self._admitted_at) and now - self._admitted_at > self.quiet_s:
            return "waiting"
        if now - self._skipped_at <= self.quiet_s:
            return "catching_up"
        if not self.estimator.started:
            return "starting"
        if now - self._gap_at <= self.quiet_s:
            return "shedding"
        return "degraded" if level > 0 else "running"


EstimatorFactory = Callable[[NodeConfig, Callable[[], float]], Estimator]


def online_estimator(config: NodeConfig, clock: Callable[[], float]) -> Estimator:
    """The configuration's estimator by ``estimator.kind``: the smoother (estimator.online.estimator.
    OnlineEstimator) or a filter behind the same interface (estimator.online.filters.online_filter.OnlineFilter)."""
    if config.estimator.kind == "smoother":
        from estimator.online.estimator import OnlineEstimator

        return OnlineEstimator(config.mech, config.sensors, config.estimator, clock=clock)
    from estimator.online.filters.online_filter import OnlineFilter

    return OnlineFilter(config.mech, config.sensors, config.estimator, clock=clock)


def log_header(config: NodeConfig) -> dict[str, Any]:
    """Header of a node's log: the configuration file, and what the log is recorded for (the files,
    the model's names and parameters, the sensor configuration: estimator.node.recorded_for)."""
    return {"writer": "mbstate node", "config": config.source,
            **setup_header(config.mech, config.sensors, config.mechanism_path, config.sensors_path)}


def intake_for(config: NodeConfig, estimator: Estimator, log: LogWriter | None = None,
               publish: Callable[[dict[str, Any]], None] | None = None) -> Intake:
    """The Intake of a configuration: what the node and replay both run."""
    node = config.node
    return Intake(estimator, config.sensors.dimensions(), max_future_s=node.max_future_s,
                  budget_s=1e-3 * config.estimator.latency_budget_ms, log=log,
                  record_estimates=node.log.record_estimates,
                  actuators=tuple(name for name, _ in actuators(config.mech)),
                  throttle=Throttle(node.log_interval_s),
                  bounds=reading_bounds(config.sensors.sensors), quiet_s=node.status_period_s, publish=publish)
