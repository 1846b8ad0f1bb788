"""The node end to end over real ZeroMQ sockets on loopback: estimates arrive, readings out of order
inside the window are used, bad input is counted while the node keeps running, control commands,
and a clean shutdown (SIGTERM too) that flushes the log.

The runtime tests use a stand-in estimator (tests/fake_estimator.py) whose estimates show which
readings it was given; the acceptance tests run the product's OnlineEstimator on simulated
four-bar readings.
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import time

import msgpack
import numpy as np
import pytest
import zmq
from conftest import REPO
from fake_estimator import FakeConfig, fake_factory
from node_harness import RunningNode, encoder, estimates, simulated_readings, write_config

from estimator.logfile import LogFollower, read_log
from estimator.node.config import load_node_config
from estimator.node.intake import online_estimator
from replay.publish import connect_publisher

def fake_node(tmp_path, node: str = "") -> RunningNode:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}", node), FakeConfig.from_section)
    return RunningNode(config, fake_factory)


def test_estimates_arrive_and_shutdown_flushes_the_log(tmp_path) -> None:
    readings = [encoder(0.005 * k, k) for k in range(21)]  # 0 … 100 ms
    with fake_node(tmp_path) as running:
        running.send(*readings)
        assert running.wait_received(21)["received"] == 21
        assert running.request({"command": "shutdown"}) == {"ok": True, "command": "shutdown"}
        running.thread.join(5.0)
        assert not running.thread.is_alive()
        running.node.close()
        messages = running.collect()
    published = estimates(messages)
    assert [m["step"] for m in published] == list(range(11))  # grid 100 Hz: t = 0 … 0.1 s
    assert published[-1]["t"] == pytest.approx(0.1) and published[-1]["forces"] == {"motor": pytest.approx(10.5)}
    assert set(published[0]) == {"type", "step", "t", "q", "qd", "qdd", "lam", "forces", "latency_ms", "update_steps",
                                 "flags"}
    assert messages[-1]["type"] == "status" and messages[-1]["state"] == "stopped"
    log = read_log(tmp_path / "run.log")  # flushed on shutdown, every record there
    assert log.readings == readings
    assert [e["step"] for e in log.estimates] == list(range(11)) and log.estimates[-1]["f"] == [pytest.approx(10.5)]


def test_an_idle_stream_is_flushed_on_the_timer(tmp_path) -> None:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}"), FakeConfig.from_section)
    log = dataclasses.replace(config.node.log, flush_records=100_000, flush_seconds=0.2)
    config = dataclasses.replace(config, node=dataclasses.replace(config.node, log=log))
    readings = [encoder(0.001 * k, k) for k in range(99)]
    with RunningNode(config, fake_factory) as running:
        running.send(*readings)
        assert running.wait_received(99)["received"] == 99
        follower, found = LogFollower(tmp_path / "run.log"), []
        deadline = time.monotonic() + 10.0
        while len(found) < 99 and time.monotonic() < deadline:  # no record arrives: only the timer flushes
            found += [body for kind, body in follower.poll() if kind == "reading"]
            time.sleep(0.05)
        assert running.thread.is_alive()  # still serving: nothing was flushed by a close
    assert found == readings


def test_out_of_order_reading_inside_the_window_is_used_and_an_older_one_is_late(tmp_path) -> None:
    # fake estimator: grid 100 Hz, window 5 steps (50 ms) behind the newest step done
    #
    #  stamp [ms]    0   10   20  ...  100 | 70          20
    #  encoder       x    x    x  ...   x  |
    #  gyro                                | x  (arrives after 100: inside the window -> used)
    #  load cell                           |             x  (80 ms behind -> late, counted)
    #  arrival  ---------------------------+-------------------->
    with fake_node(tmp_path) as running:
        running.send(*[encoder(0.01 * k, k, 1.0) for k in range(11)])
        running.send({"sensor": "coupler_gyro", "t": 0.07, "seq": 0, "value": 7.0},
                     {"sensor": "rocker_load_cell", "t": 0.02, "seq": 0, "value": 100.0}, encoder(0.11, 11, 1.0))
        status = running.wait_received(14)
        messages = running.collect()
    assert status["late"] == 1 and status["accepted"] == 14 and status["estimator"]["used"] == 13
    last = estimates(messages)[-1]
    assert last["step"] == 11 and last["forces"]["motor"] == pytest.approx(12 * 1.0 + 7.0)  # the gyro counted


def test_bad_messages_are_counted_and_the_node_keeps_running(tmp_path) -> None:
    bad = [b"\xc1", b"not msgpack", msgpack.packb(42),
           {"sensor": "nope", "t": 0.03, "seq": 0, "value": 1.0},
           {"sensor": "coupler_gyro", "t": 0.03, "seq": 0, "value": math.nan},
           {"sensor": "coupler_gyro", "t": 0.03, "seq": 0, "value": math.inf},
           {"sensor": "coupler_accelerometer", "t": 0.03, "seq": 0, "value": [1.0]},
           {"sensor": "coupler_gyro", "t": "soon", "seq": 0, "value": 1.0},
           {"sensor": "coupler_gyro", "t": 0.03, "seq": 0, "value": 1.0, "extra": 1},
           encoder(0.01, 99),  # stamp goes back for this sensor
           encoder(1e6, 100)]  # far in the future
    with fake_node(tmp_path, "max_message_bytes: 4096") as running:
        running.send(*[encoder(0.01 * k, k) for k in range(5)], *bad)
        huge = connect_publisher(running.context, running.node.endpoints["sub"])
        huge.send(msgpack.packb({"sensor": "coupler_gyro", "t": 0.04, "seq": 1, "value": [0.0] * 20_000}))
        status = running.wait_received(5 + len(bad))
        deadline = time.monotonic() + 5.0
        while status["disconnects"] == 0 and time.monotonic() < deadline:
            status = running.request({"command": "status"})
        running.send(*[encoder(0.01 * k, k) for k in range(5, 10)])
        after = running.wait_received(10 + len(bad))
        messages = running.collect()
    assert status["malformed_by_reason"] == {"undecodable": 2, "invalid": 6, "unknown_sensor": 1}
    assert status["dropped_by_reason"] == {"backwards": 1, "future": 1}
    assert status["disconnects"] >= 1  # the oversized message never reached the node: its sender was dropped
    # seq 99 after 4: 94 readings never seen (a gap, so the state says shedding); 5 after 100: a restart
    assert after["accepted"] == 10 and after["gaps"] == 94 and after["state"] == "shedding"
    assert estimates(messages)[-1]["t"] == pytest.approx(0.09)  # still estimating after the bad input
    log = read_log(tmp_path / "run.log")
    assert len(log.readings) == 10 + len(bad) - 3  # every map recorded, valid or not; other payloads are not


def test_after_an_outage_with_clocks_running_the_node_resyncs_by_itself(tmp_path) -> None:
    """Both sensors silent for 10 s of their clocks: the node drops the first readings of the new time
    (future), resyncs once both confirm it, and estimates again, flagged resync; no operator."""
    def both(start: float, seq0: int) -> list[dict]:
        return [message for k in range(5) for message in
                (encoder(start + 0.01 * k, seq0 + k), {"sensor": "coupler_gyro", "t": start + 0.01 * k,
                                                       "seq": seq0 + k, "value": 0.1})]
    with fake_node(tmp_path) as running:
        running.send(*both(0.0, 0))
        running.wait_received(10)
        running.send(*both(10.0, 1000))
        status = running.wait_received(20)
        messages = running.collect()
    assert status["resyncs"] == 1 and status["dropped_by_reason"] == {"future": 3} and status["accepted"] == 17
    assert status["gaps"] == 2 * 995  # the sequence numbers skipped by the outage
    resumed = [m for m in estimates(messages) if m["t"] >= 10.0]
    assert resumed and resumed[0]["t"] == pytest.approx(10.01) and "resync" in resumed[0]["flags"]


def test_control_commands(tmp_path) -> None:
    with fake_node(tmp_path) as running:
        assert running.request({"command": "status"})["state"] == "starting"
        running.send(*[encoder(0.01 * k, k) for k in range(3)])
        status = running.wait_received(3)
        assert status["ok"] and status["state"] == "running" and status["coordinates"] == ["x1", "y1", "x2", "y2",
                                                                                         "theta0"]
        assert status["sensors"]["crank_encoder"]["accepted"] == 3 and status["t"] == pytest.approx(0.02)
        assert running.request({"command": "reset"}) == {"ok": True, "command": "reset"}
        assert running.request({"command": "status"})["state"] == "starting"
        running.send(encoder(0.001, 0))  # earlier than before the reset: accepted again
        assert running.wait_received(4)["accepted"] == 4
        reply = running.request({"command": "fly"})
        assert reply["ok"] is False and "status | reset | shutdown" in reply["error"]
        running.control.send(b"\xc1")
        assert msgpack.unpackb(running.control.recv())["ok"] is False
        assert running.request({"command": "status"})["received"] == 4


def test_periodic_status_messages(tmp_path) -> None:
    with fake_node(tmp_path, "status_period_s: 0.1") as running:
        running.send(*[encoder(0.01 * k, k) for k in range(3)])
        time.sleep(0.35)
        messages = running.collect(0.05)
    status = [m for m in messages if m["type"] == "status"]
    assert len(status) >= 2 and status[-1]["latency_ms"].keys() == {"p50", "p99", "max"}


def test_the_online_estimator_end_to_end_with_out_of_order_and_late_readings(tmp_path) -> None:
    readings, truth, _ = simulated_readings(0.4)
    # hold back the load cell's reading at 200 ms until the readings up to 205 ms are out (inside the
    # 10-step window: used), and the one at 300 ms until after 360 ms (outside: late); the load cell's
    # readings at 310 … 350 ms are lost (its own stamps must increase: they would overtake it)
    #
    #  stamp [ms]   ... 200 ... 205 | 200 ... 300 310 ... 350 ... 360 | 300
    #  load cell         .          |  x       .   -  ...  -          |  x
    #  others       x x x x x x x x |  x x x x x x x x x x x x x x x  |
    delay = {20: 0.005, 30: 0.060}
    lost = range(31, 36)
    sent_at = [(r["t"] + delay.get(r["seq"], 0.0) if r["sensor"] == "rocker_load_cell" else r["t"], r)
               for r in readings if not (r["sensor"] == "rocker_load_cell" and r["seq"] in lost)]
    order = [r for _, r in sorted(sent_at, key=lambda pair: pair[0])]
    assert len(order) == len(readings) - 5
    config = load_node_config(write_config(tmp_path, "{unknown_forces: [motor], latency_budget_ms: 50}"))
    with RunningNode(config, online_estimator) as running:
        for k in range(0, len(order), 50):  # in bursts, faster than real time
            running.send(*order[k:k + 50])
            time.sleep(0.01)
        status = running.wait_received(len(order), timeout=30.0)
        messages = running.collect(1.0)
    assert status["received"] == len(order) and status["malformed"] == 0
    assert status["late"] == 1 and status["estimator"]["late"] == 1 and status["estimator"]["used"] >= 1
    assert status["sensors"]["rocker_load_cell"]["gaps"] == 5 and status["dropped"] == 0
    published = estimates(messages)
    assert len(published) >= 365  # the grid starts at the middle of the 0.05 s start-up span
    t = np.array([m["t"] for m in published])
    q = np.array([m["q"] for m in published])
    motor = np.array([m["forces"]["motor"] for m in published])
    # position within 5 mm and torque within 5 N·m of the truth after the first 50 ms (start-up):
    # the demo measures ~0.5 mm and ~0.2 N·m RMSE; these bounds catch a broken pipeline, not accuracy
    late = t > 0.05
    true_q = np.column_stack([np.interp(t, truth.t, c) for c in truth.q.T])
    assert np.max(np.abs(q[late, :4] - true_q[late, :4])) < 5e-3
    assert np.max(np.abs(motor[late] - np.interp(t[late], truth.t, truth.f[:, 0]))) < 5.0


def test_sigterm_stops_the_node_cleanly_and_flushes_the_log(tmp_path) -> None:
    endpoints = {name: f"ipc://{tmp_path}/{name}" for name in ("sub", "pub", "control")}
    log = tmp_path / "sigterm.log"
    config = tmp_path / "node.yaml"
    config.write_text(f"mechanism: {REPO / 'configs/mechanisms/fourbar_crank.yaml'}\n"
                      f"sensors: {REPO / 'configs/sensors/fourbar.yaml'}\n"
                      f"node: {{sub: '{endpoints['sub']}', pub: '{endpoints['pub']}', "
                      f"control: '{endpoints['control']}', "
                      f"log: {{path: {log}, flush_seconds: 60, flush_records: 100000}}}}\n")
    process = subprocess.Popen([sys.executable, "-m", "estimator", "run", "--config", str(config)], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    try:
        control = context.socket(zmq.REQ)
        control.connect(endpoints["control"])
        control.send(msgpack.packb({"command": "status"}))
        assert control.poll(30_000), "the node did not come up"
        control.recv()
        publisher = connect_publisher(context, endpoints["sub"], wait_s=10.0)
        readings = [encoder(0.001 * k, k) for k in range(20)]
        for reading in readings:
            publisher.send(msgpack.packb(reading))
        control.send(msgpack.packb({"command": "status"}))
        deadline = time.monotonic() + 10.0
        while msgpack.unpackb(control.recv())["received"] < 20 and time.monotonic() < deadline:
            control.send(msgpack.packb({"command": "status"}))
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
        context.destroy()
    assert process.returncode == 0, err
    assert "stopped: " in out and "received 20" in out
    assert read_log(log).readings == readings  # nothing was flushed before the signal (60 s, 100000 records)
