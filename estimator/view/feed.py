"""The view's input: a node's output (and optionally sensor readings) decimated to one frame per display tick.

The node publishes an ``estimate`` every step (1 kHz) and a ``status`` every ``status_period_s``
(estimator.node.publishing). The view subscribes in its own process: the node does no work for it beyond
the send to one more subscriber. Each :meth:`Feed.frame` drains what queued since the previous tick
(ZeroMQ's I/O thread queues it meanwhile), keeps the newest estimate (the only one it unpacks:
is_estimate), status and reading of each sensor, and returns one frame: the points of the estimated pose
(and of the true one with a truth file; a planar mechanism's points or a spatial one's skeleton,
estimator.view.scene.scene_of), the chosen series with σ when the node publishes it (``publish_sigmas``),
the readings, and the node's health. Readings come from sensors that also connect to the view's
``readings`` endpoint (bound here: a PUB may connect to the node and to the view).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import zmq

from estimator.errors import MbstateError
from estimator.model_protocol import Model, actuators, point_coordinates
from estimator.node.client import ClientKeys, curve_client
from estimator.node.publishing import UNPACK_ERRORS, unpack
from estimator.view.scene import scene_of
from estimator.view.truth import TruthTrack

QUEUE = 100_000  # [messages] queued between two frames at most (ZMQ_RCVHWM); 1 kHz for 100 s
ESTIMATE_ENTRY = b"\xa4type\xa8estimate"  # msgpack: the text "type", the text "estimate"


def drive_series(mech: Model) -> dict[str, str]:
    """{series name: actuator name}: an actuator's series is named after it, or ``Q.<name>`` when a
    coordinate has its name (a URDF's actuators are named after their joints by default)."""
    taken = set(mech.coordinate_names)
    return {f"Q.{name}" if name in taken else name: name for name, _ in actuators(mech)}


def default_series(mech: Model) -> list[str]:
    """The coordinates that are not point coordinates (angles), then every actuator."""
    points = set(point_coordinates(mech))
    return [name for i, name in enumerate(mech.coordinate_names) if i not in points] + list(drive_series(mech))


class Feed:
    """Sockets to a node's output ``endpoint`` (a CURVE client with ``keys``) and, with ``readings``, a
    bound SUB for sensor messages; ``series``: coordinate names or actuator series (drive_series) to plot;
    ``truth``: a truth file."""

    def __init__(self, mech: Model, endpoint: str, series: Sequence[str], readings: str | None = None,
                 truth: str | None = None, keys: ClientKeys | None = None) -> None:
        self.drives = drive_series(mech)
        unknown = [name for name in series if name not in mech.coordinate_names and name not in self.drives]
        if unknown:
            raise MbstateError(f"unknown series {', '.join(unknown)} (coordinates: {', '.join(mech.coordinate_names)}; "
                               f"actuators: {', '.join(self.drives) or 'none'})")
        self.scene, self.series = scene_of(mech), list(series)
        self.coordinate = {name: i for i, name in enumerate(mech.coordinate_names)}
        self.truth = TruthTrack(truth) if truth else None
        self.context = zmq.Context()
        self.context.setsockopt(zmq.LINGER, 0)
        try:
            self.node = self._sub(endpoint, keys, bind=False)
            self.readings = self._sub(readings, None, bind=True) if readings else None
        except MbstateError:
            self.close()
            raise
        self.estimate: dict[str, Any] | None = None
        self.status: dict[str, Any] | None = None
        self.latest_readings: dict[str, list[float]] = {}
        self.count, self.frames, self._since = 0, 0, time.monotonic()

    def _sub(self, endpoint: str, keys: ClientKeys | None, bind: bool) -> zmq.Socket:
        socket = self.context.socket(zmq.SUB)
        socket.setsockopt(zmq.RCVHWM, QUEUE)
        socket.subscribe(b"")
        if keys is not None:
            curve_client(socket, keys)
        try:
            if bind:
                socket.bind(endpoint)
            else:
                socket.connect(endpoint)
        except zmq.ZMQError as exc:
            raise MbstateError(f"cannot {'bind' if bind else 'connect to'} {endpoint} ({exc})") from None
        return socket

    def frame(self) -> dict[str, Any]:
        """Drain both sockets and return the next frame (module docstring)."""
        received = _received(self.node)
        estimates = [data for data in received if is_estimate(data)]
        for message in _unpacked([data for data in received if not is_estimate(data)] + estimates[-1:]):
            if message.get("type") == "estimate":
                self.estimate = message
            elif message.get("type") == "status":
                self.status = message
        if self.readings is not None:
            for message in _unpacked(_received(self.readings)):
                value = message.get("value")
                if isinstance(message.get("sensor"), str) and value is not None:
                    self.latest_readings[message["sensor"]] = value if isinstance(value, list) else [value]
        now = time.monotonic()
        rate, self.count = len(estimates) / max(now - self._since, 1e-9), self.count + len(estimates)
        self._since, self.frames = now, self.frames + 1
        return {"frame": self.frames, "estimates": self.count, **self._state(), "readings": self.latest_readings,
                "health": health(self.status, rate)}

    def _state(self) -> dict[str, Any]:
        """The estimate's and the truth's points and series at the newest estimate (nothing before the first)."""
        e = self.estimate
        if e is None:
            return {"t": None, "estimate": None, "truth": None}
        sigma = e.get("sigma") or {}
        forces, force_sigma = e["forces"], dict(zip(e["forces"], sigma.get("forces", ())))
        series = {}
        for name in self.series:
            if (i := self.coordinate.get(name)) is not None:
                series[name] = [e["q"][i], sigma["q"][i] if "q" in sigma else None]
            elif (drive := self.drives[name]) in forces:
                series[name] = [forces[drive], force_sigma.get(drive)]
        truth = self.truth.at(e["t"]) if self.truth is not None else None
        true_state = None
        if truth is not None:
            q, f = truth
            true_state = {"points": self.scene.points(q),
                          "series": {name: float(q[self.coordinate[name]]) if name in self.coordinate
                                     else f.get(self.drives[name]) for name in self.series}}
        return {"t": e["t"], "estimate": {"points": self.scene.points(e["q"]), "series": series,
                                          "flags": e.get("flags", [])}, "truth": true_state}

    def close(self) -> None:
        self.context.destroy(linger=0)


def is_estimate(data: bytes) -> bool:
    """Whether ``data`` is a msgpack map whose first entry is ``type: "estimate"``, as the node packs its
    estimates (estimator.node.publishing.estimate_message), told from the bytes: only the newest of a tick's
    estimates is unpacked (15 µs each, 1,000 a second). Any other message is unpacked and looked at."""
    return data[:1] != b"" and data[0] & 0xF0 == 0x80 and data[1:1 + len(ESTIMATE_ENTRY)] == ESTIMATE_ENTRY


def _received(socket: zmq.Socket) -> list[bytes]:
    """Every message queued on ``socket`` (at most QUEUE)."""
    messages = []
    for _ in range(QUEUE):
        try:
            messages.append(socket.recv(zmq.NOBLOCK))
        except zmq.Again:
            break
    return messages


def _unpacked(messages: list[bytes]) -> list[dict[str, Any]]:
    """The maps among ``messages``, unpacked; undecodable ones and other values left out."""
    maps = []
    for data in messages:
        try:
            message = unpack(data)
        except UNPACK_ERRORS:
            continue
        if isinstance(message, dict):
            maps.append(message)
    return maps


def health(status: Mapping[str, Any] | None, rate: float) -> dict[str, Any]:
    """The node's health from its newest status message, with the estimate ``rate`` seen here [Hz]."""
    if status is None:
        return {"state": "no status yet", "rate_hz": rate}
    return {"state": status.get("state"), "rate_hz": rate, "latency_ms": status.get("latency_ms"),
            **{key: status.get(key) for key in ("overruns", "dropped", "late", "skipped", "malformed", "gaps",
                                                 "recoveries")},
            "level": (status.get("estimator") or {}).get("level", 0)}
