"""The σ keys left ``auto`` on the mechanism's own scales (estimator.online.config, ``dynamics_sigma`` and
``guess_sigma``): its weight W = Σ m_b g₀ and its bodies' mean length ℓ (kinematics.BodyAxes), so that the
same defaults hold for a bench linkage and a crane. Point coordinates (a prismatic joint's) are lengths
[m], the other coordinates angles [rad] (estimator.model_protocol.coordinate_lengths)."""

from __future__ import annotations

import numpy as np

from estimator.model_protocol import Model, coordinate_lengths, total_mass
from estimator.online.config import AUTO, DYNAMICS_SHARE, GUESS_ANGLE, STANDARD_GRAVITY, EstimatorConfig


def dynamics_sigma(mech: Model, config: EstimatorConfig) -> float:
    """σ of the equations of motion before ``force_noise`` [N, N·m]: ``dynamics_sigma``, or (auto)
    DYNAMICS_SHARE of the weight W, a residual far below the forces in the rows, on their scale (on an
    angle's row, in N·m, that of the weight on a 1 m arm)."""
    if config.dynamics_sigma != AUTO:
        return config.dynamics_sigma
    return DYNAMICS_SHARE * STANDARD_GRAVITY * total_mass(mech)


def guess_sigma(mech: Model, config: EstimatorConfig) -> np.ndarray:
    """σ of a guessed start on each coordinate: ``guess_sigma``, or (auto) GUESS_ANGLE [rad] on angles and
    the displacement that turn gives a point a mean length ℓ from its pivot, GUESS_ANGLE ℓ [m], on point
    coordinates."""
    if config.guess_sigma != AUTO:
        return np.full(mech.n, config.guess_sigma)
    return GUESS_ANGLE * coordinate_lengths(mech)
