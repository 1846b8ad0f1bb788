"""Who may talk to the node: optional ZeroMQ CURVE, the loopback warning, the ``ipc://`` probe.

CURVE (``node.curve``; ZeroMQ's elliptic-curve handshake, RFC 26 / CurveZMQ): every socket of the
node is a CURVE server with the node's key pair, so traffic is encrypted, and a ZAP handler
(zmq.auth.thread.ThreadAuthenticator) admits only clients whose public key is in the ``clients``
directory; anyone else's handshake fails and never reaches the node. Keys are ZeroMQ certificate
files (``mbstate keys``: NAME.key, the public half, and NAME.key_secret, both halves); a client
sets its own pair and the node's public key on its socket (estimator.node.client).

Without CURVE, any process that reaches a socket can send readings and commands: the node warns
at start for every endpoint that binds beyond loopback (:func:`beyond_loopback`). An ``ipc://``
endpoint whose socket file answers a connection belongs to a live process (another node):
:func:`check_ipc_free` refuses it, where ZeroMQ would silently take the path over.
"""

from __future__ import annotations

import os
import socket as stdsocket
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth

from estimator.errors import MbstateError

LOOPBACK_HOSTS = ("localhost", "lo", "::1")


@dataclass(frozen=True)
class CurveParams:
    """``node.curve``: ``secret_key``, the node's key pair (a NAME.key_secret file); ``clients``, a
    directory of the public keys (NAME.key files) of the clients allowed to connect."""

    secret_key: Path
    clients: Path


def key_pair(path: str | Path) -> tuple[bytes, bytes]:
    """(public, secret) key of a ZeroMQ certificate file holding both halves; MbstateError otherwise."""
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as exc:
        raise MbstateError(f"{path}: not a ZeroMQ key file ({str(exc)[:80]})") from None
    if secret is None:
        raise MbstateError(f"{path}: holds a public key only; the secret key file (.key_secret) is needed")
    return public, secret


def public_key(path: str | Path) -> bytes:
    """The public key of a ZeroMQ certificate file (either half)."""
    try:
        return zmq.auth.load_certificate(path)[0]
    except (OSError, ValueError) as exc:
        raise MbstateError(f"{path}: not a ZeroMQ key file ({str(exc)[:80]})") from None


def make_key_pair(directory: str | Path, name: str) -> tuple[Path, Path]:
    """Write NAME.key (public) and NAME.key_secret (both halves, readable by the owner only) into
    ``directory``; (public path, secret path). MbstateError if either exists."""
    directory = Path(directory)
    public, secret = directory / f"{name}.key", directory / f"{name}.key_secret"
    for path in (public, secret):
        if path.exists():
            raise MbstateError(f"{path}: exists already (remove it to make a new pair)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        made = zmq.auth.create_certificates(directory, name)
        os.chmod(made[1], 0o600)
    except OSError as exc:
        raise MbstateError(f"{directory}: cannot write keys ({exc.strerror})") from None
    return Path(made[0]), Path(made[1])


def curve_server(socket: zmq.Socket, keys: tuple[bytes, bytes]) -> None:
    """Make ``socket`` a CURVE server with the key pair ``keys`` (before it binds)."""
    socket.curve_publickey, socket.curve_secretkey = keys
    socket.curve_server = True


def beyond_loopback(endpoint: str) -> bool:
    """Whether a ``tcp://`` endpoint binds an address other hosts can reach (``*``, 0.0.0.0, an
    interface or address other than loopback)."""
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rpartition(":")[0].strip("[]")
    return not (host in LOOPBACK_HOSTS or host.startswith("127."))


def check_ipc_free(endpoint: str, where: str) -> None:
    """MbstateError when an ``ipc://`` endpoint's socket file accepts a connection: a live process
    serves it. A stale file (its process died) refuses the connection and ZeroMQ replaces it."""
    if not endpoint.startswith("ipc://"):
        return
    path = endpoint[len("ipc://"):]
    address = "\0" + path[1:] if path.startswith("@") else path
    if not path.startswith("@") and not os.path.exists(path):
        return
    probe = stdsocket.socket(stdsocket.AF_UNIX, stdsocket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(address)
    except OSError:
        return
    finally:
        probe.close()
    raise MbstateError(f"{where}: {endpoint} is served by a running process already (another node?)")
