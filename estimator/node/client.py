"""A client's socket to the node: optional CURVE keys, and its handshakes watched.

A CURVE handshake that fails is silent on a plain ZeroMQ socket: messages wait or vanish and the
client cannot tell a refused key from a node that is not there. :class:`Handshake` connects a
socket with a monitor (ZeroMQ's socket events) and turns the failures into one-line errors: the
node's ZAP handler refused the client's key (EVENT_HANDSHAKE_FAILED_AUTH), the server key is not
the node's (the node cannot decrypt the client's HELLO: EVENT_HANDSHAKE_FAILED_NO_DETAIL), or one
side uses CURVE and the other not (a mechanism mismatch: EVENT_HANDSHAKE_FAILED_PROTOCOL, or
EVENT_HANDSHAKE_FAILED_NO_DETAIL when the node hangs up before the client reads its error). These
do not mend by retrying, so the first one ends the wait.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.utils.monitor import recv_monitor_message

from estimator.errors import MbstateError
from estimator.node.access import key_pair, public_key

EVENTS = (zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
          | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)


@dataclass(frozen=True)
class ClientKeys:
    """A client's CURVE keys: its own pair (a NAME.key_secret whose NAME.key the node lists in
    ``node.curve.clients``) and the node's public key (NODE.key)."""

    public: bytes
    secret: bytes
    server: bytes

    @classmethod
    def load(cls, secret_key: str | Path, server_key: str | Path) -> ClientKeys:
        """Read both files; MbstateError naming a file that is not a key of the right kind."""
        return cls(*key_pair(secret_key), public_key(server_key))


def curve_client(socket: zmq.Socket, keys: ClientKeys) -> None:
    """Make ``socket`` a CURVE client with ``keys`` (before it connects)."""
    socket.curve_publickey, socket.curve_secretkey, socket.curve_serverkey = keys.public, keys.secret, keys.server


class Handshake:
    """``socket`` connected to the node at ``endpoint`` (a CURVE client when ``keys`` are given),
    its handshakes watched: :meth:`poll` raises the first failure as an MbstateError."""

    def __init__(self, socket: zmq.Socket, endpoint: str, keys: ClientKeys | None = None) -> None:
        self.socket, self.endpoint, self.keys = socket, endpoint, keys
        if keys is not None:
            curve_client(socket, keys)
        self.monitor = socket.get_monitor_socket(EVENTS)
        self.succeeded = False
        try:
            socket.connect(endpoint)
        except zmq.ZMQError as exc:
            raise MbstateError(f"cannot connect to {endpoint} ({exc})") from None

    def poll(self, timeout_s: float | None, flags: int = zmq.POLLIN) -> bool:
        """Wait up to ``timeout_s`` seconds (None: for ever) for the socket to be ready for ``flags``
        (0: for the first handshake to succeed): True once it is, False when the time is up;
        MbstateError when a handshake fails."""
        poller = zmq.Poller()
        poller.register(self.monitor, zmq.POLLIN)
        if flags:
            poller.register(self.socket, flags)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            left = None if deadline is None else max(0, int(1000 * (deadline - time.monotonic())))
            ready = dict(poller.poll(left))
            if self.monitor in ready:
                self._event(recv_monitor_message(self.monitor))
                if not flags and self.succeeded:
                    return True
            if self.socket in ready:
                return True
            if not ready and left is not None:
                return False

    def _event(self, event: dict) -> None:
        kind = event["event"]
        if kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self.succeeded = True
            return
        mismatch = (kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                    and event["value"] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        if kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            problem = ("refused this client's key (its public key is not in the node's node.curve.clients)"
                       if self.keys else "refused this client")
        elif mismatch or kind == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:  # no detail: the node hung up first
            if self.keys is None:
                hint = "give --curve-key CLIENT.key_secret and --server-key NODE.key"
                problem = f"uses CURVE: {hint}" if mismatch else f"closed the handshake (if it uses CURVE: {hint})"
            else:
                problem = ("does not use CURVE: connect without --curve-key and --server-key" if mismatch else
                           "closed the CURVE handshake: the server key (--server-key) is not the node's public key, "
                           "or the node does not use CURVE")
        else:
            problem = f"failed the handshake (ZeroMQ event {kind:#x}, value {event['value']:#x})"
        raise MbstateError(f"the node at {self.endpoint} {problem}")

    def close(self) -> None:
        """Stop watching (the socket stays open)."""
        self.socket.disable_monitor()
        self.monitor.close()
