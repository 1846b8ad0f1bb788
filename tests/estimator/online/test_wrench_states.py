"""External wrenches on named frames as states of the online smoother (EstimatorConfig ``wrenches``,
estimator.online.wrench_states): the configuration's errors, the auto walk, and the Panda with encoders and
joint torque sensors (configs/sensors/panda_torque.yaml) moving under a constant wrench at its tool, its
drive torques by inverse dynamics with that wrench, estimated through the same OnlineEstimator (FixedClock,
seeded), with the estimate's outputs (σ, CSV columns, plot keys, node message)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.node.plot_map import PlotMap
from estimator.node.publishing import estimate_fields
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.wrench_states import wrench_walk
from estimator.section import Section
from estimator.spatial.dynamics import body_wrenches, inverse_dynamics
from estimator.spatial.frame_wrenches import FrameWrenches, workspace_poses
from estimator.spatial.model import load_spatial
from estimator.spatial.tangent import mean_length
from replay.clocks import FixedClock
from replay.replay import estimates_trajectory
from sensors.config import load_sensors
from sensors.virtual import Truth, simulate_readings

PANDA = MECHANISMS / "urdf" / "panda.urdf"
TORQUES = REPO / "configs" / "sensors" / "panda_torque.yaml"
TOOL = "panda_hand_tcp"
WRENCH = np.array([1.0, -0.5, 0.5, 10.0, -5.0, 8.0])  # (mx, my, mz [N·m], fx, fy, fz [N]) at the tool
# the motion: q0 + A sin(ω t) on every joint, from a pose away from singularities
Q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8])
AMPLITUDE = np.array([0.3, 0.2, 0.3, 0.3, 0.4, 0.3, 0.5])
OMEGA = 2.0 * np.array([1.0, 1.3, 0.9, 1.1, 1.7, 1.5, 2.0])  # [rad/s]
SETTLE = 0.2  # [s] after the start


class UnderLoad:
    """A torque sensor of the run as it reads the tool's wrench too (the virtual sensors' states carry no
    external wrench): its ideal reading is the with_wrenches sensor's at the run's constant wrench."""

    def __init__(self, sensor, frames: FrameWrenches) -> None:
        self.reader, self.params, self.dimension = sensor.with_wrenches(frames), sensor.params, sensor.dimension

    def measure(self, state) -> np.ndarray:
        return self.reader.measurement(state.q, state.qd, state.qdd, WRENCH, jac=False)[0]

    def present(self, values: np.ndarray) -> np.ndarray:
        return values


def loaded_run(t_end: float = 0.8):
    """(estimates, estimator) of the Panda under the tool wrench, replayed reading by reading."""
    model = load_spatial(PANDA)
    sensors = load_sensors(TORQUES, model)
    t = np.arange(0.0, t_end + 1e-9, 1e-3)
    phase = OMEGA * t[:, None]
    q, qd = Q0 + AMPLITUDE * np.sin(phase), AMPLITUDE * OMEGA * np.cos(phase)
    qdd = -AMPLITUDE * OMEGA ** 2 * np.sin(phase)
    load = body_wrenches(model, {TOOL: WRENCH})
    drives = np.array([inverse_dynamics(model, *sample, load) for sample in zip(q, qd, qdd)])
    truth = Truth(t=t, q=q, qd=qd, qdd=qdd, lam=np.zeros((len(t), 0)), f=drives)
    frames = FrameWrenches.of(model, (TOOL,))
    virtual = [UnderLoad(s, frames) if s.params.kind == "joint_torque" else s for s in sensors.sensors]
    config = EstimatorConfig(unknown_forces=model.actuator_names, wrenches=(TOOL,), publish_sigmas=True)
    estimator = OnlineEstimator(model, sensors, config, FixedClock())
    estimates = []
    for reading in simulate_readings(virtual, truth, seed=1):
        estimator.add(reading)
        estimates += estimator.advance(reading.t)
    return estimates + estimator.advance(t_end, final=True), estimator


def test_the_tool_wrench_is_estimated_from_encoders_and_joint_torques() -> None:
    """After SETTLE, RMSE per component under 0.2 N·m and 1.2 N (measured over 0.2–0.8 s: 0.078, 0.105,
    0.045 N·m and 0.51, 0.39, 0.62 N, a mean error under 0.05 N: noise, not bias; the largest error from
    0.1 s on 0.43 N·m and 2.4 N), the published σ within [0.5, 4] times the RMSE (measured 1.4–2.5) and every step
    published without a restart."""
    estimates, estimator = loaded_run()
    assert len(estimates) >= 770 and estimator.counters["reinitializations"] == 0
    settled = [e for e in estimates if e.t >= SETTLE]
    error = np.array([e.wrenches[TOOL] for e in settled]) - WRENCH
    rmse = np.sqrt(np.mean(error ** 2, axis=0))
    assert np.all(rmse[:3] < 0.2) and np.all(rmse[3:] < 1.2), rmse
    sigma = np.mean([e.sigma[f"wrench.{TOOL}"] for e in settled], axis=0)
    assert np.all((sigma > 0.5 * rmse) & (sigma < 4.0 * rmse)), (sigma, rmse)


def test_the_wrench_is_in_every_output() -> None:
    estimates, estimator = loaded_run(0.1)
    last = estimates[-1]
    columns = [f"W.{TOOL}.{axis}" for axis in ("mx", "my", "mz", "fx", "fy", "fz")]
    header, data = estimates_trajectory(estimator.mech, estimates).columns()
    assert header[-6:] == columns and np.array_equal(data[-1, -6:], last.wrenches[TOOL])
    flat = PlotMap.for_mechanism(estimator.mech)(estimate_fields(last))
    assert [flat[c] for c in columns] == list(last.wrenches[TOOL])
    assert flat[columns[3] + "+2sigma"] == pytest.approx(last.wrenches[TOOL][3] + 2 * last.sigma[f"wrench.{TOOL}"][3])


def test_the_auto_walk_is_the_force_walk_over_the_lever_shared_by_the_components() -> None:
    """Each component's walk in proportion to 1 over its largest lever (at least 1 for a moment, the bodies'
    mean length for a force), all of them scaled so that together they walk the most loaded joint's torque at
    K exactly (max_j Σ_c K_w,c² J_f[c, j]² = K²: the Panda's wrist joints feel several components); an
    explicit number wins."""
    model = load_spatial(PANDA)
    frames = FrameWrenches.of(model, (TOOL,))
    walk = wrench_walk(frames, model.initial, EstimatorConfig())
    k = EstimatorConfig().force_walk
    columns = frames.joint_columns(workspace_poses(frames.work))  # the poses wrench_walk left
    least = np.repeat([1.0, mean_length(model)], 3)
    shape = 1.0 / np.maximum(np.abs(columns).max(axis=0), least)
    np.testing.assert_allclose(walk / walk[0], shape / shape[0], rtol=1e-12)
    assert np.isclose(np.max(np.sum((columns * walk) ** 2, axis=1)), k ** 2, rtol=1e-12)
    assert np.all(walk < k / least)
    assert np.all(wrench_walk(frames, model.initial, EstimatorConfig(wrench_random_walk=2.0)) == 2.0)


@pytest.mark.parametrize("data, message", [
    ({"wrenches": ["tool"]}, "estimator.wrenches: unknown frame 'tool'"),
    ({"wrenches": ["panda_link0"]}, "estimator.wrenches: unknown frame 'panda_link0'"),  # on the fixed base
    ({"wrenches": TOOL}, "estimator.wrenches: must be a list of frame names"),
    ({"wrenches": [TOOL], "dynamics": False}, "estimator.wrenches: needs the dynamics"),
    ({"wrench_random_walk": "fast"}, "estimator.wrench_random_walk: must be auto or a number"),
    ({"wrench_sigma": 0}, "estimator.wrench_sigma: must be a positive number"),
    ({"wrenches": [TOOL], "kind": "null_jerk"}, "estimator.wrenches: must be empty with kind error_ekf, ukf or null_jerk"),
])
def test_a_bad_key_is_one_line_naming_it(data: dict, message: str) -> None:
    with pytest.raises(MbstateError, match=message):
        EstimatorConfig.from_section(Section("est.yaml", "estimator", data), load_spatial(PANDA))


def test_a_planar_model_has_no_frames_for_them() -> None:
    """An empty list is the default, on any model; a frame named on a planar model is one line, from the file
    or from a configuration built in code."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    assert EstimatorConfig.from_section(Section("est.yaml", "estimator", {"wrenches": []}), mech).wrenches == ()
    with pytest.raises(MbstateError, match="estimator.wrenches: external wrench states need a URDF model"):
        EstimatorConfig.from_section(Section("est.yaml", "estimator", {"wrenches": ["crank"]}), mech)
    with pytest.raises(MbstateError, match="estimator.wrenches: external wrench states need a URDF model"):
        OnlineEstimator(mech, load_sensors(REPO / "configs" / "sensors" / "fourbar.yaml", mech),
                        EstimatorConfig(wrenches=("crank",)))
    model = load_spatial(PANDA)
    with pytest.raises(MbstateError, match="estimator.wrenches: frame 'panda_link0' is on the fixed base"):
        OnlineEstimator(model, load_sensors(TORQUES, model), EstimatorConfig(wrenches=("panda_link0",)))
