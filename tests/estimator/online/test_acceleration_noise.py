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


def matched_density(density: float, velocity_error: float, seed: int, seconds: float = 30.0,
                    tangent: np.ndarray = np.ones((1, 1)), switch_every: int = 0, off_motion: float = 0.0) -> float:
    """A after ``seconds`` of estimates of coordinates q̇ = T w (T = ``tangent``, n x d) whose motion w walks
    with white acceleration of ``density`` and whose velocities are read with a white error of σ
    ``velocity_error``; the model explains nothing else (zero acceleration). The estimate integrates the
    first d coordinates, or (``switch_every`` steps) the last d and the first d in turn, the first
    ``lags[1]`` steps being left out as the start's. Its velocities also leave the motion (across the
    constraints, n > d) by a random walk of density ``off_motion`` along the last left singular vector of T."""
    n, d = tangent.shape
    drafter = types.SimpleNamespace(acceleration_noise=ACCELERATION_START,
                                    driven=lambda integrated: np.zeros(len(integrated), bool))
    first, last = tuple(range(d)), tuple(range(n - d, n))
    partitions = types.SimpleNamespace(
        integrated=lambda k: last if switch_every and (k // switch_every) % 2 else first, tangents={})
    noise = AccelerationNoise(EstimatorConfig(rate=RATE), types.SimpleNamespace(n=n), drafter, partitions)
    rng, h = np.random.default_rng(seed), 1.0 / RATE
    motion, before, across, normal = np.zeros(d), None, 0.0, np.linalg.svd(tangent)[0][:, -1]
    for k in range(int(seconds * RATE)):
        motion += rng.normal(scale=density * math.sqrt(h), size=d)
        across += rng.normal(scale=off_motion * math.sqrt(h))
        velocity = tangent @ motion + across * normal + rng.normal(scale=velocity_error, size=n)
        after = np.concatenate([np.zeros(n), velocity, np.zeros(n)])
        partitions.tangents[k] = tangent
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


def test_the_density_whichever_coordinates_are_integrated_and_however_often_they_change() -> None:
    # two motions seen through three coordinates (a points file's), integrated as (0, 1) and (1, 2) in turn
    # every 0.1 s, shorter than either horizon: the sums turn into each new frame, so A is matched as with
    # one choice throughout (within the 25 % of the one-coordinate test, over 8 seeds)
    tangent = np.array([[1.0, 0.0], [0.6, 0.8], [-0.3, 2.0]])
    for switch_every in (0, 20):
        found = np.array([matched_density(0.5, 0.0, seed, tangent=tangent, switch_every=switch_every)
                          for seed in range(8)])
        assert math.exp(np.mean(np.log(found))) == pytest.approx(0.5, rel=0.25)


def test_the_density_of_the_motion_alone_where_the_velocities_leave_it_and_the_partition_is_poor() -> None:
    # the estimate's velocities drift across the constraints (soft rows) as fast as the motion walks, and the
    # integrated coordinates (0, 1) see the motion through a block of pivot 0.05 (a point near its extreme):
    # read from them alone the drift came back through T[P]⁻¹ twentyfold; the motion's part of the change
    # leaves it out (within the 25 % of the one-coordinate test, over 8 seeds)
    tangent = np.array([[1.0, 0.0], [1.0, 0.05], [0.0, 1.0]])
    found = np.array([matched_density(0.5, 0.0, seed, tangent=tangent, off_motion=0.5) for seed in range(8)])
    assert math.exp(np.mean(np.log(found))) == pytest.approx(0.5, rel=0.25)


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
