"""The online estimator on a URDF open chain (issue 39, first step): UR5 with an encoder of 4096 counts on
every joint, free motion simulated by RK4 on ABA (replay.simulation, as ``mbstate simulate`` writes it),
through the same OnlineEstimator as the planar mechanisms (estimator.model_protocol)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO

from estimator.errors import MbstateError
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.spatial.model import load_spatial
from replay.clocks import FixedClock
from replay.simulation import forward_truth
from sensors.config import load_sensors
from sensors.virtual import simulate_readings

URDF = REPO / "configs" / "mechanisms" / "urdf" / "ur5.urdf"
ENCODERS = REPO / "configs" / "sensors" / "ur5_encoders.yaml"
QUANTUM = 2 * np.pi / 4096  # Δ: the encoders' count [rad]
Q0 = np.array([0.0, -0.8, 1.2, 0.3, 0.5, 0.0])  # a pose away from the zero configuration, moving
QD0 = np.array([0.5, 0.0, 0.0, 0.0, 0.0, 1.0])


def replayed(config: EstimatorConfig, t_end: float = 0.6, forces: dict[str, float] | None = None):
    """(estimates, truth, estimator) of a simulated UR5 run replayed through the estimator, reading by reading,
    on a clock that does not advance (no degradation: deterministic, as ``mbstate replay``)."""
    model = load_spatial(URDF)
    sensors = load_sensors(ENCODERS, model)
    truth = forward_truth(model, Q0, QD0, 1e-3, t_end, forces)
    estimator = OnlineEstimator(model, sensors, config, FixedClock())
    estimates = []
    for reading in simulate_readings(sensors.sensors, truth, seed=1):
        estimator.add(reading)
        estimates += estimator.advance(reading.t)
    estimates += estimator.advance(float(truth.t[-1]), final=True)
    return estimates, truth, estimator


def errors(estimates, truth) -> tuple[np.ndarray, np.ndarray]:
    """q and q̇ of the estimates less the truth at their steps."""
    index = np.round(np.array([e.t for e in estimates]) / 1e-3).astype(int)
    return (np.array([e.q for e in estimates]) - truth.q[index], np.array([e.qd for e in estimates]) - truth.qd[index])


def test_free_motion_of_ur5_from_its_encoders_within_a_fifth_of_a_count() -> None:
    """Joint-angle RMSE under Δ/5 (measured 1.2e-4 rad = Δ/12 over 3 s, docs/spatial.md), every step published,
    no restart; the observability check says it was not made."""
    estimates, truth, estimator = replayed(EstimatorConfig(unknown_forces=()))
    angle, rate = errors(estimates, truth)
    assert np.sqrt(np.mean(angle ** 2)) < QUANTUM / 5
    assert np.sqrt(np.mean(rate ** 2)) < 0.05  # [rad/s]: measured 0.013 over 3 s
    assert [e.step for e in estimates] == list(range(len(estimates))) and len(estimates) >= 570
    assert estimator.counters["startup_failures"] == 0 and estimator.counters["reinitializations"] == 0
    assert "not checked" in estimator.observability.summary() and estimator.observability.observable
    assert estimator.config.gravity_sigma is None and estimator.config.mass_sigma is None


def test_unknown_joint_torques_by_the_jerk_force_model() -> None:
    """Constant torques on two driven joints, estimated (jerk force model): angles still under Δ/5."""
    config = EstimatorConfig(unknown_forces=("shoulder_lift_joint", "elbow_joint"))
    estimates, truth, estimator = replayed(config, forces={"shoulder_lift_joint": -40.0, "elbow_joint": -10.0})
    assert estimator.config.force_model == "jerk"
    angle, _ = errors(estimates, truth)
    assert np.sqrt(np.mean(angle ** 2)) < QUANTUM / 5
    final = estimates[-1].forces
    assert abs(final["shoulder_lift_joint"] + 40.0) < 4.0 and abs(final["elbow_joint"] + 10.0) < 2.0


@pytest.mark.parametrize("key, config", [
    ("gravity_sigma", EstimatorConfig(unknown_forces=(), gravity_sigma=0.2)),
    ("length_sigma", EstimatorConfig(unknown_forces=(), length_sigma=0.01)),
    ("dynamics", EstimatorConfig(unknown_forces=(), dynamics=False)),
])
def test_what_a_tree_cannot_take_yet_is_one_line_naming_the_key(key: str, config: EstimatorConfig) -> None:
    model = load_spatial(URDF)
    with pytest.raises(MbstateError, match=f"estimator.{key}: "):
        OnlineEstimator(model, load_sensors(ENCODERS, model), config)
