"""A client of a running node's control socket (a REQ; msgpack maps, estimator.node.runtime).

Every request is answered within a time limit or given up; a failed handshake (a CURVE key the node
refuses, estimator.node.client) is an MbstateError at once. ``wait_for_intake`` asks for ``status``
until the node has received a number of input messages: a sender that waits so before a command
keeps the command in its place among the messages it sent (the input and control sockets are
separate, so nothing else orders them).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import zmq

from estimator.node.client import ClientKeys, Handshake
from estimator.node.publishing import unpack
from estimator.wire import pack

POLL_S = 0.05  # [s] between two status requests while waiting


class NodeControl:
    """Requests to the node whose control socket is at ``endpoint``; replies waited for ``wait_s``;
    ``keys``: this client's CURVE keys for a node with ``node.curve``."""

    def __init__(self, context: zmq.Context, endpoint: str, wait_s: float = 5.0, keys: ClientKeys | None = None
                 ) -> None:
        self.endpoint, self.wait_s = endpoint, wait_s
        self.socket = context.socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)  # a request nobody took does not hold up closing
        self.socket.setsockopt(zmq.REQ_RELAXED, 1)  # a request without reply does not block the next one
        self.socket.setsockopt(zmq.REQ_CORRELATE, 1)
        self.handshake = Handshake(self.socket, endpoint, keys)

    def request(self, command: str) -> dict[str, Any] | None:
        """The node's reply to ``command`` (None: no reply within ``wait_s``; MbstateError: the
        handshake failed)."""
        deadline = time.monotonic() + self.wait_s
        # a REQ without a connection (its handshake failed, or no node yet) would block in send
        if not self.handshake.poll(self.wait_s, zmq.POLLOUT):
            return None
        try:
            self.socket.send(pack({"command": command}), zmq.NOBLOCK)
        except zmq.Again:  # the connection went between the poll and the send
            return None
        return unpack(self.socket.recv()) if self.handshake.poll(max(0.0, deadline - time.monotonic())) else None

    def wait_for_intake(self, count: int, stop: threading.Event | None = None, idle_s: float = 1.0) -> int | None:
        """Ask for ``status`` until the node has received ``count`` input messages in all, it received
        none more for ``idle_s`` seconds, or ``stop`` is set; its last ``received`` count (None: no
        reply, or stopped before one)."""
        stop = stop or threading.Event()
        received, progress_at = None, time.monotonic()
        while not stop.is_set():
            status = self.request("status")
            if status is None:
                return None
            if received is None or status["received"] > received:
                received, progress_at = status["received"], time.monotonic()
            if received >= count or time.monotonic() - progress_at >= idle_s or stop.wait(POLL_S):
                break
        return received
