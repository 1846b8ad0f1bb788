"""The node's commands through ``mbstate``: demo, run, replay, publish, echo and ``simulate --publish``."""

from __future__ import annotations

import contextlib
import importlib.util
import functools
import json
import os
import signal
import threading
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq
from conftest import MECHANISMS, REPO, cli_exit_code, read_csv
from fake_estimator import fake_factory
from node_harness import RunningNode, bound_sub, curve_config, encoder, keys_of

from estimator.demo.run import run_demo, summary_text
from estimator.logfile import LogWriter
from estimator.node.intake import online_estimator
from estimator.node.publishing import estimate_fields, estimate_message
from estimator.online.interface import StepEstimate

EXAMPLE = str(REPO / "configs" / "estimator" / "fourbar.yaml")


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


def test_demo_json_summary(capsys) -> None:
    assert cli_exit_code(["demo", "--duration", "0.5", "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert "first run compiles the numeric kernels" in err  # progress goes to stderr, the JSON alone to stdout
    assert summary["received"] == summary["readings_sent"] > 1000 and not summary["interrupted"]
    assert summary["dropped"] == summary["malformed"] == summary["late"] == 0
    assert summary["accepted"] + summary["skipped"] == summary["received"]
    # every step, unless the node fell node.max_lag_s behind its input (a loaded machine) and skipped readings
    assert summary["steps"] >= (465 if summary["skipped"] == 0 else 1)
    assert summary["estimates_received"] == summary["steps"]
    assert summary["latency_ms"].keys() == {"p50", "p99", "max"} and 0.0 < summary["latency_ms"]["p50"]
    # the demo measures ~0.5 mm, 5 mm/s, 1 mrad and 0.2 N·m on 5 s; loose bounds against a broken pipeline
    errors = summary["rmse"]
    assert errors["q"] < 5e-3 and errors["qd"] < 0.1 and errors["angle"] < 0.02 and errors["force"] < 5.0
    text = summary_text(summary).splitlines()
    assert [line.split(":")[0].strip() for line in text[1:]] == ["node", "RMSE against the simulation", "messages"]
    assert f"{summary['steps']} steps" in text[1] and "angles" in text[2] and "drive torques" in text[2]
    assert _peer_processes() == []


def test_demo_on_the_panda_arm(capsys) -> None:
    # a URDF arm through the same node, sockets and summary: seven encoders, seven unknown drive torques
    assert cli_exit_code(["demo", "--mechanism", "panda", "--duration", "0.5", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mechanism"] == "panda" and not summary["interrupted"]
    assert summary["received"] == summary["readings_sent"] > 3000  # 7 encoders at 1 kHz
    assert summary["dropped"] == summary["malformed"] == summary["late"] == 0 and summary["steps"] >= 1
    errors = summary["rmse"]
    assert errors["q"] is None and errors["qd"] is None  # no point coordinates
    # ~5e-5 rad, 0.015 rad/s and 0.3 N·m on 3 s; loose bounds against a broken pipeline
    assert errors["angle"] < 1e-3 and errors["rate"] < 0.2 and errors["force"] < 5.0
    assert summary_text(summary).startswith("Panda arm demo:")
    assert cli_exit_code(["demo", "--mechanism", "kuka"]) == 2  # not a machine of the demo: argparse's line


def test_demo_on_the_delta_robot(capsys) -> None:
    # a closed chain (five loop closures, 24 joints, 9 freedoms) through the same node, sockets and summary:
    # three motor encoders and a platform IMU, the three motor torques unknown
    assert cli_exit_code(["demo", "--mechanism", "delta", "--duration", "0.5", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mechanism"] == "delta" and not summary["interrupted"]
    assert summary["received"] == summary["readings_sent"] > 2500  # 3 encoders, a gyroscope, an accelerometer at 1 kHz
    assert summary["dropped"] == summary["malformed"] == summary["late"] == 0 and summary["steps"] >= 1
    errors = summary["rmse"]
    assert errors["q"] is None and errors["qd"] is None  # no point coordinates
    # ~1e-4 rad, 3e-3 rad/s and 1e-3 N·m on 2 s unloaded (0.26 N·m of torque range, 0.6 N·m of gravity
    # load); loose bounds against a broken pipeline, as a loaded machine makes the node skip readings
    assert errors["angle"] < 0.05 and errors["rate"] < 0.5 and errors["force"] < 0.2
    assert summary_text(summary).startswith("Delta robot demo:")


class InterruptedAfter:
    """The online estimator, but SIGINT to this process once the stamps pass ``t`` (later than the
    demo's warm-up, so the node is running and handles it)."""

    def __init__(self, t: float, config, clock) -> None:
        self.inner, self.t, self.sent = online_estimator(config, clock), t, False

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def advance(self, t: float, final: bool = False):
        if t > self.t and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        return self.inner.advance(t, final)


PEER = "estimator.demo.peer"  # the module the demo runs as its sensor process (python -m)


def _peer_processes() -> list[int]:
    """This process's children that run the demo's sensor process or are left unreaped (Linux /proc)."""
    assert importlib.util.find_spec(PEER) is not None  # so that the match below can find a peer at all
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
            if int(parent) == os.getpid() and (state == "Z" or PEER.encode() in (stat.parent / "cmdline").read_bytes()):
                children.append(int(stat.parent.name))
    return children


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts child processes through /proc")
def test_demo_interrupted_stops_early_and_reaps_its_sensor_process() -> None:
    summary = run_demo(3.0, estimator_factory=functools.partial(InterruptedAfter, 0.4))
    # the 3 s of readings (3000 of the crank encoder alone) were cut short after ~0.4 s: no timing
    # bound here (a loaded machine stretches the shutdown), the count shows it
    assert summary["interrupted"] and 0 < summary["readings_sent"] < 3000
    assert summary["received"] <= summary["readings_sent"] and "before the interruption" in summary_text(summary)
    assert 0 < summary["steps"] < 1000 and summary["dropped"] == summary["malformed"] == 0
    assert _peer_processes() == []


def test_a_demo_longer_than_memory_holds_is_one_line_and_exit_2(capsys) -> None:
    assert cli_exit_code(["demo", "--duration", "1e9"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--duration: at most 600 s" in err and len(err.splitlines()) == 1


def test_run_with_a_wrong_configuration_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    config = tmp_path / "node.yaml"
    config.write_text(f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\n"
                      f"sensors: {REPO / 'configs/sensors/fourbar.yaml'}\n"
                      "node: {queue: -1}\n", encoding="utf-8")
    assert cli_exit_code(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err == f"mbstate run: error: {config}: node.queue: must be a whole number in [1, 10000000], got -1\n"
    assert cli_exit_code(["run"]) == 2
    assert "the following arguments are required: --config" in capsys.readouterr().err


def test_echo_prints_estimates_and_status(context, capsys) -> None:
    pub = context.socket(zmq.PUB)
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    estimate = StepEstimate(step=3, t=0.003, q=np.arange(5.0), qd=np.zeros(5), qdd=np.zeros(5), lam=np.zeros(4),
                            forces={"motor": 12.5}, sigma=None, latency=4e-4, update_steps=1, flags=("degraded",))
    thread, codes = in_thread(["echo", "--endpoint", endpoint, "--count", "2", "--timeout", "5"])
    while thread.is_alive():  # PUB drops until the subscriber is there: keep sending
        pub.send(msgpack.packb(estimate_message(estimate_fields(estimate))))
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


def test_publish_of_a_reset_without_a_node_at_the_control_endpoint_is_one_line(tmp_path, context, capsys) -> None:
    log = tmp_path / "in.log"
    with LogWriter(log, {}) as writer:
        writer.reading(encoder(0.0, 0))
        writer.write("control", {"command": "reset"})
    sub, endpoint = bound_sub(context)
    thread, codes = in_thread(["publish", str(log), "--endpoint", endpoint, "--control", "tcp://127.0.0.1:9",
                               "--wait", "0.3"])
    assert drain(sub, thread) == [] and codes == [2]  # the control socket is asked before anything is sent
    err = capsys.readouterr().err
    assert err == "mbstate publish: error: no reply from the node's control endpoint tcp://127.0.0.1:9 within 0.3 s\n"


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
    assert len(table.t) >= 165 and set(table.forces) == {"theta0"}  # from the middle of the start-up span
    np.testing.assert_allclose(table.forces["theta0"][50:], 20.0, atol=2.0)  # the constant motor torque
    assert cli_exit_code(["simulate", str(MECHANISMS / "fourbar_crank.yaml"), "--sensors",
                          str(REPO / "configs/sensors/fourbar.yaml"), "--t-end", "0.1"]) == 2
    assert "give --out LOG, --publish [ENDPOINT] or both" in capsys.readouterr().err


def test_publish_and_echo_with_curve(tmp_path, capsys) -> None:
    keys = ["--curve-key", str(tmp_path / "clients/sensor.key_secret"), "--server-key", str(tmp_path / "node/node.key")]
    with RunningNode(curve_config(tmp_path), fake_factory, keys_of(tmp_path)) as running:
        endpoints = running.node.endpoints
        echo, echo_codes = in_thread(["echo", "--endpoint", endpoints["pub"], "--count", "3", "--json",
                                      "--timeout", "5", *keys])
        sent = 0
        while echo.is_alive() and sent < 2000:  # the node's PUB drops until echo's subscription is there
            log = tmp_path / f"in{sent}.log"
            with LogWriter(log, {}) as writer:
                for k in range(sent, sent + 20):
                    writer.reading(encoder(0.01 * k, k))
            assert cli_exit_code(["publish", str(log), "--endpoint", endpoints["sub"], "--fast", *keys]) == 0
            sent += 20
        echo.join(10.0)
        assert echo_codes == [0] and running.wait_received(sent)["accepted"] == sent
    out = capsys.readouterr().out.splitlines()
    published = [line for line in out if line.startswith("published")]
    assert published == [f"published 20 messages to {endpoints['sub']}"] * (sent // 20)
    echoed = [json.loads(line) for line in out if line.startswith("{")]
    assert [m["type"] for m in echoed if m["type"] == "estimate"] == ["estimate"] * 3


@pytest.mark.parametrize("command", ["publish", "echo"])
def test_publish_and_echo_with_a_refused_curve_key_is_one_line(tmp_path, capsys, command) -> None:
    log = tmp_path / "in.log"
    with LogWriter(log, {}) as writer:
        writer.reading(encoder(0.0, 0))
    with RunningNode(curve_config(tmp_path), fake_factory, keys_of(tmp_path)) as running:
        endpoint = running.node.endpoints["sub" if command == "publish" else "pub"]
        argv = [command, *([str(log)] if command == "publish" else ["--timeout", "5"]), "--endpoint", endpoint]
        stranger = ["--curve-key", str(tmp_path / "strangers/stranger.key_secret"),
                    "--server-key", str(tmp_path / "node/node.key")]
        assert cli_exit_code([*argv, *stranger]) == 2
        assert capsys.readouterr().err == (f"mbstate {command}: error: the node at {endpoint} refused this client's "
                                           f"key (its public key is not in the node's node.curve.clients)\n")
        assert cli_exit_code([*argv, "--curve-key", stranger[1]]) == 2
        assert capsys.readouterr().err == f"mbstate {command}: error: --curve-key and --server-key go together\n"
        assert running.request({"command": "status"})["received"] == 0


def test_demo_with_curve() -> None:
    summary = run_demo(0.3, curve=True)
    assert summary["received"] == summary["readings_sent"] > 500 and not summary["interrupted"]
    assert summary["estimates_received"] == summary["steps"] > 0 and summary["malformed"] == 0
