"""The auto process noise (estimator.online.acceleration_noise): the variogram's slope gives the density of
a white acceleration whatever white error the estimated velocity carries (closed form: a random walk of
known density), and in the estimator A falls where the model-error states take the model's error up and
stays where nothing does (the literature's four-bar, gravity 10 % off)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from conftest import REPO

from estimator.online.acceleration_noise import AccelerationNoise
from estimator.online.config import ACCELERATION_START, EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from replay.clocks import FixedClock
from replay.lab.cells import simulated
from replay.lab.suite import load_suite
from sensors.config import load_sensors

RATE = 200.0


def matched_density(density: float, velocity_error: float, seed: int, seconds: float = 30.0) -> float:
    """A after ``seconds`` of estimates of one coordinate whose velocity walks with white acceleration of
    ``density`` and is read with a white error of σ ``velocity_error``; the model explains nothing else
    (zero acceleration)."""
    drafter = types.SimpleNamespace(acceleration_noise=ACCELERATION_START,
                                    driven=lambda integrated: np.zeros(len(integrated), bool))
    partitions = types.SimpleNamespace(integrated=lambda k: (0,), tangents={})
    noise = AccelerationNoise(EstimatorConfig(rate=RATE), types.SimpleNamespace(n=1), drafter, partitions)
    rng, h = np.random.default_rng(seed), 1.0 / RATE
    velocity, before = 0.0, None
    for k in range(int(seconds * RATE)):
        velocity += rng.normal(scale=density * math.sqrt(h))
        after = np.array([0.0, velocity + rng.normal(scale=velocity_error), 0.0])
        partitions.tangents[k] = np.ones((1, 1))
        noise.observe(k, before, after)
        before = after
    assert drafter.acceleration_noise == noise.density  # the steps drafted next get it
    return noise.density


@pytest.mark.parametrize("density", [0.05, 0.5])
def test_the_density_of_a_random_walk_whatever_the_estimate_s_own_error(density: float) -> None:
    # the estimate's white error adds 2 σ² at every horizon: the slope leaves it out (σ 0.4 A √T₂ here)
    for velocity_error in (0.0, 0.4 * density * math.sqrt(0.5)):
        found = np.array([matched_density(density, velocity_error, seed) for seed in range(8)])
        # a running mean over 2 s of changes over 0.5 s: each within a factor 1.7, their geometric mean 25 %
        assert np.all(np.abs(np.log(found / density)) < math.log(1.7))
        assert math.exp(np.mean(np.log(found))) == pytest.approx(density, rel=0.25)


def final_density(estimator_name: str) -> float:
    """A after 4 s of the literature's four-bar, gravity 10 % off, read by a crank gyroscope (on a clock
    that does not move: no update coalesced under the machine's load)."""
    suite = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml")
    scenario = suite.scenarios["gravity_error"]
    _, readings = simulated(suite, scenario, "crank_gyro", 1, 4.0)
    model = scenario.model_mechanism()
    config = suite.estimators[estimator_name]
    assert config.acceleration_noise == "auto"
    estimator = OnlineEstimator(model, load_sensors(scenario.sensor_sets["crank_gyro"], model), config, FixedClock())
    for reading in readings:
        estimator.add(reading)
        estimator.advance(reading.t)
    return estimator.acceleration_noise.density


def test_the_density_falls_where_the_model_error_states_take_the_error_up() -> None:
    assert final_density("smoother") < 0.2 * ACCELERATION_START  # g, masses, lengths, friction estimated
    assert final_density("smoother_no_states") > 0.5 * ACCELERATION_START  # the model's gravity as it is
