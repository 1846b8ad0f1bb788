"""The node's commands through ``mbstate``: demo, run, replay, publish, echo and ``simulate --publish``."""

from __future__ import annotations

import json
import threading
import time

import msgpack
import numpy as np
import pytest
import zmq
from conftest import MECHANISMS, REPO, cli_exit_code
from node_harness import encoder

from estimator.node.publishing import estimate_message
from estimator.timeseries import read_csv
from replay.log import LogWriter

EXAMPLE = str(REPO / "configs" / "estimator" / "fourbar.yaml")


@pytest.fixture
def context():
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    yield context
    context.destroy()


def in_thread(argv: list[str]) -> tuple[threading.Thread, list[int]]:
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(cli_exit_code(argv)), daemon=True)
    thread.start()
    return thread, codes


def drain(sub: zmq.Socket, thread: threading.Thread) -> list:
    """What ``sub`` receives while ``thread`` runs (a SUB must be in use to hand out its subscription)."""
    received = []
    while thread.is_alive() or sub.poll(200):
        if sub.poll(50):
            received.append(msgpack.unpackb(sub.recv()))
    return received


def bound_sub(context: zmq.Context) -> tuple[zmq.Socket, str]:
    sub = context.socket(zmq.SUB)
    sub.subscribe(b"")
    sub.bind("tcp://127.0.0.1:*")
    return sub, sub.getsockopt_string(zmq.LAST_ENDPOINT)


def test_demo_json_summary(capsys) -> None:
    assert cli_exit_code(["demo", "--duration", "0.5", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["received"] == summary["readings_sent"] > 1000
    assert summary["dropped"] == summary["malformed"] == summary["late"] == 0
    assert summary["steps"] >= 490 and summary["estimates_received"] == summary["steps"]
    assert summary["latency_ms"].keys() == {"p50", "p99", "max"} and 0.0 < summary["latency_ms"]["p50"]
    # the demo measures ~0.5 mm, 5 mm/s and 0.2 N·m on 5 s; loose bounds against a broken pipeline
    assert summary["rmse"]["q"] < 5e-3 and summary["rmse"]["qd"] < 0.1 and summary["rmse"]["force"] < 5.0


def test_run_with_a_wrong_configuration_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    config = tmp_path / "node.yaml"
    config.write_text(f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\n"
                      f"sensors: {REPO / 'configs/sensors/fourbar.yaml'}\n"
                      "node: {queue: -1}\n", encoding="utf-8")
    assert cli_exit_code(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err == f"mbstate run: error: {config}: node.queue: must be an integer >= 1, got -1\n"
    assert cli_exit_code(["run"]) == 2
    assert "the following arguments are required: --config" in capsys.readouterr().err


def test_echo_prints_estimates_and_status(context, capsys) -> None:
    pub = context.socket(zmq.PUB)
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    estimate = type("Estimate", (), dict(step=3, t=0.003, q=np.arange(5.0), qd=np.zeros(5), qdd=np.zeros(5),
                                         lam=np.zeros(4), forces={"motor": 12.5}, sigma=None, latency=4e-4,
                                         flags=("degraded",)))
    thread, codes = in_thread(["echo", "--endpoint", endpoint, "--count", "2", "--timeout", "5"])
    while thread.is_alive():  # PUB drops until the subscriber is there: keep sending
        pub.send(msgpack.packb(estimate_message(estimate)))
        time.sleep(0.01)
    assert codes == [0]
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["t=0.003000 q=[0 1 2 3 4] qd=[0 0 0 0 0] motor=12.5 latency=0.400ms [degraded]"] * 2
    assert cli_exit_code(["echo", "--endpoint", endpoint, "--timeout", "0.1"]) == 2
    assert f"no message from {endpoint} within 0.1 s" in capsys.readouterr().err


def test_publish_sends_a_log(tmp_path, context, capsys) -> None:
    log = tmp_path / "in.log"
    readings = [encoder(0.001 * k, k) for k in range(30)]
    with LogWriter(log, {}) as writer:
        for reading in readings:
            writer.reading(reading)
    sub, endpoint = bound_sub(context)
    thread, codes = in_thread(["publish", str(log), "--endpoint", endpoint, "--speed", "10"])
    assert drain(sub, thread) == readings and codes == [0]
    assert f"published 30 messages to {endpoint}" in capsys.readouterr().out


def test_simulate_publish_and_replay(tmp_path, context, capsys) -> None:
    sub, endpoint = bound_sub(context)
    log = tmp_path / "sim.log"
    thread, codes = in_thread(["simulate", str(MECHANISMS / "fourbar_crank.yaml"), "--sensors",
                               str(REPO / "configs/sensors/fourbar.yaml"), "--t-end", "0.2", "--forces", "motor=20",
                               "--out", str(log), "--publish", endpoint])
    received = drain(sub, thread)
    assert codes == [0] and len(received) == 524 and {r["sensor"] for r in received} == {
        "coupler_gyro", "crank_encoder", "coupler_accelerometer", "rocker_load_cell"}
    out = tmp_path / "est.csv"
    assert cli_exit_code(["replay", str(log), "--config", EXAMPLE, "--out", str(out), "--quiet"]) == 0
    assert "replayed: " in capsys.readouterr().out
    table = read_csv(out)
    assert len(table.t) >= 190 and set(table.forces) == {"theta0"}
    np.testing.assert_allclose(table.forces["theta0"][50:], 20.0, atol=2.0)  # the constant motor torque
    assert cli_exit_code(["simulate", str(MECHANISMS / "fourbar_crank.yaml"), "--sensors",
                          str(REPO / "configs/sensors/fourbar.yaml"), "--t-end", "0.1"]) == 2
    assert "give --out LOG, --publish [ENDPOINT] or both" in capsys.readouterr().err
