"""A node behind its input stays current, over real sockets: it records every message, skips the
backlog in estimation (counted by reason) and restarts the estimator from the newest readings; its
log replays to the live estimates ``--as-recorded`` and to an estimate of every reading otherwise
(estimator.node.backlog, estimator.node.intake)."""

from __future__ import annotations

import time

from fake_estimator import FakeConfig, FakeEstimator, fake_factory
from node_harness import RunningNode, encoder, estimates, write_config

from estimator.demo.cases import crank_truth
from estimator.logfile import LogWriter, read_log
from estimator.node.config import load_node_config
from estimator.node.intake import intake_for, log_header
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock, RecordedClock
from replay.replay import replay
from sensors.virtual import simulate_readings

STEP_S = 0.005  # [s] of wall time per grid step: 2 s of stamps per second, a fifth of the burst's pace
RATE = 100.0  # [Hz] the fake estimator's grid and the encoder's rate: one step per reading


def slow_factory(config, clock) -> FakeEstimator:
    """The fake estimator, STEP_S of wall time per step it processes (the numbers are the fake's)."""
    estimator = fake_factory(config, clock)
    advance = estimator.advance

    def slow_advance(sensor_time: float, final: bool = False) -> list:
        steps = advance(sensor_time, final)
        time.sleep(STEP_S * len(steps))
        return steps

    estimator.advance = slow_advance
    return estimator


def paced(running: RunningNode, first: int, count: int, seq: int) -> None:
    """``count`` encoder readings stamped from step ``first`` on, each sent when the wall clock reaches its stamp."""
    start = time.monotonic()
    for k in range(count):
        time.sleep(max(0.0, start + k / RATE - time.monotonic()))
        running.send(encoder((first + k) / RATE, seq + k))


def test_a_burst_the_node_cannot_keep_up_with_is_skipped_recorded_and_replayed(tmp_path) -> None:
    """The encoder at its rate, a burst of 6 s of readings at once, the rate again:

        stamp [s]   0 ······ 0.3 ······················· 6.3 ·········· 7.3
        sent        at pace  │ 600 readings at once      │ at pace
        node        estimates│ busy ≥ 0.2 s, stamps ahead: skip (burst) … current:
                             │ (every message recorded)    resume, restart (caught_up)

    Taking every reading would leave the node 3 s of wall time behind at the burst's end (5 ms per
    step, 6 s of stamps).
    """
    config = load_node_config(write_config(tmp_path, f"{{rate: {RATE}, lag: 5}}", "max_lag_s: 0.2"),
                              FakeConfig.from_section)
    with RunningNode(config, slow_factory) as running:
        paced(running, 0, 30, 0)
        running.send(*[encoder((30 + k) / RATE, 30 + k) for k in range(600)])
        paced(running, 630, 100, 630)
        status = running.wait_received(730, timeout=20.0)
        time.sleep(0.3)  # the last steps
        live = estimates(running.collect(0.5))
    skipped = status["skipped_by_reason"]
    assert status["received"] == 730 and set(skipped) == {"burst"}
    assert status["accepted"] + skipped["burst"] == 730 and skipped["burst"] > 300
    log = read_log(tmp_path / "run.log")
    assert len(log.readings) == 730  # every message recorded
    decisions = [(kind, body) for kind, body in log.inputs if kind == "control"]
    assert decisions[0] == ("control", {"command": "skip", "reason": "burst"})
    assert [body["command"] for _, body in decisions] == ["skip", "resume"] * (len(decisions) // 2)
    between, inside = [], False  # the readings the log holds between a skip and its resume
    for kind, body in log.inputs:
        inside = body["command"] == "skip" if kind == "control" else inside
        if inside and kind == "reading":
            between.append(body["t"])
    assert len(between) == skipped["burst"] and min(between) >= 0.3  # from the burst on
    restarted = [m for m in live if "caught_up" in m["flags"]]
    assert restarted and restarted[0]["t"] > max(between) and live[-1]["t"] >= 7.25

    recorded = replay(tmp_path / "run.log", config, fake_factory, as_recorded=True)
    assert len(recorded.estimates) == len(live)
    for message, estimate in zip(live, recorded.estimates):
        assert (message["step"], message["t"], message["q"], message["forces"], tuple(message["flags"])) == (
            estimate.step, estimate.t, estimate.q.tolist(), estimate.forces, estimate.flags)
    for key in ("received", "accepted", "skipped_by_reason", "dropped_by_reason"):
        assert recorded.status[key] == status[key]

    plain = replay(tmp_path / "run.log", config, fake_factory)
    assert plain.status["accepted"] == 730 and plain.status["skipped_by_reason"] == {}
    assert [e.step for e in plain.estimates] == list(range(730))  # every step, one estimator run
    assert plain.estimates[-1].forces["motor"] == 0.5 * 730 and not any(e.flags for e in plain.estimates)


def test_replay_as_recorded_takes_the_skips_of_a_degraded_estimator_step_for_step(tmp_path) -> None:
    """The smoother over its budget from its 40th update on (3.5 ms per update, coalescing), a backlog
    skipped while it coalesces and estimated again later, recorded by the node's intake: replay
    ``--as-recorded`` gives the same estimates bit for bit (the skip publishes a partial group of
    steps first, and the clock reads of every update stay paired), a plain replay one run through
    every reading."""
    config = load_node_config(write_config(tmp_path, "{unknown_forces: [motor]}"))
    clock = RecordedClock([2e-4] * 40 + [3.5e-3] * 400)
    readings = [r.to_map() for r in simulate_readings(config.sensors.sensors, crank_truth(config.mech, 0.4), 5)]
    live = []
    with LogWriter(tmp_path / "run.log", log_header(config)) as log:
        intake = intake_for(config, OnlineEstimator(config.mech, config.sensors, config.estimator, clock=clock), log)
        for number, message in enumerate(readings):
            if number == 400:
                live += intake.skip("behind")
            elif number == 650:
                intake.resume()
            live += intake.handle(message)
        live += intake.finish()
    assert intake.counters.skipped == {"behind": 250} and intake.counters.accepted == len(readings) - 250
    assert any("caught_up" in e.flags for e in live) and any(e.update_steps < 4 for e in live if "coalesced" in e.flags)
    recorded = replay(tmp_path / "run.log", config, as_recorded=True).estimates
    assert len(recorded) == len(live) > 200
    for ours, theirs in zip(live, recorded):
        assert (ours.step, ours.t, ours.flags, ours.update_steps) == (theirs.step, theirs.t, theirs.flags,
                                                                      theirs.update_steps)
        assert ours.q.tolist() == theirs.q.tolist() and ours.forces == theirs.forces
    plain = replay(tmp_path / "run.log", config,
                   lambda config, clock: OnlineEstimator(config.mech, config.sensors, config.estimator,
                                                         clock=FixedClock())).estimates
    assert [e.step for e in plain] == list(range(len(plain))) and not any("caught_up" in e.flags for e in plain)
