"""The gravity error state (``gravity_sigma``): a model whose gravity is off.

The literature's four-bar (configs/mechanisms/fourbar_benchmark.yaml) swings freely under gravity
−9.81; the estimator's model has −8.81. Read by a crank encoder of σ = 1° at 200 Hz: with the
model's gravity fixed, the process noise lets the weak readings pull the estimate along a wrong
motion. Read by an accelerometer on the coupler: its specific force holds the gravity too, so the
wrong gravity is a sensor error as well. With g in the state the estimator finds the relative error
9.81/8.81 − 1 (the reference: the scenario itself) and the angle follows the truth several times
closer.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import MECHANISMS, read_csv
from crank_runs import crank_errors, states_config

from estimator.mass import with_gravity
from estimator.mechanism_file import load_mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.interface import StepEstimate
from estimator.timeseries import write_csv
from replay.replay import estimates_trajectory

RATE = 200.0
SENSORS = {"encoder": {"kind": "encoder", "body": "crank", "turns": "multi", "rate": RATE,
                       "noise": {"sigma": 0.017453}},
           "accelerometer": {"kind": "accelerometer", "body": "coupler", "position": [4.0, 0.0], "rate": RATE,
                             "noise": {"sigma": 5.638e-2}}}
TRUE_ERROR = 9.81 / 8.81 - 1.0


def run(kind: str, config: EstimatorConfig, t_end: float = 4.0) -> tuple[np.ndarray, np.ndarray, list]:
    """Times, crank-angle errors and published gravity errors (None without the state) of the estimates
    for the benchmark four-bar read by the sensor ``kind`` of SENSORS, the estimator's model with gravity
    −8.81."""
    truth_mech = load_mechanism(MECHANISMS / "fourbar_benchmark.yaml")
    model = with_gravity(truth_mech, np.array([0.0, -8.81]))
    times, errors, states = crank_errors(truth_mech, model, {"sensors": {kind: SENSORS[kind]}}, config, t_end, 3)
    return times, errors, [state.get("gravity_error") for state in states]


@pytest.mark.parametrize("kind", SENSORS)
def test_the_gravity_error_is_estimated_and_the_angle_follows(kind: str) -> None:
    base = states_config(rate=RATE, lag=50, acceleration_noise=0.01)
    t, without, none = run(kind, base)
    t_g, with_state, gravity = run(kind, dataclasses.replace(base, gravity_sigma=0.2))
    assert set(none) == {None} and abs(gravity[-1] - TRUE_ERROR) < 0.01
    late, late_g = t >= 2.0, t_g >= 2.0
    rmse, rmse_g = (float(np.sqrt(np.mean(e**2))) for e in (without[late], with_state[late_g]))
    assert rmse_g < 3e-3 and rmse > 3 * rmse_g


def test_the_replay_csv_has_a_column_per_model_error_state(tmp_path) -> None:
    """``model.gravity_error`` beside the state's columns (estimator.timeseries), from the estimates."""
    mech = load_mechanism(MECHANISMS / "fourbar_benchmark.yaml")
    estimates = [StepEstimate(step=k, t=0.005 * k, q=mech.q0, qd=np.zeros(mech.n), qdd=np.zeros(mech.n), forces={},
                              lam=np.zeros(mech.m), sigma=None, latency=0.0, update_steps=1, flags=(),
                              model={"gravity_error": 0.1 * k}) for k in range(3)]
    write_csv(tmp_path / "est.csv", estimates_trajectory(mech, estimates))
    table = read_csv(tmp_path / "est.csv")
    np.testing.assert_allclose(table.model["gravity_error"], [0.0, 0.1, 0.2])
    assert table.q.shape == (3, mech.n)
