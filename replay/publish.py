"""Publishing sensor messages over ZeroMQ, as sensors do: a PUB socket connected to the node's input.

The socket is an XPUB so that the publisher can wait until the node's subscription has arrived
before sending: ZeroMQ drops what a PUB sends before then (the "slow joiner"). Messages are the
maps of sensors.messages (or whatever a log recorded, malformed ones included), msgpack-encoded.

A log's control records (a ``reset`` the node carried out) are ``Command`` items among the
messages: each goes to the node's control socket once the node has received every message sent
before it (replay.node_control), so it takes effect at its recorded place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from estimator.errors import MbstateError
from estimator.logfile import LogStream
from estimator.node.client import ClientKeys, Handshake
from estimator.node.intake import RESUME, SKIP
from estimator.wire import pack
from replay.node_control import NodeControl
from replay.pacing import paced


def connect_publisher(context: zmq.Context, endpoint: str, wait_s: float = 5.0, keys: ClientKeys | None = None,
                      hwm: int = 100_000) -> zmq.Socket:
    """An XPUB connected to ``endpoint`` (a CURVE client with ``keys``), returned once a subscriber
    has subscribed (MbstateError after ``wait_s`` seconds without one, or when the handshake fails).
    ``hwm``: its send high-water mark [messages], beyond which it drops (large by default: a log
    re-sent should arrive whole)."""
    socket = context.socket(zmq.XPUB)
    socket.setsockopt(zmq.LINGER, 2000)
    socket.setsockopt(zmq.SNDHWM, hwm)
    try:
        handshake = Handshake(socket, endpoint, keys)
        try:
            subscribed = handshake.poll(wait_s)
        finally:
            handshake.close()
        if not subscribed:
            raise MbstateError(f"no subscriber at {endpoint} within {wait_s:g} s (is the node running?)")
    except MbstateError:
        socket.close()
        raise
    socket.recv()  # the subscription
    return socket


DECISIONS = (SKIP, RESUME)  # control records of the node's own decisions, not commands


@dataclass(frozen=True)
class Command:
    """A command for the node's control socket, in its place among the messages (a log's control record)."""

    name: str


def publish(messages: Iterable[Any], endpoint: str, speed: float | None = 1.0,
            stop: threading.Event | None = None, wait_s: float = 5.0, control: str | None = None,
            keys: ClientKeys | None = None) -> int:
    """Send ``messages`` (msgpack-encoded; bytes as they are) to ``endpoint`` at ``speed`` times real
    time by their stamps (None: as fast as possible), one by one as the iterable gives them, and each
    ``Command`` among them to the node's ``control`` endpoint (module docstring; this publisher
    must then be the node's only input). The messages are not looked at ahead (a log streams), so
    with ``control`` given the node's count of received messages is asked for before the first
    message, whether a command comes or not; returns how many messages were sent. ``stop`` ends it
    early; ``keys``: this client's CURVE keys (a node with ``node.curve``). MbstateError: no node,
    a failed handshake, no reply from ``control``, or a command that cannot be carried out in its
    place."""
    context = zmq.Context()
    try:
        socket = connect_publisher(context, endpoint, wait_s, keys)
        node = NodeControl(context, control, wait_s, keys) if control is not None else None
        first = _received(node) if node else 0  # before this publisher's messages
        sent = 0
        for message in paced(messages, speed, stop) if speed else messages:
            if isinstance(message, Command):
                if node is None:
                    raise MbstateError("the messages hold commands for the node (a log's resets), but no control "
                                       "endpoint was given")
                _carry_out(node, message.name, first + sent, stop)
            else:
                socket.send(message if isinstance(message, bytes) else pack(message))
                sent += 1
        return sent
    finally:
        context.destroy()  # closes the socket after its linger: queued messages still go out


def _no_reply(node: NodeControl) -> MbstateError:
    return MbstateError(f"no reply from the node's control endpoint {node.endpoint} within {node.wait_s:g} s")


def _received(node: NodeControl) -> int:
    """The number of input messages the node has received."""
    status = node.request("status")
    if status is None:
        raise _no_reply(node)
    return status["received"]


def _carry_out(node: NodeControl, command: str, count: int, stop: threading.Event | None) -> None:
    """Request ``command`` once the node has received ``count`` input messages in all."""
    received = node.wait_for_intake(count, stop)
    if stop is not None and stop.is_set():
        return
    if received is None:
        raise _no_reply(node)
    if received < count:
        raise MbstateError(f"the node at {node.endpoint} received {received} of the {count} messages sent before "
                           f"a '{command}', which was therefore not sent")
    reply = node.request(command)
    if reply is None or not reply.get("ok"):
        raise MbstateError(f"the node at {node.endpoint} did not carry out '{command}' (reply: {reply})")


def log_messages(paths: str | Path | Sequence[str | Path], warn: Callable[[str], None] = lambda line: None
                 ) -> Iterator[Any]:
    """The messages a log (or a stream of logs, estimator.logfile) recorded, in order, read as they are sent:
    reading maps, the bytes of raw records and a ``Command`` for each control record but the node's
    own skip decisions (the node receiving them decides its own); ``warn`` gets the reading's warnings."""
    for kind, body in LogStream(paths, warn).inputs():
        if kind == "control" and body["command"] in DECISIONS:
            continue
        yield body if kind == "reading" else body["data"] if kind == "raw" else Command(body["command"])


def has_commands(paths: str | Path | Sequence[str | Path]) -> bool:
    """Whether a log (or stream of logs) holds commands for the node (control records other than its
    own skip decisions): a pass over it, record by record."""
    return any(kind == "control" and body["command"] not in DECISIONS for kind, body in LogStream(paths))
