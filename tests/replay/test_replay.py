"""Replay: the node's log through the node's own per-message path gives the live node's estimates,
step for step; deterministic by default; the last due steps at the log's end and at the node's
shutdown; the estimates as CSV; real-time pacing; re-publishing a log over ZeroMQ."""

from __future__ import annotations

import math
import threading
import time

import msgpack
import numpy as np
import pytest
from conftest import MECHANISMS, REPO, cli_exit_code, read_csv
from fake_estimator import FakeConfig, fake_factory
from node_harness import SENSORS, RunningNode, bound_sub, encoder, estimates, write_config

from estimator.demo.cases import crank_truth
from estimator.errors import MbstateError
from estimator.logfile import LogWriter, read_log
from estimator.node.config import load_node_config
from estimator.online.estimator import OnlineEstimator
from estimator.timeseries import write_csv
from replay.clocks import FixedClock, RecordedClock
from replay.pacing import paced
from replay.publish import Command, log_messages, publish
from replay.replay import estimates_trajectory, replay
from sensors.messages import Reading
from sensors.virtual import simulate_readings

COUNTERS = ("received", "accepted", "late", "steps", "dropped_by_reason", "malformed_by_reason")


def fixed_clock_estimator(config, clock):
    """The OnlineEstimator on a clock that never advances: latency 0, no degradation, deterministic."""
    return OnlineEstimator(config.mech, config.sensors, config.estimator, clock=FixedClock())


def live_run(tmp_path, estimator: str, factory, seconds: float, seed: int, bad: list = ()) -> tuple:
    """A node (log run.log) fed the crank scenario's readings, with ``bad`` messages after the 300th;
    (config, estimate messages, last status)."""
    config = load_node_config(write_config(tmp_path, estimator))
    readings = [r.to_map() for r in simulate_readings(config.sensors.sensors, crank_truth(config.mech, seconds), seed)]
    with RunningNode(config, factory) as running:
        running.send(*readings[:300], *bad, *readings[300:])
        status = running.wait_received(len(readings) + len(bad), timeout=30.0)
        return config, estimates(running.collect(1.0)), status


def test_replay_of_the_node_log_reproduces_the_live_estimates_exactly(tmp_path) -> None:
    bad = [{"sensor": "coupler_gyro", "t": 0.1, "seq": 0, "value": math.nan},
           {"sensor": "nope", "t": 0.1, "seq": 0, "value": 1.0},
           b"\xc1", msgpack.packb(42)]  # the last two are not maps: recorded as raw records
    config, live, live_status = live_run(tmp_path, "{unknown_forces: [motor]}", fixed_clock_estimator, 0.25, 3, bad)
    result = replay(tmp_path / "run.log", config, fixed_clock_estimator)
    assert len(live) == len(result.estimates) > 200
    for message, estimate in zip(live, result.estimates):
        assert message["step"] == estimate.step and message["t"] == estimate.t
        for key in ("q", "qd", "qdd", "lam"):
            assert message[key] == getattr(estimate, key).tolist()  # bit for bit
        assert message["forces"] == estimate.forces and tuple(message["flags"]) == estimate.flags
    assert {k: result.status[k] for k in COUNTERS} == {k: live_status[k] for k in COUNTERS}
    assert result.status["malformed_by_reason"] == {"invalid": 2, "unknown_sensor": 1, "undecodable": 1}


def test_replay_counts_writes_csv_and_reports_progress(tmp_path) -> None:
    config = load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}", log=None), FakeConfig.from_section)
    log_path = tmp_path / "input.log"
    with LogWriter(log_path, {}) as log:
        for k in range(11):
            log.reading(encoder(0.01 * k, k))
        log.reading({"sensor": "crank_encoder", "t": 0.05, "seq": 11, "value": 0.5})  # backwards
        log.state("truth", 0.0, q=np.zeros(5))
    calls = []
    result = replay(log_path, config, fake_factory, progress=lambda done, total: calls.append((done, total)))
    size = log_path.stat().st_size  # progress in bytes of the log: the truth and end records come last
    assert len(calls) == 13 and calls[-1] == (size, size) and calls[-2][0] < size
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert [e.step for e in result.estimates] == list(range(11))
    assert result.status["received"] == 12 and result.status["dropped_by_reason"] == {"backwards": 1}
    out = tmp_path / "est.csv"
    write_csv(out, estimates_trajectory(config.mech, result.estimates))
    table = read_csv(out)
    np.testing.assert_allclose(table.t, 0.01 * np.arange(11), atol=1e-15)
    np.testing.assert_allclose(table.forces["theta0"], 0.5 * np.arange(1, 12))  # the motor acts on theta0
    assert table.q.shape == (11, 5) and table.lam.shape == (11, 4)


def test_paced_releases_messages_at_their_stamps() -> None:
    messages = [{"t": 10.0 + 0.05 * k} for k in range(5)] + [{"t": "bad"}]
    start = time.monotonic()
    released = []
    for message in paced(messages, speed=2.0):
        released.append((time.monotonic() - start, message))
    assert [m for _, m in released] == messages
    assert released[0][0] < 0.05 and 0.1 - 0.005 <= released[4][0] < 0.2  # 0.2 s of stamps at speed 2
    stop = threading.Event()
    stop.set()
    assert list(paced(messages, stop=stop)) == []


def test_publish_sends_every_message_to_a_subscriber(context) -> None:
    sub, endpoint = bound_sub(context)
    messages = [encoder(0.001 * k, k) for k in range(50)] + [{"anything": "recorded"}, b"\xc1 raw bytes"]
    sent = []
    thread = threading.Thread(target=lambda: sent.append(publish(messages, endpoint, speed=None)))
    thread.start()
    received = []
    while sub.poll(500):  # a SUB hands its subscription to a new peer only while it is being used
        received.append(sub.recv())
    thread.join()
    assert sent == [52] and received == [m if isinstance(m, bytes) else msgpack.packb(m) for m in messages]


def test_a_log_publishes_its_readings_and_raw_messages_in_order(tmp_path) -> None:
    with LogWriter(tmp_path / "run.log", {}) as log:
        log.reading(encoder(0.001, 1))
        log.raw(b"\xc1")
        log.write("control", {"command": "reset"})
        log.state("truth", 0.001, q=np.zeros(2))
        log.reading(encoder(0.002, 2))
    assert list(log_messages(tmp_path / "run.log")) == [encoder(0.001, 1), b"\xc1", Command("reset"), encoder(0.002, 2)]


def test_publish_without_a_node_is_a_clear_error() -> None:
    from estimator.errors import MbstateError

    with pytest.raises(MbstateError, match="no subscriber at tcp://127.0.0.1:9 within 0.2 s"):
        publish([encoder(0.0, 0)], "tcp://127.0.0.1:9", wait_s=0.2)


def live_run_with_a_reset(tmp_path) -> tuple:
    """A live node gets readings, a ``reset`` command, then readings from a later time (it starts
    again); (config, the estimate messages, how many readings came before the reset). Log: run.log."""
    config = load_node_config(write_config(tmp_path, "{unknown_forces: [motor]}"))
    truth = crank_truth(config.mech, 0.3)
    readings = [r.to_map() for r in simulate_readings(config.sensors.sensors, truth, 4)]
    first = [r for r in readings if r["t"] < 0.1]
    later = [r for r in readings if r["t"] >= 0.15]
    with RunningNode(config, fixed_clock_estimator) as running:
        running.send(*first)
        running.wait_received(len(first), timeout=30.0)
        assert running.request({"command": "reset"})["ok"]
        running.send(*later)
        running.wait_received(len(first) + len(later), timeout=30.0)
        return config, estimates(running.collect(1.0)), len(first)


def test_a_reset_on_the_live_node_is_recorded_and_replayed(tmp_path) -> None:
    """Replay of the log resets at the same place and gives the same estimates."""
    config, live, before = live_run_with_a_reset(tmp_path)
    kinds = [kind for kind, _ in read_log(tmp_path / "run.log").inputs]
    assert kinds.index("control") == before and kinds.count("control") == 1
    result = replay(tmp_path / "run.log", config, fixed_clock_estimator)
    assert sum("startup" in e.flags for e in result.estimates) == 2  # started, reset, started again
    assert len(live) == len(result.estimates) > 100
    for message, estimate in zip(live, result.estimates):
        assert message["step"] == estimate.step and message["q"] == estimate.q.tolist()


def test_publish_sends_a_logged_reset_to_the_control_socket_in_its_place(tmp_path) -> None:
    """The log re-published, as fast as possible, to a second node: the reset is requested once that
    node has received the readings before it, so it records the reset at the same place and gives
    the first node's estimates."""
    config, live, before = live_run_with_a_reset(tmp_path)
    second = load_node_config(write_config(tmp_path, "{unknown_forces: [motor]}", log="republished.log"))
    messages = list(log_messages(tmp_path / "run.log"))
    with RunningNode(second, fixed_clock_estimator) as running:
        sent = publish(messages, running.node.endpoints["sub"], speed=None, control=running.node.endpoints["control"])
        running.wait_received(sent, timeout=30.0)
        republished = estimates(running.collect(1.0))
    kinds = [kind for kind, _ in read_log(tmp_path / "republished.log").inputs]
    assert kinds.index("control") == before and kinds.count("control") == 1 and sent == len(messages) - 1
    assert len(republished) == len(live) > 100
    assert all(a["step"] == b["step"] and a["q"] == b["q"] for a, b in zip(republished, live))


@pytest.mark.parametrize("control, error", [
    (None, "the messages hold commands for the node (a log's resets), but no control endpoint was given"),
    ("tcp://127.0.0.1:9", "no reply from the node's control endpoint tcp://127.0.0.1:9 within 0.3 s")])
def test_publishing_a_reset_needs_a_control_endpoint_that_answers(context, control, error) -> None:
    sub, endpoint = bound_sub(context)
    errors = []

    def publish_reset() -> None:
        try:
            publish([encoder(0.0, 0), Command("reset")], endpoint, wait_s=0.3, control=control)
        except MbstateError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=publish_reset)
    thread.start()
    while thread.is_alive():
        sub.poll(50)  # a SUB hands its subscription to a new peer only while it is being used
    assert errors == [error]


@pytest.mark.parametrize("kind, body, match", [
    ("control", {"command": "explode"}, "bad.log: a control command this reader cannot replay: 'explode'"),
    ("control", {"command": 3}, "bad.log: corrupt record at byte 89: not an mbstate log record"),
    ("raw", {"data": "text, not bytes"}, "bad.log: corrupt record at byte 89: not an mbstate log record")])
def test_input_records_replay_cannot_take_are_clear_errors(tmp_path, kind, body, match) -> None:
    config = load_node_config(write_config(tmp_path))
    with LogWriter(tmp_path / "bad.log", {}) as log:
        log.write(kind, body)
    with pytest.raises(MbstateError, match=match):
        replay(tmp_path / "bad.log", config, fixed_clock_estimator)


def slow_phase_estimator(config, clock):
    """Updates 40 to 59 last 3.5 ms, the others 0.2 ms: a node that runs over its 1 ms budget for a
    while, degrades, coalesces and recovers."""
    durations = [2e-4] * 40 + [3.5e-3] * 20 + [2e-4] * 1000
    return OnlineEstimator(config.mech, config.sensors, config.estimator, clock=RecordedClock(durations))


def test_replay_as_recorded_follows_the_live_degradation_step_for_step(tmp_path) -> None:
    config, live, _ = live_run(tmp_path, "{unknown_forces: [motor], recover_steps: 20}", slow_phase_estimator, 0.3, 5)
    assert any("coalesced" in m["flags"] for m in live) and any("recovered" in m["flags"] for m in live)
    recorded = replay(tmp_path / "run.log", config, as_recorded=True).estimates
    unpaced = replay(tmp_path / "run.log", config, fixed_clock_estimator).estimates
    assert len(live) == len(recorded) > 200
    for message, estimate in zip(live, recorded):
        assert message["step"] == estimate.step and message["q"] == estimate.q.tolist()
        assert tuple(message["flags"]) == estimate.flags and message["update_steps"] == estimate.update_steps
    assert any(not np.array_equal(a.q, b.q) for a, b in zip(recorded, unpaced))  # the timing matters


def test_replay_as_recorded_needs_estimate_records(tmp_path) -> None:
    config = load_node_config(write_config(tmp_path))
    with LogWriter(tmp_path / "bare.log", {}) as log:
        log.reading(encoder(0.001, 1))
    with pytest.raises(MbstateError, match="bare.log: no estimate records to replay the timing of"):
        replay(tmp_path / "bare.log", config, as_recorded=True)


class SlowWallClock:
    """A stand-in for time.perf_counter on a machine where every update takes 2.5 ms (budget 1 ms)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 2.5e-3
        return self.now


def test_replay_is_deterministic_by_default_however_slow_the_machine(tmp_path, monkeypatch, capsys) -> None:
    """The same log replayed twice gives the same CSV, byte for byte, also when the wall clock says
    every update overran its budget: the estimator never sees the wall clock (no overrun, no
    coalescing); the summary's latency is the measured one."""
    log = tmp_path / "sim.log"
    assert cli_exit_code(["simulate", str(MECHANISMS / "fourbar_crank.yaml"), "--sensors", str(SENSORS), "--t-end",
                          "0.15", "--forces", "motor=0", "--out", str(log)]) == 0
    config = str(REPO / "configs" / "estimator" / "fourbar.yaml")
    capsys.readouterr()
    assert cli_exit_code(["replay", str(log), "--config", config, "--out", str(tmp_path / "a.csv"), "--quiet"]) == 0
    monkeypatch.setattr(time, "perf_counter", SlowWallClock())
    assert cli_exit_code(["replay", str(log), "--config", config, "--out", str(tmp_path / "b.csv"), "--quiet"]) == 0
    first, second = (tmp_path / "a.csv").read_bytes(), (tmp_path / "b.csv").read_bytes()
    assert first == second and first.count(b"\n") > 115  # the grid starts 0.025 s in (start-up span)
    out, err = capsys.readouterr()
    assert err == "" and "overruns 0, recoveries 0, latency p50 2.500 / p99 2.500 / max 2.500 ms" in out


def coalescing_estimator(config, clock):
    """The OnlineEstimator with every update lasting 3.5 ms (budget 1 ms): it coalesces max_coalesce
    steps per update."""
    return OnlineEstimator(config.mech, config.sensors, config.estimator, clock=FixedClock(3.5e-3))


def messages_ending_with_held_steps(config, readings: list[Reading]) -> list[dict]:
    """The first readings, up to one after which a coalescing estimator holds back due steps (t_k +
    delay ≤ the newest stamp) for a fuller update, as maps."""
    probe, newest, first = coalescing_estimator(config, None), -math.inf, None
    for count, reading in enumerate(readings, start=1):
        probe.add(reading)
        newest = max(newest, reading.t)
        out = probe.advance(newest)
        first = out[0].t if first is None and out else first
        dt, delay = config.estimator.dt, config.estimator.delay_steps
        if first is not None and int(np.floor((newest - first) / dt - delay + 1e-9)) >= probe.counters["steps"]:
            return [r.to_map() for r in readings[:count]]
    raise AssertionError("the estimator never held a step back")


def test_the_last_due_steps_are_published_at_shutdown_and_replayed_at_the_log_s_end(tmp_path) -> None:
    """A coalescing node whose input ends while due steps wait for a full group: at shutdown it
    processes and publishes them (a smaller update); replay of its log, with the same clock,
    processes them at the log's end: the same estimates."""
    config = load_node_config(write_config(tmp_path, "{unknown_forces: [motor]}"))
    readings = simulate_readings(config.sensors.sensors, crank_truth(config.mech, 0.2), 6)
    messages = messages_ending_with_held_steps(config, readings)
    with RunningNode(config, coalescing_estimator) as running:
        running.send(*messages)
        running.wait_received(len(messages), timeout=30.0)
        before = estimates(running.collect(0.3))
        running.node.stop()
        running.thread.join(10.0)
        live = before + estimates(running.collect(0.3))
    assert len(live) > len(before) and [m["step"] for m in live] == list(range(len(live)))
    assert live[-1]["update_steps"] == len(live) - len(before) < config.estimator.max_coalesce
    replayed = replay(tmp_path / "run.log", config, coalescing_estimator).estimates
    assert len(replayed) == len(live)
    assert all(m["step"] == e.step and m["q"] == e.q.tolist() and m["update_steps"] == e.update_steps
               for m, e in zip(live, replayed))
