"""The online estimator node: sockets at the edge of a single-threaded loop that owns the estimator.

Sockets (all bound by the node): SUB ``node.sub`` for sensor messages (sensors connect their PUB
sockets to it), PUB ``node.pub`` for ``estimate`` and ``status`` messages
(estimator.node.publishing), REP ``node.control`` for commands, and with ``node.plot`` a second PUB
that sends each estimate as ``[topic, flat map]`` for plotting tools (estimator.node.plot_map).

The loop: wait on the sockets (zmq.Poller, short timeout); take at most ``node.drain`` input
messages, each through the shared per-message path (estimator.node.intake.Intake.receive) and
publish the estimates it completes; answer one control request; publish a status message every
``node.status_period_s``; count the peers ZeroMQ disconnects (a socket monitor); flush the log
when its flush interval has passed, records or not (the poll's timeout bounds the wait). The input queue is
bounded by ZMQ_RCVHWM (= ``node.queue``): beyond it ZeroMQ drops messages, which show up as sequence
gaps per sensor and in the status (state ``shedding``, estimator.node.intake). A sender that queues
without bound (SNDHWM 0) can delay the estimates beyond that: after each message taken the node
measures how far behind its input stream it is (estimator.node.backlog) and, ``node.max_lag_s``
behind, records the backlog without estimating it until no message waits, then restarts the
estimator from the newest readings (estimator.node.intake, ``skip`` and ``resume``). Messages over
ZMQ_MAXMSGSIZE (input and control) never reach the node: ZeroMQ disconnects their sender (on the
input counted in ``disconnects``); the sender reconnects by itself. Access (estimator.node.access):
optional CURVE on every socket, a warning for an endpoint bound beyond loopback without it, and an
``ipc://`` endpoint a live process serves is refused.

Control requests and replies are msgpack maps: ``{"command": "status" | "reset" | "shutdown"}``;
replies carry ``ok`` (true / false) and ``command``, ``error`` (text, the request shortened; counted
in ``bad_requests``) when not ok; ``status``
replies with the status message. SIGINT / SIGTERM (main thread) and ``shutdown`` stop the loop;
the steps due by the newest stamp that a coalescing estimator still held back are then processed
and published (estimator.node.intake.Intake.finish); :meth:`Node.close` publishes a last status
(state ``stopped``), flushes and closes the log, closes the sockets.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import recv_monitor_message

from estimator.collector import steady_collection
from estimator.errors import MbstateError, shown
from estimator.logfile import LogWriter
from estimator.node.access import beyond_loopback, check_ipc_free, curve_server, key_pair
from estimator.node.backlog import BacklogWatch
from estimator.node.config import NodeConfig
from estimator.node.intake import EstimatorFactory, intake_for, log_header, online_estimator
from estimator.node.plot_map import TOPIC, PlotMap
from estimator.node.publishing import UNPACK_ERRORS, estimate_message, unpack
from estimator.node.realtime import LoopScheduling, scheduled
from estimator.wire import pack

LOGGER = logging.getLogger("mbstate.node")
POLL_MS = 20
COMMANDS = ("status", "reset", "shutdown")


class Node:
    """The running node; use as a context manager (``with Node(config) as node: node.run()``).

    ``estimator_factory(config, clock)`` builds the estimator (default: OnlineEstimator);
    ``clock`` [s] times the estimator's steps; ``endpoints`` holds the bound addresses (a ``:*``
    port resolved) once started.
    """

    def __init__(self, config: NodeConfig, estimator_factory: EstimatorFactory = online_estimator,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.config = config
        self.estimator = estimator_factory(config, clock)
        self.context = zmq.Context()
        self.log: LogWriter | None = None
        self.stop_requested = threading.Event()
        self.endpoints: dict[str, str] = {}
        self._sockets: list[zmq.Socket] = []
        self.authenticator: ThreadAuthenticator | None = None
        try:
            self._bind()
            path = config.node.log.resolved_path()
            if path is not None:
                params = config.node.log
                self.log = LogWriter(path, log_header(config), params.flush_records, params.flush_seconds,
                                     rotate_bytes=None if params.rotate_mb is None else int(1e6 * params.rotate_mb),
                                     rotate_seconds=None if params.rotate_minutes is None
                                     else 60.0 * params.rotate_minutes)
        except BaseException:
            self._close_sockets()
            raise
        self.plot_map = PlotMap.for_mechanism(config.mech)
        self.intake = intake_for(config, self.estimator, self.log, publish=self._send_estimate)
        lag = config.node.max_lag_s
        self.watch = BacklogWatch(lag) if lag is not None else None
        self.started_at = self._status_at = time.monotonic()

    def _socket(self, kind: int, name: str, options: dict[int, int] | None = None) -> zmq.Socket:
        endpoint, where = getattr(self.config.node, name), f"{self.config.source}: node.{name}"
        check_ipc_free(endpoint, where)
        socket = self.context.socket(kind)
        self._sockets.append(socket)
        for option, value in (options or {}).items():
            socket.setsockopt(option, value)
        if self.config.node.curve is not None:
            curve_server(socket, key_pair(self.config.node.curve.secret_key))
        elif beyond_loopback(endpoint):
            LOGGER.warning("node: %s binds %s beyond loopback without CURVE: any host that reaches it can send "
                           "readings and commands (node.curve)", name, endpoint)
        try:
            socket.bind(endpoint)
        except zmq.ZMQError as exc:
            raise MbstateError(f"{where}: cannot bind {endpoint} ({exc})") from None
        self.endpoints[name] = socket.getsockopt_string(zmq.LAST_ENDPOINT)
        return socket

    def _bind(self) -> None:
        params = self.config.node
        self.context.setsockopt(zmq.LINGER, 0)
        if params.curve is not None:
            self.authenticator = ThreadAuthenticator(self.context)
            self.authenticator.start()
            self.authenticator.configure_curve(domain="*", location=str(params.curve.clients))
        self.sub = self._socket(zmq.SUB, "sub", {zmq.RCVHWM: params.queue, zmq.MAXMSGSIZE: params.max_message_bytes})
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.monitor = self.sub.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._sockets.append(self.monitor)
        self.pub = self._socket(zmq.PUB, "pub", {zmq.LINGER: 500})  # the last status may still reach subscribers
        self.control = self._socket(zmq.REP, "control", {zmq.MAXMSGSIZE: params.max_message_bytes})
        self.plot = self._socket(zmq.PUB, "plot") if params.plot is not None else None
        self.poller = zmq.Poller()
        for socket in (self.sub, self.control, self.monitor):
            self.poller.register(socket, zmq.POLLIN)

    def __enter__(self) -> Node:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, scheduling: LoopScheduling = LoopScheduling()) -> None:
        """Serve until ``shutdown``, SIGINT / SIGTERM or :meth:`stop` (thread-safe), the loop's thread at
        ``scheduling`` (estimator.node.realtime)."""
        restore = self._install_signal_handlers()
        LOGGER.info("node: input %s, estimates %s, control %s%s%s", self.endpoints["sub"], self.endpoints["pub"],
                    self.endpoints["control"], f", plot {self.endpoints['plot']}" if "plot" in self.endpoints else "",
                    f", log {self.log.path}" if self.log else "")
        try:
            with steady_collection(), scheduled(scheduling):
                while not self.stop_requested.is_set():
                    self.step(POLL_MS)
                self.intake.finish()
        finally:
            restore()

    def stop(self) -> None:
        self.stop_requested.set()

    def step(self, timeout_ms: int) -> None:
        """One loop iteration: wait up to ``timeout_ms`` for any socket, then serve what is ready."""
        ready = dict(self.poller.poll(timeout_ms))
        if self.sub in ready:
            self._drain()
        if self.control in ready:
            self._serve_control()
        if self.monitor in ready:
            self._count_disconnects()
        if self.log is not None:
            self.log.flush_if_due()  # an idle stream is flushed too (estimator.logfile)
        if time.monotonic() - self._status_at >= self.config.node.status_period_s:
            self.pub.send(pack(self.status()))

    def _drain(self) -> None:
        for _ in range(self.config.node.drain):
            try:
                data = self.sub.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            self.intake.receive(data)
            if self.watch is not None:
                self._keep_current()

    def _keep_current(self) -> None:
        """After a message taken: skip the backlog when the node is ``max_lag_s`` behind its input, estimate
        again once no message waits (estimator.node.backlog); the decision holds from the next message on."""
        waiting = bool(self.sub.getsockopt(zmq.EVENTS) & zmq.POLLIN)
        reason = self.watch.verdict(self.intake.newest, self.intake.epoch, waiting)
        if self.intake.skipping is not None and not waiting:
            self.intake.resume()
        elif reason is not None and self.intake.skipping is None:
            self.intake.skip(reason)

    def _send_estimate(self, fields: dict[str, Any]) -> None:
        """Publish one estimate (its map from the intake, estimator.node.publishing.estimate_fields), and
        its flat map on ``node.plot``."""
        self.pub.send(pack(estimate_message(fields)))
        if self.plot is not None:
            self.plot.send_multipart((TOPIC, pack(self.plot_map(fields))))

    def _count_disconnects(self) -> None:
        while True:
            try:
                event = recv_monitor_message(self.monitor, zmq.NOBLOCK)
            except zmq.Again:
                return
            if event["event"] == zmq.EVENT_DISCONNECTED:
                self.intake.counters.disconnects += 1
                self.intake.throttle.warn("disconnect", "an input peer disconnected (a sensor stopped, or "
                                          "sent a message over max_message_bytes)", logging.INFO)

    def status(self) -> dict[str, Any]:
        """The status message (estimator.node.publishing); starts a new rate period."""
        now = time.monotonic()
        period, self._status_at = now - self._status_at, now
        return {"type": "status", "uptime_s": now - self.started_at,
                "coordinates": list(self.config.mech.coordinate_names), **self.intake.status(period)}

    def _serve_control(self) -> None:
        data = self.control.recv()
        try:
            request = unpack(data)
            got = shown(request, 80)
        except UNPACK_ERRORS as exc:
            request, got = None, str(exc)
        command = request.get("command") if isinstance(request, dict) else None
        if not isinstance(command, str) or command not in COMMANDS:
            reply = {"ok": False, "error": f"expected a msgpack map {{command: {' | '.join(COMMANDS)}}}, got {got}"}
            self.intake.counters.bad_requests += 1
            self.intake.throttle.warn("bad control request", got)
        elif command == "status":
            reply = {"ok": True, "command": command, **self.status()}
        else:
            reply = {"ok": True, "command": command}
            if command == "reset":
                self.intake.reset()
            else:
                self.stop()
            LOGGER.info("node: %s requested", command)
        self.control.send(pack(reply))

    def _install_signal_handlers(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {sig: signal.signal(sig, lambda *_: self.stop()) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        return restore

    def close(self) -> None:
        """Publish a last status, flush and close the log, close the sockets (idempotent)."""
        if self.context.closed:
            return
        try:
            self.pub.send(pack({**self.status(), "state": "stopped"}))
        finally:
            if self.log is not None:
                self.log.close()
            self._close_sockets()

    def _close_sockets(self) -> None:
        if hasattr(self, "monitor"):
            self.sub.disable_monitor()
        for socket in self._sockets:
            socket.close()
        if self.authenticator is not None:
            self.authenticator.stop()
        self.context.term()


def with_log_path(config: NodeConfig, path: str | None) -> NodeConfig:
    """The configuration with another log path (None: no recording)."""
    log = dataclasses.replace(config.node.log, path=path)
    return dataclasses.replace(config, node=dataclasses.replace(config.node, log=log))
