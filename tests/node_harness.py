"""Helpers of the node tests: a node configuration file in tmp_path, a node running in a thread, and
sockets for a test to talk to it (publisher, subscriber, control), all on loopback with free ports."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgpack
import zmq
from conftest import MECHANISMS, REPO
from fake_estimator import FakeConfig

from estimator.demo.cases import crank_truth
from estimator.node.access import make_key_pair
from estimator.node.client import ClientKeys, curve_client
from estimator.node.config import NodeConfig, load_node_config
from estimator.node.runtime import Node
from replay.publish import connect_publisher
from sensors.virtual import simulate_readings

SENSORS = REPO / "configs" / "sensors" / "fourbar.yaml"


def write_config(tmp_path: Path, estimator: str = "{}", node: str = "", log: str | None = "run.log") -> Path:
    """A node configuration for the four-bar; ``estimator`` / ``node``: YAML flow maps (node: extra keys).
    The tests pour readings out as fast as they can, not at the pace of their stamps: the node's
    backlog watch (``max_lag_s``, estimator.node.backlog) is off unless ``node`` sets it."""
    if "max_lag_s" not in node:
        node = ", ".join(filter(None, [node, "max_lag_s: null"]))
    log_path = "null" if log is None else str(tmp_path / log)
    text = (f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\nsensors: {SENSORS}\nestimator: {estimator}\n"
            f"node: {{sub: 'tcp://127.0.0.1:*', pub: 'tcp://127.0.0.1:*', control: 'tcp://127.0.0.1:*', "
            f"log: {{path: {log_path}}}{', ' + node if node else ''}}}\n")
    path = tmp_path / "node.yaml"
    path.write_text(text, encoding="utf-8")
    return path


class RunningNode:
    """A node serving in a thread, with a subscriber, a publisher and a control socket of its own
    (CURVE clients with ``keys``). Leaving the ``with`` block stops the node (if still running) and
    closes everything."""

    def __init__(self, config: NodeConfig, factory, keys: ClientKeys | None = None) -> None:
        self.keys = keys
        self.node = Node(config, factory)
        self.thread = threading.Thread(target=self.node.run, daemon=True)
        self.context = zmq.Context()
        self.context.setsockopt(zmq.LINGER, 0)
        self.sub = self.context.socket(zmq.SUB)
        self.sub.subscribe(b"")
        self.control = self.context.socket(zmq.REQ)
        for socket, endpoint in ((self.sub, "pub"), (self.control, "control")):
            if keys is not None:
                curve_client(socket, keys)
            socket.connect(self.node.endpoints[endpoint])

    def __enter__(self) -> RunningNode:
        self.thread.start()
        time.sleep(0.1)  # the subscription reaches the node's PUB (loopback)
        self.pub = connect_publisher(self.context, self.node.endpoints["sub"], keys=self.keys)
        return self

    def __exit__(self, *exc: object) -> None:
        self.node.stop()
        self.thread.join(10.0)
        self.node.close()
        self.context.destroy()

    def send(self, *messages: object) -> None:
        """Send maps (msgpack-encoded here) or raw bytes."""
        for message in messages:
            self.pub.send(message if isinstance(message, bytes) else msgpack.packb(message))

    def request(self, command: object) -> dict:
        self.control.send(msgpack.packb(command))
        assert self.control.poll(5000), "no control reply within 5 s"
        return msgpack.unpackb(self.control.recv(), strict_map_key=False)

    def wait_received(self, count: int, timeout: float = 10.0) -> dict:
        """Poll the status until the node has received ``count`` messages; the last status."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.request({"command": "status"})
            if status["received"] >= count or time.monotonic() > deadline:
                return status
            time.sleep(0.02)

    def collect(self, quiet: float = 0.3) -> list[dict]:
        """Every message published until none came for ``quiet`` seconds."""
        messages = []
        while self.sub.poll(int(1000 * quiet)):
            messages.append(msgpack.unpackb(self.sub.recv(), strict_map_key=False))
        return messages


def curve_config(tmp_path: Path) -> NodeConfig:
    """A fake-estimator node with CURVE: its pair in tmp_path/node, one client (clients/sensor) listed,
    one (strangers/stranger) not."""
    make_key_pair(tmp_path / "node", "node")
    make_key_pair(tmp_path / "clients", "sensor")
    make_key_pair(tmp_path / "strangers", "stranger")
    return load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}",
                                         "curve: {secret_key: node/node.key_secret, clients: clients}"),
                            FakeConfig.from_section)


def keys_of(tmp_path: Path, client: str = "clients/sensor", server: str = "node/node") -> ClientKeys:
    """The CURVE keys of a client of :func:`curve_config` (``server``: the public key it takes for the node's)."""
    return ClientKeys.load(tmp_path / f"{client}.key_secret", tmp_path / f"{server}.key")


def bound_sub(context: zmq.Context) -> tuple[zmq.Socket, str]:
    """A SUB subscribed to everything, bound to a free loopback port; (socket, endpoint)."""
    sub = context.socket(zmq.SUB)
    sub.subscribe(b"")
    sub.bind("tcp://127.0.0.1:*")
    return sub, sub.getsockopt_string(zmq.LAST_ENDPOINT)


def encoder(t: float, seq: int, value: float = 0.5) -> dict:
    return {"sensor": "crank_encoder", "t": t, "seq": seq, "value": value}


def simulated_readings(duration: float, seed: int = 1) -> tuple[list[dict], object, object]:
    """The example node's sensor messages over ``duration`` [s] of the demo's crank motion, the truth and
    the configuration (configs/estimator/fourbar.yaml)."""
    config = load_node_config(REPO / "configs" / "estimator" / "fourbar.yaml")
    truth = crank_truth(config.mech, duration)
    return [r.to_map() for r in simulate_readings(config.sensors.sensors, truth, seed)], truth, config


def estimates(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["type"] == "estimate"]
