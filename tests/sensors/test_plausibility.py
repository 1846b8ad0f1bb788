"""sensors.plausibility: a reading's value against the sensor's range, its cov against the configured σ."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.mechanism_file import load_mechanism
from sensors.config import load_sensors
from sensors.messages import Reading
from sensors.plausibility import COV_CEILING, COV_FLOOR, reading_bounds


@pytest.fixture(scope="module")
def bounds():
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    return reading_bounds(load_sensors(REPO / "configs" / "sensors" / "fourbar.yaml", mech).sensors)


def accelerometer(value, cov=None) -> Reading:
    return Reading("coupler_accelerometer", 0.0, 0, np.asarray(value, float), None if cov is None else np.asarray(cov))


def test_the_covariance_bounds_are_the_eigenvalues_against_the_configured_sigma(bounds) -> None:
    """fourbar.yaml's accelerometer: σ² = N² rate + Δ²/12 = (1.5e-3)² 500 + (4.8e-3)²/12."""
    sigma = np.sqrt(1.5e-3 ** 2 * 500 + 4.8e-3 ** 2 / 12)
    limits = bounds["coupler_accelerometer"]
    assert limits.var_low == pytest.approx((COV_FLOOR * sigma) ** 2)
    assert limits.var_high == pytest.approx((COV_CEILING * sigma) ** 2)
    rotation = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    for smallest, expected in ((0.5 * COV_FLOOR * sigma, "cov"), (2.0 * COV_FLOOR * sigma, None)):
        cov = rotation @ np.diag([smallest ** 2, sigma ** 2]) @ rotation.T  # the small axis off the sensor's axes
        assert limits.problem(accelerometer([0.0, 9.8], cov)) == expected
    assert limits.problem(accelerometer([0.0, 9.8], np.diag([sigma ** 2, (2 * COV_CEILING * sigma) ** 2]))) == "cov"


def test_a_value_beyond_the_range_in_any_axis_is_out(bounds) -> None:
    limits = bounds["coupler_accelerometer"]  # saturation ±156.9 m/s²
    assert limits.problem(accelerometer([156.8, -156.8])) is None
    assert limits.problem(accelerometer([0.0, 157.0])) == "range"
    assert limits.problem(accelerometer([1e300, 0.0], np.eye(2) * 1e-300)) == "range"  # the first problem found


def test_a_component_at_full_scale_is_saturated(bounds) -> None:
    # the device clipped it (the virtual sensor clips to the saturation as the device does): a bound, not a reading
    limits = bounds["coupler_accelerometer"]
    assert limits.problem(accelerometer([156.9, 0.0])) == "saturated"
    assert limits.problem(accelerometer([3.0, -156.9])) == "saturated"
    assert bounds["crank_encoder"].full_high == np.inf  # no saturation: no full scale
