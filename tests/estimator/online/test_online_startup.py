"""Start-up of the online estimator (estimator.online.startup) and the relinearization of the window."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.constraints import constraint_values
from estimator.errors import MbstateError
from estimator.factors.observation_stack import LinearizedStep, weighted_model_rows
from estimator.kinematics import solve_velocity_problem
from estimator.mechanism_file import load_mechanism
from estimator.online import estimator as online_estimator
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.startup import KnownVelocity, determines_position, fitted_motion, initial_velocity, start_anchor
from replay.clocks import FixedClock
from replay.scenarios import accuracy, feed, scenario
from replay.simulation import forward_truth
from sensors.config import build_sensors
from sensors.messages import Reading
from sensors.virtual import simulate_readings


def readings_of(values: np.ndarray, t: np.ndarray) -> list[Reading]:
    return [Reading(sensor="s", t=float(ti), seq=i, value=np.array([v]), cov=None)
            for i, (ti, v) in enumerate(zip(t, values))]


def test_the_fit_recovers_a_cubic_exactly_and_states_its_uncertainty() -> None:
    """Closed form: z = 0.3 + 2 s − 7 s²/2 + 40 s³, s = t − t0, so (z, ż, z̈)(t0) = (0.3, 2, −7)."""
    t0, t = 0.025, np.linspace(0.0, 0.05, 51)
    s = t - t0
    motion = fitted_motion(readings_of(0.3 + 2 * s - 3.5 * s ** 2 + 40 * s ** 3, t), t0, 1e-3, wraps=False)
    assert motion.z == pytest.approx([0.3], abs=1e-12)
    assert motion.rates[:, 0] == pytest.approx([2.0, -7.0], abs=1e-9)
    assert np.all(np.isfinite(motion.sigmas)) and motion.sigmas[0] < 1e-3 < motion.sigmas[1] < motion.sigmas[2]
    single = fitted_motion(readings_of(np.array([0.1]), np.array([0.0])), 0.0, 1e-3, wraps=False)
    assert single.sigmas[0] == pytest.approx(1e-3) and np.all(np.isinf(single.sigmas[1:]))


def test_the_fit_unwraps_angles_across_pi() -> None:
    t = np.linspace(0.0, 0.02, 21)
    angles = np.pi - 0.01 + 1.0 * t  # crosses π at t = 0.01
    wrapped = (angles + np.pi) % (2 * np.pi) - np.pi
    motion = fitted_motion(readings_of(wrapped, t), 0.0, 1e-4, wraps=True)
    assert motion.rates[0, 0] == pytest.approx(1.0, abs=1e-6)
    assert motion.z == pytest.approx([np.pi - 0.01], abs=1e-9)


def off(rows: LinearizedStep, x: np.ndarray) -> float:
    """The largest linearization error of the model rows at x, in σ."""
    exact = weighted_model_rows(rows.model, rows.model_weights, x, jac=False)[0]
    return float(np.max(np.abs(rows.linearization_residual(x, exact))))


def test_linearization_error_is_zero_at_the_point_and_quadratic_away_from_it() -> None:
    mech, sensors, _, _ = scenario(0.05, 1)
    est = OnlineEstimator(mech, sensors, EstimatorConfig(unknown_forces=("motor",)), FixedClock())
    x0 = np.zeros(est.layout.size)
    x0[:mech.n] = mech.q0
    x0[mech.n:2 * mech.n] = np.linspace(0.5, 1.0, mech.n)
    rows = LinearizedStep(est.model.rows, est.model.weights, x0)
    direction = np.random.default_rng(3).normal(size=x0.shape)
    assert off(rows, x0) == 0.0
    small, large = (off(rows, x0 + step * direction) for step in (1e-4, 2e-4))
    assert large == pytest.approx(4 * small, rel=0.05)
    assert off(rows.at(x0 + 1e-4 * direction), x0 + 1e-4 * direction) == 0.0


def test_tight_constraint_rows_keep_the_accuracy_without_relinearizing() -> None:
    """At σ 1e-5 m/s² (acceleration rows) and 1e-6 m/s (velocity rows) the rows' linearization error
    is far above its σ, but the dependent coordinates eliminated inside each step absorb it: nothing
    reaches the independent ones, nothing is linearized again, and the four-bar's crank and torque
    are as accurate as with the default σ."""
    mech, sensors, truth, readings = scenario(1.0, 1)
    results = []
    for acceleration, velocity in ((1e-2, 3e-4), (1e-5, 1e-6)):
        config = EstimatorConfig(unknown_forces=("motor",), acceleration_constraint_sigma=acceleration,
                                 velocity_constraint_sigma=velocity)
        estimates, counters, _ = feed(mech, sensors, config, readings, FixedClock())
        assert counters["relinearizations"] == 0 and counters["solver_recoveries"] == 0
        results.append(accuracy(truth, estimates))
    (crank, torque), (tight_crank, tight_torque) = results
    assert tight_crank < 1.05 * crank < 2 * np.pi / 4096 / 4 and tight_torque < 1.05 * torque < 0.5


def far_start(duration: float):
    """The four-bar released 0.3 rad from the file's pose, a gyroscope on the coupler: (mech, sensors,
    crank's index, truth at 1 kHz, readings)."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    sensors = build_sensors({"sensors": {"gyro": {"kind": "gyroscope", "body": "coupler", "rate": 1000,
                                                  "noise": {"density": 8.7e-5}}}}, mech, "test")
    crank = mech.coordinate_names.index("theta0")
    truth = forward_truth(mech, start_anchor(mech, (("theta0", float(mech.q0[crank] + 0.3)),)), np.zeros(mech.n),
                          1e-3, duration)
    return mech, sensors, crank, truth, simulate_readings(sensors.sensors, truth, 2)


def test_a_start_far_from_the_readings_is_relinearized_and_converges() -> None:
    """Released 0.3 rad from the file's pose, read by a gyroscope on the coupler: the start is a guess,
    the window's linearization is off by more than the tolerance while the readings pull it over, so
    it is linearized again (counted), and the crank converges to the truth."""
    mech, sensors, crank, truth, readings = far_start(1.5)
    estimates, counters, _ = feed(mech, sensors, EstimatorConfig(), readings, FixedClock())
    assert counters["relinearizations"] > 0 and counters["solver_recoveries"] == 0
    late = [e for e in estimates if e.t >= 1.0]
    assert max(abs(e.q[crank] - truth.q[int(round(e.t / 1e-3)), crank]) for e in late) < 1e-2


def test_a_short_window_is_linearized_again_whole_so_the_model_error_states_keep_a_far_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default window (10 steps at 1 kHz, shorter than SHORT_WINDOW) carries the model-error states, and
    while the start is pulled over it is linearized again whole when its oldest step is off: the crank
    converges. Swapping only the oldest step and its share of the window (one step), the steps between
    the ends stay linearized at their predictions, far off, and the states take the start's error up as
    the model's: the crank is lost."""
    mech, sensors, crank, truth, readings = far_start(1.5)
    config = EstimatorConfig()
    assert OnlineEstimator(mech, sensors, config).config.gravity_sigma is not None
    whole, _, _ = feed(mech, sensors, config, readings, FixedClock())
    monkeypatch.setattr(online_estimator, "SHORT_WINDOW", 0.0)
    ends, _, _ = feed(mech, sensors, config, readings, FixedClock())
    late = [max(abs(e.q[crank] - truth.q[int(round(e.t / 1e-3)), crank]) for e in run if e.t >= 1.0)
            for run in (whole, ends)]
    assert late[0] < 1e-2 < 0.1 < late[1]


def test_the_old_end_of_the_window_is_linearized_again_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the oldest step's linearization is off, the steps after it at the old end that are off too are
    linearized again in the same update (one re-elimination of the window for all): fewer than half the
    updates relinearize than when each is swapped alone, as it becomes the oldest, and the crank is as
    accurate once the start is pulled over."""
    mech, sensors, crank, truth, readings = far_start(1.0)
    config = EstimatorConfig(lag=60, acceleration_noise=0.0, acceleration_constraint_sigma=1e-5,
                             velocity_constraint_sigma=1e-7, dynamics_sigma=1e-6)
    together, together_counters, _ = feed(mech, sensors, config, readings, FixedClock())
    monkeypatch.setattr(online_estimator, "OLD_END_SHARE", 0.0)  # the oldest alone (the window is not short)
    alone, alone_counters, _ = feed(mech, sensors, config, readings, FixedClock())
    assert together_counters["relinearizations"] < 0.5 * alone_counters["relinearizations"]
    assert len(together) == len(alone) and together_counters["solver_recoveries"] == 0
    late = [max(abs(e.q[crank] - truth.q[int(round(e.t / 1e-3)), crank]) for e in run if e.t >= 0.3)
            for run in (together, alone)]
    assert late[0] < min(1.5 * late[1], 1e-3)


def test_a_known_start_velocity_is_the_velocity_problem_on_the_constraints() -> None:
    """estimator.online.startup.initial_velocity with the five-bar's two crank rates known and no readings:
    the solution of the kinematic velocity problem (estimator.kinematics) with those rates held."""
    mech = load_mechanism(MECHANISMS / "five_bar.yaml")
    sensors = build_sensors({"sensors": {"e": {"kind": "encoder", "body": "left_crank", "counts": 4096,
                                               "rate": 100}}}, mech, "test")
    layout = OnlineEstimator(mech, sensors, EstimatorConfig()).layout
    q = start_anchor(mech)
    names = mech.coordinate_names
    held = [i for i, name in enumerate(names) if name in ("left", "right")]
    known = KnownVelocity(((names[held[0]], 1.2), (names[held[1]], -0.4)), 1e-6)
    qd = initial_velocity(mech, layout, q, {}, {}, {}, 0.0, known)
    np.testing.assert_allclose(qd, solve_velocity_problem(mech, q, np.array([1.2, -0.4]), held), atol=1e-6)


def test_a_rig_released_from_rest_starts_at_rest() -> None:
    """The literature four-bar released from rest, a crank encoder of 1° noise at 200 Hz: started at the
    first reading with ``initial_velocity: rest``, the crank rate over the first 0.5 s is several times
    closer to the truth than the rate fitted from the first 50 ms of readings."""
    mech = load_mechanism(REPO / "configs/mechanisms/fourbar_benchmark.yaml")
    sensors = build_sensors({"sensors": {"e": {"kind": "encoder", "body": "crank", "rate": 200,
                                               "noise": {"sigma": 0.0174533}}}}, mech, "test")
    crank = mech.coordinate_names.index("crank")
    truth = forward_truth(mech, mech.q0, np.zeros(mech.n), 5e-3, 0.6)
    readings = list(simulate_readings(sensors.sensors, truth, 2))

    def rate_error(config: EstimatorConfig) -> float:
        estimates, _, _ = feed(mech, sensors, config, readings, FixedClock())
        early = [e for e in estimates if e.t <= 0.5]
        return float(np.sqrt(np.mean([(e.qd[crank] - truth.qd[int(round(e.t / 5e-3)), crank]) ** 2 for e in early])))

    base = EstimatorConfig(rate=200, lag=50)
    at_rest = rate_error(dataclasses.replace(base, startup_span=0.0, initial_velocity=(("crank", 0.0),),
                                             velocity_sigma=0.02))
    assert at_rest < rate_error(base) / 3


def test_the_start_anchor_holds_the_initial_state_and_assembles() -> None:
    mech, _, _, _ = scenario(0.05, 1)
    anchor = start_anchor(mech, (("theta0", 0.3),))
    assert anchor[mech.coordinate_names.index("theta0")] == pytest.approx(0.3)
    assert np.max(np.abs(constraint_values(mech, anchor))) < 1e-10
    with pytest.raises(MbstateError, match="estimator.initial_state: the mechanism does not assemble"):
        start_anchor(mech, (("x1", 100.0),))


@pytest.mark.parametrize(("mechanism", "sensors", "fixed"), [
    ("fourbar_crank.yaml", {"e": {"kind": "encoder", "body": "crank", "counts": 4096, "rate": 100}}, True),
    ("fourbar_crank.yaml", {"g": {"kind": "gyroscope", "body": "coupler", "rate": 100,
                                  "noise": {"density": 1e-4}}}, False),
    ("five_bar.yaml", {"e": {"kind": "encoder", "body": "left_crank", "counts": 4096, "rate": 100}}, False),
    ("five_bar.yaml", {"l": {"kind": "encoder", "body": "left_crank", "counts": 4096, "rate": 100},
                       "r": {"kind": "encoder", "body": "right_crank", "counts": 4096, "rate": 100}}, True),
])
def test_the_start_is_a_guess_unless_the_position_sensors_fix_every_degree_of_freedom(
        mechanism: str, sensors: dict, fixed: bool) -> None:
    """online_startup.determines_position: rank of [Φq; ∂h/∂q] equal to n, else the wide guess prior."""
    mech = load_mechanism(MECHANISMS / mechanism)
    positional = [s for s in build_sensors({"sensors": sensors}, mech, "test").sensors if s.variables == ("q",)]
    assert determines_position(mech, start_anchor(mech), positional) == fixed
