"""The friction states (``friction_sigma``): viscous friction the model lacks.

The literature's four-bar (configs/lab/fourbar_benchmark.yaml, scenario ``friction_error``) swings freely
under gravity −9.81 with a viscous friction of 1 N·m·s/rad at the crank's pivot; the estimator's model
has −8.81 and no friction. Read by a gyroscope on the crank at 200 Hz, the estimator with the gravity
error alone follows a swing that loses no energy; with the crank's friction as a state as well it
finds the coefficient within about 2 s (the reference: the scenario's own, the truth's damper less the
model's) and the angle follows the truth tens of times closer from then on.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import REPO
from crank_runs import CRANK_GYRO, RATE, crank_gyro_run, states_config

from estimator.errors import MbstateError
from estimator.node.intake import online_estimator
from estimator.online.config import STATES_LAG, EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock
from replay.lab.report import true_model_error
from replay.lab.suite import load_suite
from sensors.config import build_sensors

SCENARIO = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml").scenarios["friction_error"]


def test_the_friction_is_estimated_and_the_angle_follows() -> None:
    base = states_config(rate=RATE, lag=50, acceleration_noise=0.001, gravity_sigma=0.2, gravity_random_walk=1e-4,
                           startup_span=0.0, initial_velocity=(("crank", 0.0),), velocity_sigma=0.02)
    t, without, states = crank_gyro_run(SCENARIO, base, 4.0)
    t_c, with_friction, states_c = crank_gyro_run(SCENARIO, dataclasses.replace(base, friction_sigma=1.0), 4.0)
    assert not any(name.startswith("friction") for name in states)
    assert set(states_c) == {"gravity_error", "friction.crank"}  # the crank: the benchmark's independent coordinate
    assert true_model_error(SCENARIO, "friction.crank") == 1.0
    assert abs(states_c["friction.crank"] - 1.0) < 0.02
    late, late_c = t >= 2.0, t_c >= 2.0
    rmse, rmse_c = (float(np.sqrt(np.mean(e**2))) for e in (without[late], with_friction[late_c]))
    assert rmse_c < 2e-4 and rmse > 10 * rmse_c


def test_the_friction_acts_on_the_named_coordinates() -> None:
    mech = SCENARIO.model_mechanism()
    sensors = build_sensors(CRANK_GYRO, mech, "test")
    named = EstimatorConfig(friction_sigma=1.0, friction_coordinates=("x1", "crank"))
    estimator = OnlineEstimator(mech, sensors, named)
    assert estimator.layout.frictions == (0, 4)
    assert OnlineEstimator(mech, sensors, EstimatorConfig(friction_sigma=1.0)).layout.frictions == (4,)
    assert OnlineEstimator(mech, sensors, EstimatorConfig(friction_sigma=None)).layout.frictions == ()
    assert OnlineEstimator(mech, sensors, EstimatorConfig(rate=RATE)).layout.frictions == (4,)  # auto: the crank
    short = EstimatorConfig(lag=STATES_LAG - 1)
    assert OnlineEstimator(mech, sensors, short).layout.frictions == ()  # auto: a window too short


@pytest.mark.parametrize("config, message", [
    (EstimatorConfig(friction_sigma=1.0, friction_coordinates=("elbow",)),
     "estimator.friction_coordinates: unknown coordinate 'elbow'"),
    (EstimatorConfig(kind="error_ekf", friction_sigma=1.0), "estimator.friction_sigma: the error_ekf filter does not "
                                                            "estimate friction"),
])
def test_a_friction_the_estimator_cannot_carry_is_an_error_naming_the_key(config: EstimatorConfig,
                                                                          message: str) -> None:
    mech = SCENARIO.model_mechanism()
    node = SimpleNamespace(mech=mech, sensors=build_sensors(CRANK_GYRO, mech, "test"), estimator=config)
    with pytest.raises(MbstateError, match=message):
        online_estimator(node, FixedClock())  # the smoother or the filter, by kind
