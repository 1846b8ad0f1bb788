"""The node's per-message path (estimator.node.intake) on its own, with the stand-in estimator
(tests/fake_estimator.py) and an injected wall clock: readings out of bounds, sequence gaps of every
valid reading, the status state, and the resync after an outage or a clock jump."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO
from fake_estimator import FakeConfig, FakeEstimator

from estimator.mechanism_file import load_mechanism
from estimator.node.intake import Intake
from sensors.config import load_sensors
from sensors.plausibility import reading_bounds

ENCODER, GYRO = "crank_encoder", "coupler_gyro"  # configs/sensors/fourbar.yaml (gyroscope σ 2.8e-3 rad/s)


class Clock:
    """Wall time set by the test [s]."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def intake(clock: Clock | None = None) -> Intake:
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    sensors = load_sensors(REPO / "configs" / "sensors" / "fourbar.yaml", mech)
    estimator = FakeEstimator(mech, sensors, FakeConfig(rate=100.0, lag=5), lambda: 0.0)
    return Intake(estimator, sensors.dimensions(), max_future_s=1.0, budget_s=1.0,
                  bounds=reading_bounds(sensors.sensors), quiet_s=1.0, clock=clock or Clock())


def reading(sensor: str, t: float, seq: int, value: float = 0.5, **extra) -> dict:
    return {"sensor": sensor, "t": t, "seq": seq, "value": value, **extra}


def stream(node: Intake, start: float, stop: float, seq0: int = 0, sensors=(ENCODER, GYRO)) -> list:
    """Readings of ``sensors`` every 10 ms over [start, stop), sequence numbers from ``seq0``; the estimates."""
    out = []
    for i, t in enumerate(np.arange(start, stop - 1e-9, 0.01)):
        for sensor in sensors:
            out += node.handle(reading(sensor, float(t), seq0 + i))
    return out


def test_values_out_of_range_and_implausible_covariances_are_dropped_by_reason() -> None:
    node = intake()
    bad = [reading(GYRO, 0.0, 0, 1e300),  # beyond the saturation, ±34.9 rad/s
           reading(GYRO, 0.01, 1, 0.1, cov=1e-300),  # σ 1e-150: below 1e-3 of the configured σ
           reading(GYRO, 0.02, 2, 0.1, cov=1e8),  # σ 1e4 rad/s: over 1e6 times the configured σ
           reading("coupler_accelerometer", 0.0, 0, [0.0, 1e300]),
           reading("coupler_accelerometer", 0.01, 1, [0.0, 9.8], cov=[1e-300, 0.0, 0.0, 1e-300])]
    clipped = [reading(GYRO, 0.025, 3, 34.9)]  # at full scale: the device clipped it (sensors.plausibility)
    good = [reading(GYRO, 0.03, 4, 34.8), reading(GYRO, 0.04, 5, 0.1, cov=1e-6)]
    for message in bad + clipped + good:
        node.handle(message)
    assert dict(node.counters.dropped) == {"range": 2, "cov": 3, "saturated": 1}
    assert node.counters.accepted == 2 and node.estimator.used == [34.8, 0.1]
    assert node.tracks[GYRO].gaps == 0  # dropped for its value, not lost


def test_gaps_count_the_sequence_numbers_never_seen_and_status_says_shedding() -> None:
    clock = Clock()
    node = intake(clock)
    clock.now = 5.0
    assert node.state(0) == "starting"  # before any input
    clock.now = 0.0
    stream(node, 0.0, 0.1)
    assert node.state(0) == "running"
    node.handle(reading(ENCODER, 0.1, 13))  # 3 readings lost upstream or by the queue
    node.handle(reading(ENCODER, 5.0, 14))  # dropped `future`: seen, so no gap
    node.handle(reading(ENCODER, 0.11, 15))
    assert node.tracks[ENCODER].gaps == 3 and node.counters.dropped == {"future": 1}
    status = node.status(1.0)
    assert status["gaps"] == 3 and status["sensors"][ENCODER]["gaps"] == 3 and status["state"] == "shedding"
    clock.now = 0.9
    node.handle(reading(ENCODER, 0.12, 16))
    assert node.state(1) == "shedding"  # a gap within the last quiet_s comes first
    clock.now = 1.5
    node.handle(reading(ENCODER, 0.13, 17))
    assert node.state(1) == "degraded" and node.state(0) == "running"
    clock.now = 2.6  # nothing admitted for more than quiet_s
    assert node.state(0) == "waiting"


@pytest.mark.parametrize("jump", [10.0, 1000.0, -1000.0])
def test_after_an_outage_or_a_clock_jump_every_sensor_agreeing_resyncs(jump: float) -> None:
    """Both sensors resume ``jump`` seconds away (an outage with clocks running on, a clock jump): each
    confirms the new time with two readings, then the estimator restarts there, flagged resync."""
    node = intake()
    before = stream(node, 1000.0, 1001.0)
    after = stream(node, 1001.0 + jump, 1002.0 + jump, seq0=100)
    reason = "future" if jump > 0 else "backwards"
    assert node.counters.resyncs == 1 and node.counters.dropped == {reason: 3}  # 2 encoder, 1 gyro reading
    assert before[-1].t == pytest.approx(1000.99)
    assert after[0].t == pytest.approx(1001.01 + jump) and "resync" in after[0].flags  # 10 ms after they resumed
    assert after[-1].t == pytest.approx(1001.99 + jump)
    assert node.tracks[ENCODER].gaps == 0 and node.counters.accepted == 400 - 3


def test_one_sensor_jumping_alone_is_dropped_while_the_others_carry_on() -> None:
    node = intake()
    stream(node, 0.0, 0.5)
    for i, t in enumerate(np.arange(0.5, 3.0, 0.01)):
        node.handle(reading(ENCODER, float(t), 50 + i))
        node.handle(reading(GYRO, float(t) + 100.0, 50 + i))
    assert node.counters.resyncs == 0 and node.counters.dropped == {"future": 250}
    assert node.newest == pytest.approx(2.99)


def test_a_single_stray_stamp_is_only_dropped() -> None:
    node = intake()
    stream(node, 0.0, 0.5, sensors=(ENCODER,))
    node.handle(reading(ENCODER, 1e6, 50))
    stream(node, 0.5, 0.6, seq0=51, sensors=(ENCODER,))
    assert node.counters.resyncs == 0 and node.counters.dropped == {"future": 1} and node.newest == pytest.approx(0.59)


def test_a_sensor_that_does_not_come_back_holds_the_resync_back_for_max_future_s() -> None:
    node = intake()
    stream(node, 0.0, 0.5)
    after = stream(node, 20.0, 22.0, seq0=50, sensors=(ENCODER,))
    assert node.counters.resyncs == 1 and node.counters.dropped == {"future": 100}  # 20.00 … 20.99
    assert after[0].t == pytest.approx(21.0) and "resync" in after[0].flags


def test_the_reset_command_forgets_the_jump_candidates() -> None:
    node = intake()
    stream(node, 0.0, 0.5)
    node.handle(reading(ENCODER, 50.0, 50))
    node.reset()
    assert node.jumped == {} and node.newest is None
