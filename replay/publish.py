"""Publishing sensor messages over ZeroMQ, as sensors do: a PUB socket connected to the node's input.

The socket is an XPUB so that the publisher can wait until the node's subscription has arrived
before sending: ZeroMQ drops what a PUB sends before then (the "slow joiner"). Messages are the
maps of sensors.messages (or whatever a log recorded, malformed ones included), msgpack-encoded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgpack
import zmq

from estimator.errors import MbstateError
from replay.log import read_log
from replay.pacing import paced

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5555"


def connect_publisher(context: zmq.Context, endpoint: str, wait_s: float = 5.0) -> zmq.Socket:
    """An XPUB connected to ``endpoint``, returned once a subscriber has subscribed (MbstateError
    after ``wait_s`` seconds without one)."""
    socket = context.socket(zmq.XPUB)
    socket.setsockopt(zmq.LINGER, 2000)
    socket.setsockopt(zmq.SNDHWM, 100_000)
    try:
        socket.connect(endpoint)
    except zmq.ZMQError as exc:
        socket.close()
        raise MbstateError(f"cannot connect to {endpoint} ({exc})") from None
    if not socket.poll(int(1000 * wait_s), zmq.POLLIN):
        socket.close()
        raise MbstateError(f"no subscriber at {endpoint} within {wait_s:g} s (is the node running?)")
    socket.recv()  # the subscription
    return socket


def publish(messages: Iterable[Any], endpoint: str = DEFAULT_ENDPOINT, speed: float | None = 1.0,
            stop: threading.Event | None = None, wait_s: float = 5.0) -> int:
    """Send ``messages`` (msgpack-encoded; bytes as they are) to ``endpoint`` at ``speed`` times real
    time by their stamps (None: as fast as possible); returns how many were sent. ``stop`` ends it
    early."""
    context = zmq.Context()
    try:
        socket = connect_publisher(context, endpoint, wait_s)
        sent = 0
        for message in paced(messages, speed, stop) if speed else messages:
            socket.send(message if isinstance(message, bytes) else msgpack.packb(message, use_bin_type=True))
            sent += 1
        return sent
    finally:
        context.destroy()  # closes the socket after its linger: queued messages still go out


def log_messages(path: str | Path) -> list[Any]:
    """The messages a log recorded, in order: reading maps, and the bytes of raw records (control
    records are commands to the node, not messages of its input socket)."""
    return [body if kind == "reading" else body["data"] for kind, body in read_log(path).inputs if kind != "control"]
