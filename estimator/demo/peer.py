"""The demo's second process: the virtual sensors publishing to the node and a subscriber keeping its
estimates, apart from the node so that the node's loop has its process (and its GIL) to itself, as
in production.

The node's side starts it with :class:`Peer` (a context manager that always reaps the process);
the process runs ``python -m estimator.demo.peer DIR SUB PUB CONTROL [CLIENT.key_secret NODE.key]
[--tap ENDPOINT]`` (:func:`main`): DIR/readings.msgpack holds the sensor messages (a msgpack list of maps
in stamp order), SUB / PUB / CONTROL are the node's bound endpoints, the two key files the peer's CURVE
keys for a node with ``node.curve`` (estimator.node.client), ENDPOINT where the live view takes the
readings too (``mbstate demo --view``: a plain PUB connected to it sends each reading there as well).
The peer, in one thread (light: it shares the machine's cores with the node):

1. subscribes to PUB and waits for the connection's handshake (a subscription made later would miss
   the first estimates); the ZeroMQ I/O thread queues what arrives, unbounded, until step 4;
2. publishes the readings to SUB at real time by their stamps (replay.pacing; msgpack-encoded
   beforehand);
3. asks for ``status`` on CONTROL until the node has received every message sent (or received
   nothing new for a second), then for ``shutdown``;
4. reads the estimates up to the node's last status (state ``stopped``, published when the node
   closes) and writes DIR/report.msgpack: ``{sent, estimates (maps), stopped (that status or nil)}``.

SIGTERM (the node stopped for another reason) skips what is left of 2 and 3, and is ignored once the
report is written; SIGINT is ignored: the node's process owns Ctrl-C and stops the peer. Every wait
is bounded; if the node's process disappears the peer stops within ORPHAN_CHECK_S +
LAST_STATUS_WAIT_S and removes DIR.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgpack
import zmq

from estimator.errors import MbstateError
from estimator.node.client import ClientKeys, Handshake
from estimator.node.publishing import unpack
from estimator.wire import pack
from replay.node_control import NodeControl
from replay.pacing import paced
from replay.publish import connect_publisher

READINGS, REPORT = "readings.msgpack", "report.msgpack"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # where ``replay`` is importable from
CONNECT_WAIT_S = 5.0  # [s] for the node's sockets to answer
SUBSCRIPTION_MARGIN_S = 0.05  # [s] after the handshake, for the subscription to reach the node's PUB
IDLE_S = 1.0  # [s] without a new message received by the node: stop waiting for it
LAST_STATUS_WAIT_S = 3.0  # [s] for the node's last status after the shutdown
EXIT_WAIT_S = 10.0  # [s] for the peer to finish once the node has stopped
ORPHAN_CHECK_S = 0.2  # [s] between checks that the node's process is still there


def _subscribe(context: zmq.Context, endpoint: str, keys: ClientKeys | None) -> zmq.Socket:
    """A SUB connected to the node's output, once the connection is up. Its queue is unbounded (the
    ZeroMQ I/O thread keeps every estimate until the end): the peer's Python code reads nothing
    while publishing."""
    socket = context.socket(zmq.SUB)
    socket.setsockopt(zmq.RCVHWM, 0)
    socket.subscribe(b"")
    handshake = Handshake(socket, endpoint, keys)
    try:
        if not handshake.poll(CONNECT_WAIT_S, flags=0):
            raise MbstateError(f"no node publishing at {endpoint} within {CONNECT_WAIT_S:g} s")
    finally:
        handshake.close()
    time.sleep(SUBSCRIPTION_MARGIN_S)
    return socket


def _send_paced(socket: zmq.Socket, readings: list[dict], stop: threading.Event, tap: zmq.Socket | None = None
                ) -> int:
    """Send ``readings`` at real time by their stamps (msgpack-encoded before the clock starts), also on
    ``tap``; how many were sent before ``stop``."""
    packed = [pack(message) for message in readings]
    sent = 0
    for _, data in zip(paced(readings), packed):
        if stop.is_set():
            break
        socket.send(data)
        if tap is not None:
            tap.send(data)
        sent += 1
    return sent


def _shut_down_after_intake(context: zmq.Context, endpoint: str, sent: int, stop: threading.Event,
                            keys: ClientKeys | None) -> None:
    """Wait until the node has received ``sent`` messages (or none more for IDLE_S), then shut it down
    (neither once ``stop`` is set: the node stopped already)."""
    control = NodeControl(context, endpoint, CONNECT_WAIT_S, keys)
    control.wait_for_intake(sent, stop, IDLE_S)
    if not stop.is_set():
        control.request("shutdown")


def _collect(socket: zmq.Socket) -> tuple[list[dict], dict | None]:
    """The estimates received, up to the node's last status (waited for LAST_STATUS_WAIT_S at most),
    and that status (None if it did not come)."""
    estimates, deadline = [], time.monotonic() + LAST_STATUS_WAIT_S
    while socket.poll(max(0, int(1000 * (deadline - time.monotonic())))):
        message = unpack(socket.recv())
        if message.get("type") == "estimate":
            estimates.append(message)
        elif message.get("state") == "stopped":
            return estimates, message
    return estimates, None


def run_peer(readings: list[dict], sub: str, pub: str, control: str, stop: threading.Event,
             keys: ClientKeys | None = None, tap: str | None = None) -> dict[str, Any]:
    """Steps 1–4 of the module docstring, in one thread (a CURVE client with ``keys``; the readings also
    to ``tap``); the report."""
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    try:
        subscriber = _subscribe(context, pub, keys)
        publisher = connect_publisher(context, sub, CONNECT_WAIT_S, keys)
        tapped = None
        if tap is not None:
            tapped = context.socket(zmq.PUB)
            tapped.connect(tap)
        sent = _send_paced(publisher, readings, stop, tapped)
        _shut_down_after_intake(context, control, sent, stop, keys)
        estimates, stopped = _collect(subscriber)
        return {"sent": sent, "estimates": estimates, "stopped": stopped}
    finally:
        context.destroy(linger=0)  # the node has every reading it will get


def _watch_parent(parent: int, stop: threading.Event, orphaned: threading.Event) -> None:
    while not stop.wait(ORPHAN_CHECK_S):
        if os.getppid() != parent:
            orphaned.set()
            stop.set()


def main(argv: list[str] | None = None) -> int:
    """``python -m estimator.demo.peer DIR SUB PUB CONTROL [CLIENT.key_secret NODE.key] [--tap ENDPOINT]``
    (see the module docstring)."""
    argv = list(argv if argv is not None else sys.argv[1:])
    tap = None
    if "--tap" in argv:
        at = argv.index("--tap")
        tap = argv[at + 1]
        del argv[at:at + 2]
    directory, sub, pub, control, *key_files = argv
    stop, orphaned = threading.Event(), threading.Event()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=_watch_parent, args=(os.getppid(), stop, orphaned), daemon=True).start()
    readings = msgpack.unpackb((Path(directory) / READINGS).read_bytes(), raw=False)
    try:
        report = run_peer(readings, sub, pub, control, stop, ClientKeys.load(*key_files) if key_files else None, tap)
    except MbstateError as exc:
        print(f"mbstate demo (sensor process): error: {exc}", file=sys.stderr)
        return 2
    finally:
        # the node's side may ask it to finish (SIGTERM) just as it finishes by itself: ignored from here on,
        # since the interpreter's shutdown gives a signal with a Python handler back its default action (exit)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if orphaned.is_set():  # nobody will read the report or remove the directory
        shutil.rmtree(directory, ignore_errors=True)
        return 1
    (Path(directory) / REPORT).write_bytes(pack(report))
    return 0


class Peer:
    """The peer process, from the node's side: started on the node's endpoints (with ``key_files``,
    CLIENT.key_secret and NODE.key: a CURVE client), reaped on exit (killed if still running) with
    its files; ``tap``: where the readings go as well (the live view's endpoint)."""

    def __init__(self, readings: list[dict], endpoints: dict[str, str], key_files: tuple[str, str] | tuple = (),
                 tap: str | None = None) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="mbstate-demo-")
        path = Path(self._directory.name)
        (path / READINGS).write_bytes(pack(readings))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "estimator.demo.peer", str(path), endpoints["sub"], endpoints["pub"],
             endpoints["control"], *key_files, *(("--tap", tap) if tap else ())], cwd=PACKAGE_ROOT,
            stdin=subprocess.DEVNULL)

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait(self, timeout: float) -> None:
        """Return when the process has ended or after ``timeout`` [s]."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def report(self) -> dict[str, Any]:
        """The report, once the node has stopped: the peer is told to finish (SIGTERM) and waited for."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            raise MbstateError(f"the sensor process did not finish within {EXIT_WAIT_S:g} s") from None
        path = Path(self._directory.name) / REPORT
        if code != 0 or not path.is_file():
            raise MbstateError(f"the sensor process failed (exit code {code})")
        return msgpack.unpackb(path.read_bytes(), raw=False)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._directory.cleanup()


if __name__ == "__main__":
    sys.exit(main())
