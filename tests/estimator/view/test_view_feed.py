"""The view's pieces on real loopback sockets: the scene's points, a frame made from a node's stream (a PUB
standing in for the node, another for a sensor), the truth beside it, the HTTP server's page, layout and
event stream, and the ``mbstate view`` command's one-line errors."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import numpy as np
import pytest
import zmq
from conftest import MECHANISMS

from estimator.cli import main
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.node.publishing import estimate_message
from estimator.view import feed as feed_module
from estimator.view.feed import Feed, default_series, is_estimate
from estimator.view.scene import Scene
from estimator.view.server import ViewServer
from estimator.view.truth import write_truth
from estimator.wire import pack

MECH = load_mechanism(MECHANISMS / "fourbar_crank.yaml")  # q = (x1, y1, x2, y2, theta0); points A, 1, 2, B
Q = [0.6, 0.8, 1.5, 2.1, 0.93]
STATUS = {"type": "status", "state": "running", "latency_ms": {"p50": 0.2, "p99": 0.5, "max": 0.9}, "overruns": 3,
          "dropped": 1, "late": 2, "skipped": 0, "malformed": 4, "gaps": 5, "recoveries": 1,
          "estimator": {"level": 1}}


def estimate(t: float) -> dict:
    return {"type": "estimate", "step": 7, "t": t, "q": Q, "qd": [0.0] * 5, "qdd": [0.0] * 5, "lam": [0.0] * 4,
            "forces": {"motor": 12.5}, "latency_ms": 0.3, "update_steps": 1, "flags": [],
            "sigma": {"q": [1e-4, 1e-4, 1e-4, 1e-4, 2e-4], "qd": [0.0] * 5, "forces": [0.5]}}


@pytest.fixture()
def node_pub():
    """A PUB on a free loopback port, standing in for the node's output."""
    context = zmq.Context()
    socket = context.socket(zmq.PUB)
    socket.setsockopt(zmq.LINGER, 0)
    socket.bind("tcp://127.0.0.1:*")
    yield socket, socket.getsockopt_string(zmq.LAST_ENDPOINT)
    context.destroy(linger=0)


def frame_when(feed: Feed, send, ready, timeout_s: float = 5.0) -> dict:
    """Send (ZeroMQ's subscription takes a moment to reach a PUB) and make frames until ``ready(frame)``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        send()
        time.sleep(0.02)
        frame = feed.frame()
        if ready(frame):
            return frame
    raise AssertionError("no such frame")


def test_scene_points_read_q_for_moving_points_and_the_constants_for_fixed_ones():
    scene = Scene(MECH)
    assert scene.points(Q) == [[0.0, 0.0], [0.6, 0.8], [1.5, 2.1], [4.0, 0.0]]
    assert scene.layout()["bodies"] == [{"name": "crank", "points": [0, 1]}, {"name": "coupler", "points": [1, 2]},
                                        {"name": "rocker", "points": [2, 3]}]


def test_default_series_are_the_angles_and_the_actuators():
    assert default_series(MECH) == ["theta0", "motor"]


def test_a_frame_holds_the_newest_estimate_its_sigmas_the_truth_the_readings_and_the_health(node_pub, tmp_path):
    pub, endpoint = node_pub
    t = np.linspace(0.0, 1.0, 11)
    write_truth(tmp_path / "truth.msgpack", t, np.tile(Q, (11, 1)) + t[:, None], 10 * t[:, None], ["motor"])
    readings = f"ipc://{tmp_path}/readings"
    feed = Feed(MECH, endpoint, ["theta0", "motor"], readings=readings, truth=str(tmp_path / "truth.msgpack"))
    sensor = pub.context.socket(zmq.PUB)
    sensor.connect(readings)

    def send():
        pub.send(pack(STATUS))
        pub.send(pack(estimate(0.1)))
        pub.send(pack(estimate(0.4)))
        sensor.send(pack({"sensor": "crank_encoder", "t": 0.4, "seq": 1, "value": 0.92}))

    try:
        frame = frame_when(feed, send, lambda f: f["estimate"] and f["health"]["state"] == "running"
                           and f["readings"])
    finally:
        feed.close()
    assert frame["t"] == 0.4
    assert frame["estimate"]["points"][1] == [0.6, 0.8]
    assert frame["estimate"]["series"] == {"theta0": [0.93, 2e-4], "motor": [12.5, 0.5]}
    assert frame["truth"]["series"] == pytest.approx({"theta0": 0.93 + 0.4, "motor": 4.0})  # the sample at t = 0.4
    assert frame["truth"]["points"][1] == pytest.approx([1.0, 1.2])
    assert frame["readings"] == {"crank_encoder": [0.92]}
    health = frame["health"]
    assert {key: health[key] for key in ("overruns", "dropped", "late", "malformed", "gaps", "level")} == {
        "overruns": 3, "dropped": 1, "late": 2, "malformed": 4, "gaps": 5, "level": 1}
    assert health["latency_ms"]["p99"] == 0.5 and health["rate_hz"] > 0


def test_of_a_ticks_estimates_only_the_newest_is_unpacked_and_every_one_is_counted(node_pub, monkeypatch):
    assert is_estimate(pack(estimate_message({key: v for key, v in estimate(0.1).items() if key != "type"})))
    assert not is_estimate(pack(STATUS)) and not is_estimate(pack({"t": 0.1, "type": "estimate"}))
    assert not is_estimate(b"") and not is_estimate(pack("estimate"))
    pub, endpoint = node_pub
    feed = Feed(MECH, endpoint, ["theta0"])
    unpacked, unpack = [], feed_module.unpack
    monkeypatch.setattr(feed_module, "unpack", lambda data: unpacked.append(data) or unpack(data))
    try:
        frame_when(feed, lambda: pub.send(pack(estimate(0.0))), lambda f: f["estimate"])
        time.sleep(0.1)
        before = feed.frame()["estimates"]  # with what was still queued
        unpacked.clear()
        for k in range(1, 6):
            pub.send(pack(estimate(0.1 * k)))
        pub.send(pack(STATUS))
        time.sleep(0.2)
        frame = feed.frame()
    finally:
        feed.close()
    assert frame["t"] == pytest.approx(0.5) and frame["health"]["state"] == "running"
    assert len(unpacked) == 2  # the status and the newest estimate
    assert frame["estimates"] == before + 5


def test_an_unknown_series_is_one_error(node_pub):
    with pytest.raises(MbstateError, match="unknown series nope"):
        Feed(MECH, node_pub[1], ["theta0", "nope"])


def test_the_server_serves_the_page_the_layout_and_a_frame_per_tick(node_pub):
    pub, endpoint = node_pub
    feed = Feed(MECH, endpoint, ["theta0"])
    server = ViewServer(feed, "127.0.0.1", 0, rate=50.0, window_s=5.0)
    serving = threading.Thread(target=server.run)
    serving.start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url, timeout=5) as reply:
            assert b"<canvas" in reply.read()
        with urllib.request.urlopen(server.url + "layout", timeout=5) as reply:
            layout = json.load(reply)
        assert layout["series"] == ["theta0"] and layout["window_s"] == 5.0 and not layout["truth"]
        pub.send(pack(estimate(0.2)))
        with urllib.request.urlopen(server.url + "events", timeout=5) as stream:
            numbers = [json.loads(_event(stream))["frame"] for _ in range(3)]
        assert numbers == sorted(set(numbers))  # a new frame each time, in order
    finally:
        server.stop()
        serving.join(5)
        feed.close()
    assert not serving.is_alive()


def _event(stream) -> bytes:
    """The data of the next Server-Sent Event on ``stream``."""
    while not (line := stream.readline()).startswith(b"data: "):
        pass
    return line[len(b"data: "):]


@pytest.mark.parametrize(("extra", "message"), [
    (["--rate", "500"], "--rate: at most 60"),
    (["--series", "theta0,nope"], "unknown series nope"),
    ([], "node.pub tcp://127.0.0.1:* is a free port"),
])
def test_view_command_errors_are_one_line_and_exit_2(tmp_path, capsys, extra, message):
    config = tmp_path / "node.yaml"
    config.write_text(f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\nsensors: "
                      f"{MECHANISMS.parent / 'sensors' / 'fourbar.yaml'}\nestimator: {{}}\n"
                      "node: {pub: 'tcp://127.0.0.1:*'}\n", encoding="utf-8")
    endpoint = [] if not extra else ["--endpoint", "tcp://127.0.0.1:1"]
    assert main(["view", "--config", str(config), *endpoint, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
