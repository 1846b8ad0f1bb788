"""The online estimator: Jacobians of its stacked factors, reading attachment, timelines of late and
out-of-order readings, start-up, unknown force estimation, reset, degradation and recovery, and
deterministic replay. Scenario: replay.scenarios (four-bar, configs/sensors/fourbar.yaml),
0.6 s, seeded.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
from conftest import central_difference

from estimator.errors import MbstateError
from estimator.factors.estimation_state import dynamics_rows, kinematic_rows
from estimator.factors.frozen import FreezeSwitch, freezable
from estimator.factors.keys import X
from estimator.factors.observation_stack import (LinearizedStep, Observation, observation_rows, squared_innovation,
                                                 stacked_step_error, whitened_reading)
from estimator.node.intake import Intake
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.scales import dynamics_sigma
from replay.clocks import FixedClock
from replay.scenarios import accuracy, feed, scenario
from sensors.messages import Reading

T_END = 0.6
CONFIG = EstimatorConfig(unknown_forces=("motor",), startup_span=0.0)  # start at once (the span: its own tests)
# Central differences at h = 1e-6 on O(1)-scaled smooth functions: truncation and round-off both
# below ~1e-8 relative; 1e-6 (1 + max|J|) leaves a margin while a wrong term (O(1)) fails.
STEP, TOLERANCE = 1e-6, 1e-6


def case():
    return scenario(T_END, 1)


def estimator(config: EstimatorConfig = CONFIG, clock=None) -> OnlineEstimator:
    mech, sensors, _, _ = case()
    return OnlineEstimator(mech, sensors, config, clock or FixedClock())


def state(k: int, est: OnlineEstimator, rng: np.random.Generator) -> np.ndarray:
    """The true stacked state at sample k, perturbed; biases and λ/F random."""
    _, _, truth, _ = case()
    n, layout = est.layout.n, est.layout
    x = rng.normal(size=layout.size)
    x[:n] = truth.q[k] + 1e-3 * rng.normal(size=n)
    x[n:2 * n], x[2 * n:3 * n] = truth.qd[k], truth.qdd[k]
    return x


def assert_jacobian(fn, x: np.ndarray) -> None:
    analytic = fn(x, True)[1]
    analytic = analytic[0] if isinstance(analytic, list) else analytic
    numeric = central_difference(lambda y: fn(y, False)[0], x, STEP)
    assert np.max(np.abs(analytic - numeric)) <= TOLERANCE * (1.0 + np.max(np.abs(analytic)))


@pytest.mark.parametrize("dynamics", [True, False])
def test_model_rows_jacobian(dynamics: bool) -> None:
    est = estimator(dataclasses.replace(CONFIG, dynamics=dynamics))
    x = state(100, est, np.random.default_rng(0))
    assert_jacobian(est.model.rows, x)
    if dynamics:  # e vanishes on the truth (λ, F true) up to the simulation's own error
        mech, _, truth, _ = case()
        x = np.zeros(est.layout.size)
        x[:15] = np.concatenate((truth.q[100], truth.qd[100], truth.qdd[100]))
        x[est.layout.lam], x[est.layout.force] = truth.lam[100][list(est.layout.rows)], truth.f[100]
        assert np.max(np.abs(dynamics_rows(mech, est.layout, est.model.rows.args[2], None, None, None, x, False)[0])) < 1e-8
    else:
        assert kinematic_rows is est.model.rows.func


def without_loss(term):
    sensor = copy.copy(term.sensor)
    sensor.params = dataclasses.replace(sensor.params, loss=None)
    return dataclasses.replace(term, sensor=sensor)


@pytest.mark.parametrize("model", ["walk", "smooth"])
@pytest.mark.parametrize("order", [2, 3])
def test_the_prediction_satisfies_the_process_relation(order: int, model: str) -> None:
    """x_k predicted from random past states (q̈, λ, Ḟ or F, b held; F moved on by h Ḟ) makes every
    row of the native process factor vanish: its Adams-Moulton rows, its random walks and the
    smooth force model's trapezoid, an independent formulation."""
    est = estimator(dataclasses.replace(CONFIG, integrator_order=order, force_model=model))
    rng = np.random.default_rng(3)
    est.states = {j: rng.normal(size=est.layout.size) for j in range(4)}
    relation = est.drafter.process(order, tuple(est.layout.integrated),
                                   [est.layout] * order).relation  # on the shared columns s of each state
    states = [est.states[j] for j in range(4 - order, 3)] + [est.drafter.predict(3, est.states)]
    residual = sum(block @ x[est.layout.shared] for block, x in zip(relation.blocks, states)) - relation.rhs
    assert np.max(np.abs(residual)) < 1e-12


@pytest.mark.parametrize("sensor", ["coupler_gyro", "crank_encoder", "coupler_accelerometer", "rocker_load_cell"])
@pytest.mark.parametrize("delta", [0.0, 3e-4])
def test_observation_rows_jacobian_with_shift_and_bias(sensor: str, delta: float) -> None:
    est = estimator()
    term = without_loss(est.terms[sensor])
    x = state(200, est, np.random.default_rng(1))
    observation = Observation(term, np.full(term.sensor.dimension, 0.3), term.whitening(None), delta)
    assert_jacobian(lambda y, jac: observation_rows(observation, y, jac), x)


def test_robust_loss_reweights_error_and_jacobian_by_the_same_factor() -> None:
    """IRLS (module docstring of observation_stack): both scaled by √w, w = min(1, k/|e|) for Huber."""
    est = estimator()
    term = est.terms["coupler_gyro"]  # huber, k = 1.345
    x = state(200, est, np.random.default_rng(2))
    for z in (0.0, 5.0):
        robust = observation_rows(Observation(term, np.array([z]), term.whitening(None), 0.0), x)
        plain = observation_rows(Observation(without_loss(term), np.array([z]), term.whitening(None), 0.0), x)
        scale = np.sqrt(min(1.0, 1.345 / abs(plain[0][0])))
        np.testing.assert_allclose(robust[0], scale * plain[0], rtol=1e-12)
        np.testing.assert_allclose(robust[1], scale * plain[1], rtol=1e-12)


def test_whitened_reading_gives_the_rows_and_the_distance_before_the_robust_weight() -> None:
    """whitened_reading: observation_rows and squared_innovation in one evaluation, the distance that of
    the plain residual |W r|² even where the robust loss scales the rows down."""
    est = estimator()
    term = est.terms["coupler_gyro"]  # huber, k = 1.345
    x = state(200, est, np.random.default_rng(2))
    for z, delta in ((0.0, 0.0), (5.0, 3e-4)):
        observation = Observation(term, np.array([z]), term.whitening(None), delta)
        error, jacobian, distance = whitened_reading(observation, x)
        expected_error, expected_jacobian = observation_rows(observation, x)
        np.testing.assert_array_equal(error, expected_error)
        np.testing.assert_array_equal(jacobian, expected_jacobian)
        assert distance == pytest.approx(squared_innovation(observation, x, delta), rel=1e-12)
    assert distance > error @ error  # the loss weighed the far reading down


def test_a_reading_off_the_grid_is_compared_at_its_own_stamp() -> None:
    """The Taylor shift: an encoder reading taken δ = 1 ms after the state x_k (the truth is sampled
    every ms; attached readings have |δ| ≤ 0.5 ms) has an error of O(δ³) on the true x_k, against
    δ θ̇ (~1e-3 rad at the scenario's speeds) without the shift."""
    mech, _, truth, _ = case()
    est = estimator()
    term, k = est.terms["crank_encoder"], 300
    x = np.zeros(est.layout.size)
    x[:15] = np.concatenate((truth.q[k], truth.qd[k], truth.qdd[k]))
    later = term.sensor.measurement(truth.q[k + 1], jac=False)[0]
    shifted = observation_rows(Observation(term, later, 1.0, 1e-3), x, False)[0]
    nearest = observation_rows(Observation(term, later, 1.0, 0.0), x, False)[0]
    assert abs(shifted[0]) < 1e-6 and abs(nearest[0]) > 1e-4


def test_a_step_linearized_reading_by_reading_equals_its_whole_error_function() -> None:
    """LinearizedStep (the model rows when drafted, each reading's rows as it arrives) against
    stacked_step_error evaluated once at x0, also after the oldest reading is dropped; a factor's
    error function seeded with it answers a linearization at x0 without evaluating anything."""
    est = estimator()
    x0 = state(200, est, np.random.default_rng(4))
    observations = [Observation(term, np.full(term.sensor.dimension, 0.3), term.whitening(None), delta)
                    for term, delta in zip(est.terms.values(), (-4e-4, 0.0, 2e-4, 5e-4))]
    rows = LinearizedStep(est.model.rows, est.model.weights, x0)
    for observation in observations:
        rows.add(observation)
    for expected in (observations, observations[1:]):
        e, [jacobian] = rows.linearization()
        whole_e, [whole_jacobian] = stacked_step_error(est.model.rows, est.model.weights, expected)(x0)
        np.testing.assert_array_equal(e, whole_e)
        np.testing.assert_array_equal(jacobian, whole_jacobian)
        rows.drop_oldest()
    evaluated = []

    def counted(x, jac=True):
        evaluated.append(x)
        return rows.error_function()(x, jac)

    seeded = freezable(counted, FreezeSwitch(), (x0, rows.linearization()))
    np.testing.assert_array_equal(seeded(x0.copy())[0], rows.linearization()[0])
    assert evaluated == []
    seeded(x0 + 1e-3)
    assert len(evaluated) == 1


def test_start_up_waits_for_every_sensor_then_solves_the_initial_state() -> None:
    mech, _, truth, readings = case()
    est = estimator()
    last = max(next(i for i, r in enumerate(readings) if r.sensor == name) for name in est.terms)
    for reading in readings[:last]:
        assert est.add(reading) == "pending"
        assert est.advance(reading.t) == []
    assert not est.started
    est.add(readings[last])
    est.advance(readings[last].t)
    assert est.started
    out = []
    for reading in readings[last + 1:last + 40]:
        est.add(reading)
        out += est.advance(reading.t)
    assert out[0].step == 0 and "startup" in out[0].flags
    k = int(round(out[0].t / 1e-3))
    assert abs(out[0].q[4] - truth.q[k, 4]) < 3e-3  # from the encoder (quantum 1.5e-3) and the constraints


def test_start_up_span_fits_the_encoder_and_starts_the_forces_from_the_equations_of_motion() -> None:
    """With a start-up span the grid starts at its middle, t0, from the cubic fit of the encoder (value,
    rate, acceleration at t0) and the unknown torque from M q̈ + Φqᵀλ = Q + E F there."""
    _, _, truth, readings = case()
    est = estimator(dataclasses.replace(CONFIG, startup_span=0.05))
    out = run_until(est, readings, 0.049)
    assert not est.started and out == []
    out = run_until(est, readings, 0.06)
    k = int(round(out[0].t / 1e-3))
    assert est.started and 0.024 < out[0].t < 0.027 and "startup" in out[0].flags
    assert abs(out[0].qd[4] - truth.qd[k, 4]) < 0.05 * np.abs(truth.qd[:, 4]).max()
    assert abs(out[0].forces["motor"] - truth.f[k, 0]) < 0.1 * np.ptp(truth.f[:, 0])


def test_start_up_timeout_starts_without_a_silent_sensor() -> None:
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, startup_timeout=0.005))
    for reading in [r for r in readings if r.sensor != "rocker_load_cell"][:30]:
        est.add(reading)
        est.advance(reading.t)
    assert est.started


def run_until(est: OnlineEstimator, readings: list[Reading], t: float) -> list:
    out = []
    for reading in readings:
        if reading.t > t:
            break
        est.add(reading)
        out += est.advance(reading.t)
    return out


def test_timeline_out_of_order_and_late_readings() -> None:
    """Lag 10, grid 1 ms from S = t0 (set at start-up); readings fed in stamp order up to step S+30,
    except three encoder readings held back (✗):

        step:      S ...  S+19 ... S+25 ... S+30 | S+31 ... S+35
        encoder:   e ...   ✗   ...  ✗   ...  e   |          ✗
                                                  ^ newest processed: S+30, window S+20 … S+30
        then they arrive:  S+19 -> late (older than the window), S+25 -> used (own factor on x_25),
                           S+35 -> pending (its step is not processed yet)

    and the used reading changes the estimate of step S+25 at the next update (smoothing)."""
    _, _, _, readings = case()
    est = estimator()
    fed = 0
    while not est.started:
        est.add(readings[fed])
        est.advance(readings[fed].t)
        fed += 1
    t0 = est.grid.t0
    held = {offset: next(r for r in readings if r.sensor == "crank_encoder" and abs(r.t - t0 - offset * 1e-3) < 4e-4)
            for offset in (19, 25, 35)}
    rest = [r for r in readings[fed:] if all(r is not h for h in held.values())]
    out = run_until(est, rest, t0 + 31.1e-3)
    assert out[-1].step == 30
    before = est.smoother.estimate(X(25))
    assert est.add(held[19]) == "late"
    assert est.add(held[25]) == "used"
    assert est.add(held[35]) == "pending"
    run_until(est, [r for r in rest if r.t > t0 + 31.1e-3], t0 + 32.1e-3)
    assert not np.array_equal(before, est.smoother.estimate(X(25)))
    assert (est.counters["late"], est.counters["used"]) == (1, 1)


def test_unknown_motor_torque_and_crank_angle_are_estimated() -> None:
    mech, sensors, truth, readings = case()
    estimates, counters, _ = feed(mech, sensors, CONFIG, readings, FixedClock())
    crank, torque = accuracy(truth, estimates)
    assert crank < 2 * np.pi / 4096 / 4  # observed 4e-5 rad on 5 s
    assert torque < 0.5  # N·m, observed 0.09 on 5 s; τ swings 10..30 N·m
    assert counters["steps"] == len(estimates) and counters["late"] == counters["dropped"] == 0
    assert all(set(e.forces) == {"motor"} and e.lam.shape == (mech.m,) for e in estimates)


def test_kinematics_only_ignores_the_load_cell_and_computes_forces_by_inverse_dynamics() -> None:
    mech, sensors, truth, readings = case()
    estimates, counters, _ = feed(mech, sensors, dataclasses.replace(CONFIG, dynamics=False), readings, FixedClock())
    assert counters["ignored"] == sum(r.sensor == "rocker_load_cell" for r in readings)
    crank, torque = accuracy(truth, estimates)
    assert crank < 2 * np.pi / 4096 / 4 and torque < 1.0


def test_native_step_factors_equal_python_factors_never_relinearized() -> None:
    """relinearize_threshold null (each step factor a native factor, linearized once) against a
    threshold never reached (Python factors whose memory answers GTSAM at the prediction): two code
    paths, the same numbers (the native path's own relinearization check off)."""
    mech, sensors, _, readings = case()
    native, python = (feed(mech, sensors, dataclasses.replace(CONFIG, relinearize_threshold=threshold,
                                                              max_relinearizations=0), readings,
                           FixedClock())[0] for threshold in (None, 1e9))
    assert len(native) == len(python)
    assert all(np.array_equal(a.q, b.q) and a.forces == b.forces for a, b in zip(native, python))


def test_replay_with_a_fixed_clock_is_deterministic() -> None:
    mech, sensors, _, readings = case()
    first, second = (feed(mech, sensors, CONFIG, readings, FixedClock())[0] for _ in range(2))
    assert len(first) == len(second)
    assert all(np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd) and a.forces == b.forces
               for a, b in zip(first, second))


def test_a_realtime_feed_takes_the_stamps_time_and_gives_the_same_estimates() -> None:
    """The benchmark's --realtime feed (readings released at their stamps) against the fast feed."""
    mech, sensors, _, readings = case()
    first = [r for r in readings if r.t <= 0.1]
    paced, _, wall = feed(mech, sensors, CONFIG, first, FixedClock(), realtime=True)
    fast = feed(mech, sensors, CONFIG, first, FixedClock())[0]
    assert wall >= first[-1].t - first[0].t
    assert len(paced) == len(fast) > 50
    assert all(np.array_equal(a.q, b.q) and a.forces == b.forces for a, b in zip(paced, fast))


@pytest.mark.parametrize("threshold, levels", [(None, 3), (1e9, 4)])
def test_slow_steps_degrade_coalesce_and_recover_level_by_level(threshold: float | None, levels: int) -> None:
    """A clock that makes every update last 3.5 ms (budget 1 ms): overruns raise the level up to
    coalescing max_coalesce = 4 steps (0.875 ms per step: under budget, so it stays there); a fast
    clock then lowers the level one step at a time after recover_steps calm steps each. Level 1
    (fewer relinearizations, no sigmas) is skipped when it changes nothing: 0, 2, 3, 4 by default,
    0 … 4 with relinearization on."""
    _, _, _, readings = case()
    clock = FixedClock(3.5e-3)  # the clock is read twice per update: 3.5 ms between
    config = dataclasses.replace(CONFIG, recover_steps=20, max_coalesce=4, relinearize_threshold=threshold)
    est = estimator(config, clock)
    out = run_until(est, readings, 0.3)
    counters = est.counters
    assert counters["overruns"] > 0 and counters["level"] == 4
    assert counters["coalesced_steps"] > 0 and counters["degraded_steps"] > 0
    assert any("coalesced" in e.flags and "degraded" in e.flags for e in out)
    assert [e.step for e in out] == list(range(len(out)))  # every step still published once, in order
    clock.tick = 0.0
    out = run_until(est, [r for r in readings if r.t > 0.3], T_END)
    assert est.counters["level"] == 0 and est.counters["recoveries"] == levels
    assert sum("recovered" in e.flags for e in out) == levels


@pytest.mark.parametrize("tick", [0.0, 3.5e-3])
def test_drafting_ahead_changes_no_number(tick: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps drafted between updates (all steps of the next update when coalescing) against every step
    drafted inside its update (drafting ahead switched off): the same estimates, at level 0 and while
    coalescing up to 4 steps (every update 3.5 ms, as in the test above)."""
    _, _, _, readings = case()
    config = dataclasses.replace(CONFIG, max_coalesce=4)
    ahead = estimator(config, FixedClock(tick))
    expected = run_until(ahead, readings, 0.3)
    monkeypatch.setattr(OnlineEstimator, "_between_steps", lambda self: None)
    inside = estimator(config, FixedClock(tick))
    out = run_until(inside, readings, 0.3)
    assert ahead.counters == inside.counters
    assert (ahead.counters["coalesced_steps"] > 0) == (tick > 0)
    assert [e.update_steps for e in out] == [e.update_steps for e in expected]
    assert all(np.array_equal(a.q, b.q) and np.array_equal(a.qdd, b.qdd) and a.forces == b.forces
               for a, b in zip(out, expected))


def test_a_reading_of_the_next_step_is_evaluated_once_for_the_outlier_gate_and_its_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reading of the next step to solve is checked by the outlier gate at that step's draft guess,
    where its rows are linearized as it arrives: its sensor is evaluated once for both. A reading of
    the step after it is checked against the next step's guess carried on (one evaluation; its rows
    come when its step is drafted)."""
    _, _, _, readings = case()
    est = estimator()
    run_until(est, readings, 0.1)  # past the first window, where the gate is off
    calls = []
    for term in est.terms.values():
        if term is not None:
            def counted(*blocks, jac=True, _measurement=term.sensor.measurement):
                calls.append(1)
                return _measurement(*blocks, jac=jac)
            monkeypatch.setattr(term.sensor, "measurement", counted)
    evaluations = {0: [], 1: []}  # by step after the next one to solve
    for reading in (r for r in readings if 0.1 < r.t <= 0.2):
        est._between_steps()  # the drafting add does first, done here so as not to count it
        ahead, before = est.grid.step(reading.t) - est.next_step, len(calls)
        assert est.add(reading) == "pending"
        evaluations[ahead].append(len(calls) - before)
        if ahead == 0:  # the rows the gate's evaluation left are the reading's rows at the draft's guess
            rows = est.readings.drafts[est.next_step].rows
            (e, [jacobian]), (fresh_e, [fresh_jacobian]) = rows.linearization(), rows.at(rows.x0).linearization()
            np.testing.assert_array_equal(e, fresh_e)
            np.testing.assert_array_equal(jacobian, fresh_jacobian)
        est.advance(reading.t)
    assert len(evaluations[0]) > 100 and set(evaluations[0]) == {1}
    assert set(evaluations[1]) <= {1}


class PatternClock:
    """Each update (two clock reads) lasts the next duration of ``durations`` [s], cyclically."""

    def __init__(self, durations: list[float]) -> None:
        self.durations, self.now, self.reads = durations, 0.0, 0

    def __call__(self) -> float:
        if self.reads % 2:
            self.now += self.durations[(self.reads // 2) % len(self.durations)]
        self.reads += 1
        return self.now


def test_recovery_is_judged_on_the_mean_latency_not_on_every_step() -> None:
    """One 3.5 ms update (budget 1 ms) degrades to level 1; then nine steps of 0.2 ms and one of 0.8 ms
    (over half the budget, under the budget) in turn: no overrun, mean 0.26 ms < 0.5 ms, so the level
    comes back to 0 after recover_steps steps although no 20 steps in a row are all under half."""
    _, _, _, readings = case()
    clock = PatternClock([3.5e-3])
    config = dataclasses.replace(CONFIG, recover_steps=20, max_coalesce=1, relinearize_threshold=1e9)
    est = estimator(config, clock)
    run_until(est, readings, 0.1)
    assert est.counters["level"] == 1 and est.counters["overruns"] > 0
    overruns = est.counters["overruns"]
    clock.durations, clock.reads = [2e-4] * 9 + [8e-4], 0
    out = run_until(est, [r for r in readings if r.t > 0.1], 0.2)
    assert est.counters["overruns"] == overruns
    assert est.counters["level"] == 0 and est.counters["recoveries"] == 1
    assert sum("recovered" in e.flags for e in out) == 1


def test_pending_readings_are_bounded() -> None:
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, max_pending=5))
    run_until(est, readings, 0.05)
    t = est.grid.t0
    future = [dataclasses.replace(r, t=r.t + 0.1) for r in readings if 0.06 < r.t < 0.07]
    assert all(est.add(r) == "pending" for r in future)
    assert est.counters["dropped"] >= len(future) - 5 and est.readings.count == 5
    assert t == est.grid.t0


def test_readings_of_the_drafted_step_count_towards_the_bound() -> None:
    """The next step is drafted once the previous one is out, and its readings are linearized as they
    arrive: they are pending readings like any other, dropped oldest first beyond max_pending. (The
    gyroscope's first reading, restamped here, is no outlier test: the gate is off.)"""
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, max_pending=5, outlier_gate=None))
    run_until(est, readings, 0.05)
    gyro = next(r for r in readings if r.sensor == "coupler_gyro")
    offsets = 1e-5 * np.arange(8)
    before = est.readings.count  # readings already in for steps not yet processed
    assert all(est.add(dataclasses.replace(gyro, t=est.grid.time(est.next_step) + d)) == "pending" for d in offsets)
    assert list(est.readings.drafts) == [est.next_step]
    assert [o.delta for o in est.readings.drafts[est.next_step].rows.observations[-3:]] == pytest.approx(list(offsets[-3:]))
    assert est.counters["dropped"] == before + 8 - 5 and est.readings.count == 5


def test_when_coalescing_every_step_of_the_next_update_is_drafted_and_bounded() -> None:
    """At level c ≥ 2 the c steps of the next update are drafted and take their readings; beyond
    max_pending, the oldest reading of the earliest drafted step that has one is dropped (the gate off:
    the restamped reading is no outlier test)."""
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, max_pending=4, max_coalesce=3, outlier_gate=None),
                    FixedClock(3.5e-3))
    run_until(est, readings, 0.1)
    first = est.next_step
    assert est.counters["level"] == 3 and list(est.readings.drafts) == [first, first + 1, first + 2]
    counts = [len(draft.rows.observations) for draft in est.readings.drafts.values()]
    gyro = next(r for r in readings if r.sensor == "coupler_gyro")
    dropped, added = est.counters["dropped"], 0
    while est.counters["dropped"] == dropped:
        assert est.add(dataclasses.replace(gyro, t=est.grid.time(first + 2))) == "pending"
        added += 1
    expected = counts[:2] + [counts[2] + added]
    expected[next(i for i, count in enumerate(counts) if count)] -= 1
    assert [len(draft.rows.observations) for draft in est.readings.drafts.values()] == expected
    assert est.readings.count == 4


def test_the_final_advance_processes_the_due_steps_a_coalesced_update_still_waits_for() -> None:
    """Coalescing 4 steps (every update 3.5 ms, budget 1 ms), the input ends with 1–3 steps due (t_k +
    delay ≤ the newest stamp) beyond the last update: ``advance`` keeps them for a full group,
    ``advance(final=True)`` processes them in one update of their own, and then there is none left."""
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, max_coalesce=4), FixedClock(3.5e-3))
    out: list = []
    for reading in readings:
        est.add(reading)
        out += est.advance(reading.t)
        due = int(np.floor((reading.t - out[0].t) / CONFIG.dt - CONFIG.delay_steps + 1e-9)) if out else -1
        if est.counters["level"] == 4 and due > out[-1].step:
            break
    held = due - out[-1].step
    assert 1 <= held <= 3 and est.advance(reading.t) == []
    last = est.advance(reading.t, final=True)
    assert [e.step for e in last] == list(range(out[-1].step + 1, due + 1))
    assert all(e.update_steps == held and ("coalesced" in e.flags) == (held > 1) for e in last)
    assert [e.step for e in out + last] == list(range(due + 1)) and est.advance(reading.t, final=True) == []


def test_reset_returns_to_start_up_and_keeps_counters() -> None:
    _, _, _, readings = case()
    est = estimator()
    run_until(est, readings, 0.1)
    steps = est.counters["steps"]
    est.reset()
    assert not est.started and est.counters["steps"] == steps and est.counters["resets"] == 1
    out = run_until(est, [r for r in readings if r.t > 0.1], 0.2)
    assert est.started and out[0].step == 0 and "startup" in out[0].flags


def test_unknown_actuator_is_an_error() -> None:
    with pytest.raises(MbstateError, match="unknown actuator 'brake'"):
        estimator(dataclasses.replace(CONFIG, unknown_forces=("brake",)))


def test_publish_sigmas_gives_marginal_standard_deviations() -> None:
    _, _, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, publish_sigmas=True))
    out = run_until(est, readings, 0.2)
    sigma = out[-1].sigma
    assert sigma is not None and set(sigma) == {"q", "qd", "forces"}
    assert 0.0 < sigma["q"][4] < 1e-3 and 0.0 < sigma["forces"][0] < 10.0


def test_a_reset_first_estimates_the_steps_a_coalesced_update_still_waits_for() -> None:
    """The node's reset (Intake.reset) forgets the readings only after the due steps are out: while
    coalescing 4 steps, the 1–3 steps held back for a full group are returned, none is lost."""
    mech, sensors, _, readings = case()
    est = estimator(dataclasses.replace(CONFIG, max_coalesce=4), FixedClock(3.5e-3))
    intake = Intake(est, sensors.dimensions(), max_future_s=1.0, budget_s=1e-3)
    out: list = []
    for reading in readings:
        out += intake.handle(reading.to_map())
        due = int(np.floor((reading.t - out[0].t) / CONFIG.dt - CONFIG.delay_steps + 1e-9)) if out else -1
        if est.counters["level"] == 4 and due > out[-1].step:
            break
    held = intake.reset()
    assert [e.step for e in out + held] == list(range(due + 1)) and not est.started


def test_the_plausibility_check_measures_on_the_defaults_scale_or_looser() -> None:
    """StepModel.off_by: a state off its constraint rows by a fixed amount is as far off under rows a
    thousand times tighter than the defaults (tighter rows do not make the solver-failure check
    stricter), and proportionally less far under rows ten times looser."""
    default = estimator()
    x = state(5, default, np.random.default_rng(4))
    x[default.layout.lam] = 0.0
    off = default.model.off_by(x)
    sigma = dynamics_sigma(default.mech, CONFIG)  # auto: the mechanism's own scale
    tight = estimator(dataclasses.replace(CONFIG, constraint_sigma=1e-8, velocity_constraint_sigma=3e-7,
                                          acceleration_constraint_sigma=1e-5, dynamics_sigma=1e-3 * sigma))
    loose = estimator(dataclasses.replace(CONFIG, constraint_sigma=1e-4, velocity_constraint_sigma=3e-3,
                                          acceleration_constraint_sigma=1e-1, dynamics_sigma=10 * sigma))
    assert off > 1.0
    assert tight.model.off_by(x) == pytest.approx(off, rel=1e-12)
    assert loose.model.off_by(x) == pytest.approx(off / 10, rel=1e-12)
    assert np.max(np.abs(tight.model.weighted(x))) == pytest.approx(1000 * off, rel=1e-12)
    whitened = tight.model.weighted(x)
    assert tight.model.off_by(x, whitened) == pytest.approx(off, rel=1e-12)
