"""Well-formed readings that poison the numbers (issue 12): the node's path (estimator.node.intake) with
the product's OnlineEstimator on the four-bar scenario of replay.scenarios (0.6 s, seeded).
Each layer on its own: the bounds of sensors.plausibility, the estimator's outlier gate, and behind
them the re-initialization after a solver failure or a failed start-up. Whatever gets through, every
published estimate is finite and sane, or flagged."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.node.intake import Intake
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock
from replay.scenarios import scenario
from sensors.plausibility import reading_bounds

T_END = 0.6


def run(change, bounds: bool = True, gate: float | None = 3000.0, delay: int = 0) -> tuple[list, Intake]:
    """Every reading through the node's path, ``change(message, index, state)`` applied to each map."""
    mech, sensors, _, readings = scenario(T_END, 1)
    estimator = OnlineEstimator(mech, sensors, EstimatorConfig(unknown_forces=("motor",), outlier_gate=gate,
                                                               output_delay=delay), FixedClock())
    intake = Intake(estimator, sensors.dimensions(), max_future_s=1.0, budget_s=1e-3,
                    bounds=reading_bounds(sensors.sensors) if bounds else None)
    estimates, state = [], set()
    for index, reading in enumerate(readings):
        estimates += intake.handle(change(reading.to_map(), index, state))
    return estimates + intake.finish(), intake


def once(sensor: str, after: int, **values):
    """Set ``values`` on the first message of ``sensor`` from reading number ``after`` on."""
    def change(message: dict, index: int, state: set) -> dict:
        if message["sensor"] == sensor and index >= after and not state:
            state.add(sensor)
            return {**message, **values}
        return message
    return change


def first_huge(message: dict, index: int, state: set) -> dict:
    """Every sensor's first reading 1e300 in every axis."""
    if message["sensor"] in state:
        return message
    state.add(message["sensor"])
    return {**message, "value": [1e300] * len(message["value"]) if isinstance(message["value"], list) else 1e300}


def sane(estimates: list) -> bool:
    """Finite, the four-bar's coordinates within a few metres and the motor torque within 1 kN·m."""
    return all(np.isfinite(e.q).all() and np.isfinite(e.qd).all() and np.max(np.abs(e.q)) < 10.0
               and abs(e.forces["motor"]) < 1e3 for e in estimates)


@pytest.mark.parametrize("change,reason", [
    (once("coupler_gyro", 600, cov=1e-300), "cov"),
    (once("coupler_accelerometer", 600, cov=[1e-300, 0.0, 0.0, 1e-300]), "cov"),
    (first_huge, "range"),
])
def test_the_issues_crafted_readings_are_dropped_before_the_estimator(change, reason: str) -> None:
    estimates, intake = run(change)
    clean, _ = run(lambda message, index, state: message)
    expected = 4 if reason == "range" else 1  # one reading, or every sensor's first
    assert dict(intake.counters.dropped) == {reason: expected} and intake.estimator.counters["outlier"] == 0
    assert sane(estimates) and len(estimates) >= len(clean) - 2  # the start-up waits for the next readings
    assert all(set(e.flags) <= {"startup"} for e in estimates)


def test_the_gate_drops_a_spike_within_the_range_as_an_outlier() -> None:
    """A gyroscope reading 10 rad/s off (3600 σ, within its ±34.9 rad/s) is refused; the rest is used."""
    mech, sensors, _, readings = scenario(T_END, 1)
    spike = next(i for i, r in enumerate(readings) if r.sensor == "coupler_gyro" and i >= 600)

    def change(message: dict, index: int, state: set) -> dict:
        return {**message, "value": message["value"] + 10.0} if index == spike else message

    estimates, intake = run(change)
    assert dict(intake.counters.dropped) == {"outlier": 1} and sane(estimates)
    _, ungated = run(change, gate=None)
    assert ungated.counters.dropped == {}


@pytest.mark.parametrize("delay", [0, 5])
def test_a_solver_failure_reinitializes_from_the_next_readings_and_flags_the_estimates(delay: int) -> None:
    """Without bounds and gate, an accelerometer cov of 1e-300 leaves the linear system indeterminate:
    the smoother fails twice, the estimator starts up again and the node carries on (no exit). With an
    ``output_delay`` the steps solved before the failed update and still held back are published."""
    poison = once("coupler_accelerometer", 600, cov=[1e-300, 0.0, 0.0, 1e-300])
    estimates, intake = run(poison, bounds=False, gate=None, delay=delay)
    counters = intake.estimator.counters
    assert counters["reinitializations"] == 1 and sane(estimates)
    flagged = [e for e in estimates if "reinitialized" in e.flags]
    lag = intake.estimator.config.lag
    assert [e.step for e in flagged] == list(range(lag + 1)) and "startup" in flagged[0].flags
    restart = estimates.index(flagged[0])
    gap = flagged[0].t - estimates[restart - 1].t  # the failed update, then the start-up span
    assert 0.0 < gap < 0.1 and estimates[-1].t > T_END - 0.01
    assert [e.step for e in estimates[:restart]] == list(range(restart))  # each step before the failed update
    if delay:
        undelayed, _ = run(poison, bounds=False, gate=None)
        assert restart == next(i for i, e in enumerate(undelayed) if "reinitialized" in e.flags)


def test_a_start_up_that_fails_starts_again_from_the_next_readings() -> None:
    """Without bounds, every sensor's first reading at 1e300 makes the start state non-finite: the
    buffer is dropped and the next start-up span starts the estimator."""
    estimates, intake = run(first_huge, bounds=False)
    counters = intake.estimator.counters
    assert counters["startup_failures"] == 1 and counters["reinitializations"] == 0
    assert sane(estimates) and estimates[0].t > 0.05
