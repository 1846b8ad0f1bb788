"""The σ keys left auto on the mechanism's scales (estimator.online.scales)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS

from estimator.kinematics import BodyAxes
from estimator.mechanism_file import load_mechanism
from estimator.online.config import DYNAMICS_SHARE, GUESS_ANGLE, STANDARD_GRAVITY, EstimatorConfig
from estimator.online.scales import dynamics_sigma, guess_sigma


def test_auto_dynamics_sigma_is_a_share_of_the_weight() -> None:
    """fourbar_crank: 7 kg, 1e-5 × 68.67 N; the pick-and-place robot, 24 kg: 2.35e-3 N; a number as given."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    assert dynamics_sigma(mech, EstimatorConfig()) == pytest.approx(
        DYNAMICS_SHARE * STANDARD_GRAVITY * sum(body.mass for body in mech.bodies)) == pytest.approx(6.867e-4)
    assert dynamics_sigma(load_mechanism(MECHANISMS / "pick_and_place.yaml"), EstimatorConfig()) == pytest.approx(
        2.3544e-3)
    assert dynamics_sigma(mech, EstimatorConfig(dynamics_sigma=0.01)) == 0.01


def test_auto_guess_sigma_turns_the_pose_by_the_guess_angle() -> None:
    """An angle gets GUESS_ANGLE [rad]; a point coordinate the displacement that turn gives a point a mean
    body length from its pivot [m]; a number is used as given."""
    mech = load_mechanism(MECHANISMS / "slider_crank.yaml")
    sigmas = guess_sigma(mech, EstimatorConfig())
    assert sigmas[mech.index("crank")] == GUESS_ANGLE
    np.testing.assert_allclose(sigmas[mech.point_coordinates], GUESS_ANGLE * BodyAxes.of(mech).length)
    np.testing.assert_allclose(guess_sigma(mech, EstimatorConfig(guess_sigma=0.5)), 0.5)
