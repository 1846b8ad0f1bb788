"""The generalized-momentum observer (estimator.online.filters.momentum_observer, ``estimator.kind:
momentum_observer``): Ṁq̇ and the frame Jacobian against finite differences, the contact truth's drive
torques and torque readings against the RNEA without the wrench less Jᵀ W, the observer's step response
against its closed form, its one-line refusals, and the contact benchmark's table and CLI errors."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import MECHANISMS, REPO, cli_exit_code

from estimator.benchmarks.contact import MISSING, TOOL, contact_benchmark, contact_table
from estimator.drive_trajectory import load_drive_trajectory
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.filters.error_ekf import Measurement
from estimator.online.filters.momentum_observer import MomentumObserver
from estimator.section import Section
from estimator.spatial.dynamics import body_wrenches, inverse_dynamics, mass_matrix, mass_matrix_rate
from estimator.spatial.kinematics import body_kinematics, frame_jacobian, frame_pose
from estimator.spatial.model import load_spatial
from replay.simulation import WrenchSchedule, contact_truth
from sensors.base import State
from sensors.config import SensorSet, load_sensors

PANDA = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
PANDA_TAU = REPO / "configs" / "sensors" / "matrix" / "panda_tau.yaml"
WRENCH = np.array([0.4, -1.2, 0.7, 6.0, -9.0, 12.0])  # (m; f) [N·m; N] on the tool, in its axes


def random_states(count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(3)
    return [(rng.uniform(-2.0, 2.0, PANDA.dof), rng.uniform(-1.5, 1.5, PANDA.dof)) for _ in range(count)]


@pytest.mark.parametrize("q,qd", random_states(3))
def test_mass_matrix_rate_is_the_derivative_of_m_along_the_velocity(q: np.ndarray, qd: np.ndarray) -> None:
    """Ṁq̇ = (M(q + εq̇) − M(q − εq̇)) / 2ε · q̇; central differences err by O(ε²) ≈ 1e-12 relative at ε = 1e-6,
    rounding by ~1e-16 / ε = 1e-10 of M: the bound 1e-8 leaves a margin over both."""
    eps = 1e-6
    reference = (mass_matrix(PANDA, q + eps * qd) - mass_matrix(PANDA, q - eps * qd)) / (2 * eps) @ qd
    np.testing.assert_allclose(mass_matrix_rate(PANDA, q, qd), reference, rtol=0.0, atol=1e-8)


@pytest.mark.parametrize("q,qd", random_states(3))
def test_frame_jacobian_is_the_frame_twist_in_its_axes(q: np.ndarray, qd: np.ndarray) -> None:
    """Jᶠ q̇ = ((Rᵀ Ṙ)^∨; Rᵀ ṗ) of the tool's pose, Ṙ and ṗ by central differences along q̇ (same bound and
    reason as above); and Jᶠᵀ W = Q(q, 0, 0) − Q(q, 0, 0; W), the RNEA's work of the applied wrench."""
    eps = 1e-6
    ahead, behind = (frame_pose(PANDA, body_kinematics(PANDA, q + s * qd, qd, qd), TOOL) for s in (eps, -eps))
    rot = frame_pose(PANDA, body_kinematics(PANDA, q, qd, qd), TOOL)[0]
    spin = rot.T @ (ahead[0] - behind[0]) / (2 * eps)
    twist = np.concatenate(([spin[2, 1], spin[0, 2], spin[1, 0]], rot.T @ (ahead[1] - behind[1]) / (2 * eps)))
    jacobian = frame_jacobian(PANDA, body_kinematics(PANDA, q, qd, qd), TOOL)
    np.testing.assert_allclose(jacobian @ qd, twist, rtol=0.0, atol=1e-8)
    zero = np.zeros(PANDA.dof)
    loaded = inverse_dynamics(PANDA, q, zero, zero, wrench=body_wrenches(PANDA, {TOOL: WRENCH}), friction=False)
    np.testing.assert_allclose(jacobian.T @ WRENCH, inverse_dynamics(PANDA, q, zero, zero, friction=False) - loaded,
                               rtol=0.0, atol=1e-11)


def test_the_contact_truth_holds_its_motion_against_the_wrench() -> None:
    """contact_truth: the motion of the drive trajectory as without contact, the drive torques Q − Jᶠᵀ W
    (Q the RNEA without the wrench, Jᶠ by frame_jacobian), the torque sensors' ideal readings lessened by
    the same Jᶠᵀ W, and the wrench carried as scheduled (on for 0.02 ≤ t < 0.05)."""
    samples = load_drive_trajectory(REPO / "configs" / "trajectories" / "panda.txt", PANDA.dof)
    schedule = WrenchSchedule(TOOL, ((0.02, 0.05, WRENCH),))
    truth = contact_truth(PANDA, PANDA.joint_names, samples, 1e-3, 0.08, schedule)
    free = contact_truth(PANDA, PANDA.joint_names, samples, 1e-3, 0.08, WrenchSchedule(TOOL, ()))
    np.testing.assert_array_equal(truth.q, free.q)
    on = (truth.t >= 0.02) & (truth.t < 0.05)
    np.testing.assert_array_equal(truth.wrenches[TOOL][on], np.tile(WRENCH, (on.sum(), 1)))
    assert not truth.wrenches[TOOL][~on].any() and not free.wrenches[TOOL].any()
    torques = [s for s in load_sensors(PANDA_TAU, PANDA).sensors if s.params.kind == "joint_torque"]
    for i in np.flatnonzero(on)[::7]:
        q, qd, qdd = truth.q[i], truth.qd[i], truth.qdd[i]
        external = frame_jacobian(PANDA, body_kinematics(PANDA, q, qd, qdd), TOOL).T @ WRENCH
        np.testing.assert_allclose(truth.f[i], inverse_dynamics(PANDA, q, qd, qdd) - external, rtol=0.0, atol=1e-10)
        readings = np.array([s.measure(truth.state(i))[0] - s.measure(free.state(i))[0] for s in torques])
        np.testing.assert_allclose(readings, -external, rtol=0.0, atol=1e-10)


def test_a_constant_external_torque_is_followed_as_its_closed_form() -> None:
    """The Panda held at rest, a constant tool wrench from t = 0, ideal readings: p stays 0 and β = −τ_ext,
    so r_k = τ_ext (1 − (1 + K h)^{−k}) exactly (the implicit step) and within K h / 2 · max(Kt e^{−Kt}) =
    0.92 % of τ_ext of the continuous 1 − e^{−Kt} (the bound: 1 %); the tool wrench (Jᶠᵀ)⁺ r the same share of W."""
    gain, h = 50.0, 1e-3
    sensors = load_sensors(PANDA_TAU, PANDA)
    observer = MomentumObserver(PANDA, EstimatorConfig(kind="momentum_observer", observer_gain=gain,
                                                       wrenches=(TOOL,)), sensors)
    q, zero = np.array([0.1, -0.785, 0.2, -2.356, 0.1, 1.571, 0.785]), np.zeros(PANDA.dof)
    state = State(0.0, q, zero, zero, np.zeros(0), zero, {TOOL: WRENCH})
    measurements = [Measurement(s, s.measure(state), np.eye(1) * 1e-6) for s in sensors.sensors]
    external = frame_jacobian(PANDA, body_kinematics(PANDA, q, zero, zero), TOOL).T @ WRENCH
    observer.start(q, zero, 1e-3, 1e-3)
    for k in range(300):
        if k:
            observer.predict(h)
        observer.correct(measurements)
        share = 1.0 - (1.0 + gain * h) ** -k
        np.testing.assert_allclose(observer.r, share * external, rtol=1e-9, atol=1e-12)
        assert np.max(np.abs(observer.r - (1.0 - np.exp(-gain * k * h)) * external)) <= 0.01 * np.max(np.abs(external))
    estimate = observer.state
    np.testing.assert_allclose(estimate.wrenches[TOOL], share * WRENCH, rtol=1e-7, atol=1e-9)
    assert estimate.model["external_torque.panda_joint1"] == pytest.approx(share * external[0], rel=1e-9)


def test_models_and_sensor_sets_it_cannot_serve_are_refused_in_one_line() -> None:
    config = EstimatorConfig(kind="momentum_observer")
    with pytest.raises(MbstateError, match="momentum_observer needs a URDF tree"):
        MomentumObserver(load_mechanism(MECHANISMS / "pendulum.yaml"), config, SensorSet("none", (), {}))
    sensors = load_sensors(PANDA_TAU, PANDA)
    fewer = dataclasses.replace(sensors, sensors=tuple(s for s in sensors.sensors if s.params.name != "panda_joint3_torque"))
    with pytest.raises(MbstateError, match="joint torque sensor on every joint; none on panda_joint3$"):
        MomentumObserver(PANDA, config, fewer)


def test_bench_contact_reports_numbers_and_a_kind_without_wrench() -> None:
    """A 0.4 s run of each: the observer's every figure a finite number, the null-jerk filter's none."""
    results = contact_benchmark(["momentum_observer", "null_jerk"], 0.4)
    assert results["steps"]
    observer = results["methods"]["momentum_observer"]
    for model in ("exact", "mass_off"):
        scores = observer[model]
        assert scores["error"] is None
        for key in ("threshold_force", "threshold_moment", "force_rmse", "moment_rmse"):
            assert np.isfinite(scores[key]) and scores[key] > 0.0, key
        assert isinstance(scores["false_alarms"], int) and 0.0 <= scores["alarm_share"] <= 1.0
        assert len(scores["delays"]) == len(results["steps"]) and isinstance(scores["missed"], int)
    assert 0.0 <= observer["mass_off_at_exact_thresholds"]["alarm_share"] <= 1.0
    assert results["methods"]["null_jerk"]["exact"]["error"] == MISSING
    assert "missing wrench output" in contact_table(results)


@pytest.mark.parametrize("argv,message", [
    (["bench", "contact", "--kinds", "kalman"], "invalid choice: 'kalman'"),
    (["bench", "contact", "spatial"], "contact runs alone (not with spatial)"),
    (["bench", "contact", "--set", "tau"], "contact runs alone (not with --set)"),
    (["bench", "spatial", "--kinds", "null_jerk"], "--kinds: only for the contact suite"),
])
def test_bench_contact_argument_errors(capsys, argv: list[str], message: str) -> None:
    assert cli_exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def read(data: dict, mech) -> EstimatorConfig:
    return EstimatorConfig.from_section(Section("e.yaml", "estimator", data), mech)


def test_the_wrenches_key_names_frames_of_the_model() -> None:
    assert read({"wrenches": [TOOL], "observer_gain": 20}, PANDA).wrenches == (TOOL,)
    with pytest.raises(MbstateError, match="wrenches.*unknown frame 'flange'"):
        read({"wrenches": ["flange"]}, PANDA)
    with pytest.raises(MbstateError, match="wrenches.*need a URDF model"):
        read({"wrenches": ["tool"]}, load_mechanism(MECHANISMS / "pendulum.yaml"))
    with pytest.raises(MbstateError, match="observer_gain"):
        read({"observer_gain": 0}, PANDA)


class TruthKinematics:
    """A stand-in for the observer's null-jerk filter that gives the truth's q, q̇, q̈ at each correction."""

    def __init__(self, truth) -> None:
        self.truth, self.k = truth, -1

    def correct(self, measurements: list) -> None:
        self.k += 1

    @property
    def state(self) -> SimpleNamespace:
        return SimpleNamespace(q=self.truth.q[self.k], qd=self.truth.qd[self.k], qdd=self.truth.qdd[self.k])


def test_on_a_moving_arm_r_is_the_first_order_lag_of_the_true_external_torques() -> None:
    """The Panda along its drive trajectory, a tool wrench on for 0.1 ≤ t < 0.3 s, the truth's q, q̇ and ideal
    torque readings: β = ṗ − τ_ext, so the discrete observer is the implicit first-order lag of τ_ext averaged by
    the trapezoidal rule, r_k = (r_{k−1} + K h (τ_ext,k + τ_ext,k−1) / 2) / (1 + K h), up to the rule's O(h²) error
    on the smooth ṗ (measured 1.3e-7 N·m against a largest τ_ext of 6 N·m): checked over the whole run to 1e-6
    of max |τ_ext|."""
    gain, h = 50.0, 1e-3
    samples = load_drive_trajectory(REPO / "configs" / "trajectories" / "panda.txt", PANDA.dof)
    truth = contact_truth(PANDA, PANDA.joint_names, samples, h, 0.5, WrenchSchedule(TOOL, ((0.1, 0.3, WRENCH),)))
    sensors = load_sensors(PANDA_TAU, PANDA)
    torques = [s for s in sensors.sensors if s.params.kind == "joint_torque"]
    observer = MomentumObserver(PANDA, EstimatorConfig(kind="momentum_observer", observer_gain=gain), sensors)
    observer.kinematics = TruthKinematics(truth)
    lagged, before, worst, largest = np.zeros(PANDA.dof), np.zeros(PANDA.dof), 0.0, 0.0
    for k in range(len(truth.t)):
        observer.correct([Measurement(s, s.measure(truth.state(k)), np.eye(1)) for s in torques])
        q, qd, qdd = truth.q[k], truth.qd[k], truth.qdd[k]
        external = frame_jacobian(PANDA, body_kinematics(PANDA, q, qd, qdd), TOOL).T @ truth.wrenches[TOOL][k]
        lagged = (lagged + gain * h * 0.5 * (external + before)) / (1.0 + gain * h) if k else lagged
        before = external
        worst, largest = max(worst, np.max(np.abs(observer.r - lagged))), max(largest, np.max(np.abs(external)))
    assert largest > 1.0 and worst <= 1e-6 * largest
