"""The node's plot stream (``node.plot``, estimator.node.plot_map) as PlotJuggler's ZeroMQ subscriber
reads it: a real SUB on 127.0.0.1 subscribed to the topic ``estimate`` gets two frames per estimate,
the topic and a flat msgpack map of text keys to floats, whose ``timestamp`` is the step's sensor time
and whose named values are those of the node's main ``estimate`` message for the same step."""

from __future__ import annotations

import time

import msgpack
import pytest
import zmq
from fake_estimator import FakeConfig, fake_factory
from node_harness import RunningNode, encoder, estimates, simulated_readings, write_config

from estimator.errors import MbstateError
from estimator.node.config import load_node_config
from estimator.node.intake import online_estimator
from estimator.node.plot_map import TOPIC, PlotMap

PLOT = "plot: 'tcp://127.0.0.1:*'"
COORDINATES = ("x1", "y1", "x2", "y2", "theta0")  # configs/mechanisms/fourbar_crank.yaml; the motor drives theta0


def plot_subscriber(running: RunningNode) -> zmq.Socket:
    """A SUB as PlotJuggler's: connected to the node's plot endpoint, subscribed to the topic."""
    socket = running.context.socket(zmq.SUB)
    socket.subscribe(TOPIC)
    socket.connect(running.node.endpoints["plot"])
    return socket


def received(socket: zmq.Socket, quiet: float = 0.3) -> list[list[bytes]]:
    """Every message (its frames) until none came for ``quiet`` seconds."""
    messages = []
    while socket.poll(int(1000 * quiet)):
        messages.append(socket.recv_multipart())
    return messages


def flat_maps(messages: list[list[bytes]]) -> list[dict]:
    """The maps of ``[topic, map]`` messages, checked for PlotJuggler: flat, text keys, float values."""
    maps = []
    for frames in messages:
        assert len(frames) == 2 and frames[0] == TOPIC
        flat = msgpack.unpackb(frames[1])
        assert isinstance(flat, dict) and all(isinstance(key, str) for key in flat)
        assert all(type(value) is float for value in flat.values()), flat  # no text, int, list, map or ext
        maps.append(flat)
    return maps


def assert_matches(flat: dict, estimate: dict) -> None:
    """The flat map holds the main message's time, state, forces and multipliers under their names."""
    assert flat["timestamp"] == estimate["t"] and flat["step"] == estimate["step"]
    for block in ("q", "qd", "qdd"):
        assert [flat[f"{block}.{name}"] for name in COORDINATES] == estimate[block]
    assert flat["Q.theta0"] == estimate["forces"]["motor"]
    assert [flat[f"lambda.{k}"] for k in range(len(estimate["lam"]))] == estimate["lam"]
    assert flat["latency_ms"] == estimate["latency_ms"] and flat["update_steps"] == estimate["update_steps"]


def test_every_estimate_is_published_as_a_topic_and_a_flat_map_of_floats(tmp_path) -> None:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}", PLOT), FakeConfig.from_section)
    readings = [encoder(0.005 * k, k) for k in range(21)]  # 0 … 100 ms: steps 0 … 10
    with RunningNode(config, fake_factory) as running:
        plot = plot_subscriber(running)
        time.sleep(0.1)  # the subscription reaches the node's plot PUB
        running.send(*readings)
        running.wait_received(len(readings))
        messages = running.collect()
        maps = flat_maps(received(plot))
    published = estimates(messages)
    assert [m["step"] for m in published] == list(range(11))
    assert len(maps) == len(published)
    for flat, estimate in zip(maps, published):
        assert_matches(flat, estimate)
        assert not any(key.endswith("sigma") or key.startswith("model.") for key in flat)  # none published


def test_with_publish_sigmas_the_map_carries_the_2_sigma_bands(tmp_path) -> None:
    readings, _, _ = simulated_readings(0.2)
    estimator = "{unknown_forces: [motor], publish_sigmas: true, latency_budget_ms: 50}"
    config = load_node_config(write_config(tmp_path, estimator, PLOT))
    with RunningNode(config, online_estimator) as running:
        plot = plot_subscriber(running)
        time.sleep(0.1)
        for k in range(0, len(readings), 50):  # in bursts, faster than real time
            running.send(*readings[k:k + 50])
            time.sleep(0.01)
        running.wait_received(len(readings), timeout=30.0)
        messages = running.collect(1.0)
        maps = flat_maps(received(plot))
    published = {m["step"]: m for m in estimates(messages)}
    assert len(maps) == len(published) > 100
    with_sigma = 0
    for flat in maps:
        estimate = published[flat["step"]]
        assert_matches(flat, estimate)
        if "sigma" not in estimate:  # σ only at degradation level 0 (configs/estimator/README.md)
            continue
        with_sigma += 1
        sigma = estimate["sigma"]
        for block, prefix in (("q", "q"), ("qd", "qd")):
            for name, value, s in zip(COORDINATES, estimate[block], sigma[block]):
                assert flat[f"{prefix}.{name}+2sigma"] == pytest.approx(value + 2 * s, rel=0, abs=1e-15)
                assert flat[f"{prefix}.{name}-2sigma"] == pytest.approx(value - 2 * s, rel=0, abs=1e-15)
        motor, s = estimate["forces"]["motor"], sigma["forces"][0]
        assert (flat["Q.theta0+2sigma"], flat["Q.theta0-2sigma"]) == pytest.approx((motor + 2 * s, motor - 2 * s))
        assert [flat[f"model.{name}"] for name in estimate.get("model", {})] == list(estimate.get("model", {}).values())
    assert with_sigma > 100


def test_a_map_of_a_truth_record_names_every_actuator_force_and_shared_coordinates_name_the_actuator() -> None:
    truth = {"t": 0.5, "q": [1.0, 2.0], "qd": [0.0, 0.0], "qdd": [0.0, 0.0], "lam": [3.0], "f": [4.0, 5.0, 6.0]}
    flat = PlotMap(("a", "b"), 1, [("left", "a"), ("right", "a"), ("drive", "b")])(truth)
    assert flat == {"timestamp": 0.5, "q.a": 1.0, "q.b": 2.0, "qd.a": 0.0, "qd.b": 0.0, "qdd.a": 0.0, "qdd.b": 0.0,
                    "Q.left": 4.0, "Q.right": 5.0, "Q.b": 6.0, "lambda.0": 3.0}


def test_the_plot_endpoint_is_optional_and_checked(tmp_path) -> None:
    assert load_node_config(write_config(tmp_path), FakeConfig.from_section).node.plot is None
    with pytest.raises(MbstateError, match="node.plot: must be a ZeroMQ endpoint"):
        load_node_config(write_config(tmp_path, node="plot: '5558'"), FakeConfig.from_section)
