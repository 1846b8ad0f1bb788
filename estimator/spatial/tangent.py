"""The bodies' angular velocities as a metric on a tree's joint rates: the spatial counterpart of the planar
estimator.kinematics.motion_tangent, the shape of the online estimator's acceleration noise
(estimator.online.drafting, through estimator.model_protocol.tangent_metric)."""

from __future__ import annotations

import numpy as np

from estimator.spatial.kinematics import angular_rates
from estimator.spatial.model import PRISMATIC, SpatialModel


def mean_length(model: SpatialModel) -> float:
    """The mean distance between consecutive joints [m] (the placements' translations; 1 m if none)."""
    steps = np.linalg.norm(model.placement[:, 9:], axis=1)
    return float(np.mean(steps[steps > 0.0])) if np.any(steps > 0.0) else 1.0


def motion_tangent(model: SpatialModel, q: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """T = N L⁻ᵀ with L Lᵀ = G = (W N)ᵀ W N, W the bodies' world angular rates ∂ω/∂q̇ (angular_rates):
    Σ_b |ω_b|² = |v|² for q̇ = T v. A motion that turns no body (prismatic joints) is measured by its
    joints' displacement rates over the mean length instead (the planar kinematics.motion_tangent's rule)."""
    turning = angular_rates(model, q) @ basis
    metric = turning.T @ turning
    values, vectors = np.linalg.eigh(metric)
    still = vectors[:, values <= 1e-12 * max(float(values.max(initial=0.0)), 1e-300)]
    if still.shape[1]:
        sliding = basis[model.kind == PRISMATIC] @ still
        metric += still @ (sliding.T @ sliding) @ still.T / mean_length(model) ** 2
    return np.linalg.solve(np.linalg.cholesky(metric), basis.T).T
