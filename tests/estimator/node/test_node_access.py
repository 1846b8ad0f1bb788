"""Access to the node (estimator.node.access) over real sockets: CURVE admits listed clients only,
binding beyond loopback without CURVE warns, a live node's ipc:// endpoints are not taken over,
and ``mbstate keys`` makes the pairs."""

from __future__ import annotations

import logging

import msgpack
import pytest
import zmq
from conftest import MECHANISMS, cli_exit_code
from fake_estimator import FakeConfig, fake_factory
from node_harness import SENSORS, RunningNode, curve_config, encoder, keys_of, write_config

from estimator.errors import MbstateError
from estimator.node.access import beyond_loopback, make_key_pair
from estimator.node.client import ClientKeys, curve_client
from estimator.node.config import load_node_config
from estimator.node.runtime import Node
from replay.node_control import NodeControl


def test_keys_makes_a_pair_once(tmp_path, capsys) -> None:
    assert cli_exit_code(["keys", "node", "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "node.key").is_file() and (tmp_path / "node.key_secret").stat().st_mode & 0o077 == 0
    assert cli_exit_code(["keys", "node", "--dir", str(tmp_path)]) == 2
    assert "exists already" in capsys.readouterr().err


def client(context: zmq.Context, kind: int, endpoint: str, tmp_path, secret: str) -> zmq.Socket:
    socket = context.socket(kind)
    curve_client(socket, ClientKeys.load(tmp_path / secret, tmp_path / "node" / "node.key"))
    socket.connect(endpoint)
    return socket


def test_curve_admits_the_listed_clients_only(tmp_path) -> None:
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    with Node(curve_config(tmp_path), fake_factory) as node:
        stranger = client(context, zmq.REQ, node.endpoints["control"], tmp_path, "strangers/stranger.key_secret")
        stranger.send(msgpack.packb({"command": "shutdown"}))
        plain = context.socket(zmq.REQ)
        plain.connect(node.endpoints["control"])
        plain.send(msgpack.packb({"command": "shutdown"}))
        publisher = client(context, zmq.PUB, node.endpoints["sub"], tmp_path, "clients/sensor.key_secret")
        control = client(context, zmq.REQ, node.endpoints["control"], tmp_path, "clients/sensor.key_secret")
        status: dict = {"accepted": 0}
        for k in range(200):  # until a reading got through (the PUB's first ones go before its handshake)
            publisher.send(msgpack.packb(encoder(0.01 * k, k)))
            control.send(msgpack.packb({"command": "status"}))
            while not control.poll(0):
                node.step(20)
            status = msgpack.unpackb(control.recv())
            if status["accepted"]:
                break
        assert not stranger.poll(100) and not plain.poll(100)  # their handshakes failed: no shutdown
        assert status["ok"] and not node.stop_requested.is_set() and status["accepted"] >= 1
    context.destroy()


@pytest.mark.parametrize("client, server, error", [
    ("strangers/stranger", "node/node", r"the node at \S+ refused this client's key \(its public key is not in"),
    ("clients/sensor", "strangers/stranger",
     r"closed the CURVE handshake: the server key \(--server-key\) is not the node's public key, or the node does not"),
    (None, None, r"the node at \S+ (uses CURVE|closed the handshake \(if it uses CURVE): give --curve-key "
                 r"CLIENT\.key_secret and --server-key NODE\.key"),
])
def test_the_control_client_tells_a_failed_handshake(tmp_path, client, server, error) -> None:
    with RunningNode(curve_config(tmp_path), fake_factory, keys_of(tmp_path)) as running:
        keys = keys_of(tmp_path, client, server) if client else None
        control = NodeControl(running.context, running.node.endpoints["control"], 5.0, keys)
        with pytest.raises(MbstateError, match=error):
            control.request("shutdown")
        assert running.request({"command": "status"})["ok"] and not running.node.stop_requested.is_set()


def test_the_control_client_with_curve_asks_status_and_shuts_the_node_down(tmp_path) -> None:
    with RunningNode(curve_config(tmp_path), fake_factory, keys_of(tmp_path)) as running:
        control = NodeControl(running.context, running.node.endpoints["control"], 5.0, keys_of(tmp_path))
        running.send(*(encoder(0.01 * k, k) for k in range(20)))
        assert control.wait_for_intake(20) == 20
        assert control.request("shutdown") == {"ok": True, "command": "shutdown"}
        running.thread.join(10.0)
        assert not running.thread.is_alive()


def test_a_curve_client_of_a_node_without_curve_is_told(tmp_path) -> None:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}"), FakeConfig.from_section)
    make_key_pair(tmp_path / "node", "node")
    make_key_pair(tmp_path / "clients", "sensor")
    with RunningNode(config, fake_factory) as running:
        control = NodeControl(running.context, running.node.endpoints["control"], 5.0, keys_of(tmp_path))
        with pytest.raises(MbstateError, match=r"the node at \S+ (does not use CURVE: connect without --curve-key|"
                                               r"closed the CURVE handshake: .* or the node does not use CURVE)"):
            control.request("status")


def test_a_curve_key_that_is_not_a_secret_key_is_a_load_error(tmp_path) -> None:
    make_key_pair(tmp_path, "node")
    (tmp_path / "clients").mkdir()
    with pytest.raises(MbstateError, match=r"node\.key: holds a public key only"):
        load_node_config(write_config(tmp_path, node="curve: {secret_key: node.key, clients: clients}"),
                         FakeConfig.from_section)
    with pytest.raises(MbstateError, match=r"node\.curve\.clients: must be a directory holding the clients'"):
        load_node_config(write_config(tmp_path, node="curve: {secret_key: node.key_secret, clients: clients}"),
                         FakeConfig.from_section)


@pytest.mark.parametrize("endpoint, beyond", [
    ("tcp://127.0.0.1:5555", False), ("tcp://localhost:*", False), ("tcp://[::1]:5555", False),
    ("ipc:///tmp/x", False), ("tcp://*:5555", True), ("tcp://0.0.0.0:5555", True), ("tcp://192.168.1.4:*", True),
])
def test_beyond_loopback(endpoint, beyond) -> None:
    assert beyond_loopback(endpoint) is beyond


def test_binding_every_interface_without_curve_warns(tmp_path, caplog) -> None:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}", "sub: 'tcp://0.0.0.0:*'"),
                              FakeConfig.from_section)
    with caplog.at_level(logging.WARNING, logger="mbstate.node"), Node(config, fake_factory):
        pass
    warnings = [r.getMessage() for r in caplog.records if "beyond loopback" in r.getMessage()]
    assert len(warnings) == 1 and "tcp://0.0.0.0:*" in warnings[0]


def test_a_second_node_on_the_same_ipc_endpoints_is_refused(tmp_path) -> None:
    text = (f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\nsensors: {SENSORS}\nestimator: {{rate: 100}}\n"
            f"node: {{sub: 'ipc://{tmp_path}/sub', pub: 'ipc://{tmp_path}/pub', control: 'ipc://{tmp_path}/control', "
            f"log: {{path: null}}}}\n")
    (tmp_path / "ipc.yaml").write_text(text, encoding="utf-8")
    config = load_node_config(tmp_path / "ipc.yaml", FakeConfig.from_section)
    with Node(config, fake_factory):
        with pytest.raises(MbstateError, match=rf"node\.sub: ipc://{tmp_path}/sub is served by a running process"):
            Node(config, fake_factory)
    with Node(config, fake_factory):  # the first one has gone: its paths are free again
        pass
