"""The external-wrench states of the online estimator (EstimatorConfig ``wrenches``, ``wrench_sigma``,
``wrench_random_walk``): the frames they sit on and the density of their random walk.

The ``auto`` walk of component c of frame f's wrench is the unknown forces' walk density K seen from the
joint that feels that component most,

    K_w,c = K / max(max_j |J_f[c, j]|, L_c),

J_f the frame's body Jacobian at the start configuration (−J_fᵀ is ∂Q/∂w_f, so |J_f[c, j]| is the torque
on joint j per unit of component c: the lever), L_c = 1 for a moment and the bodies' mean length
(estimator.spatial.tangent.mean_length) for a force, the least lever counted (a component no joint feels,
a force through the only axis, gets a mean lever's walk). A wrench component then moves the joint it moves
most by a walk of density K, as a drive torque walks.
"""

from __future__ import annotations

import numpy as np

from estimator.errors import MbstateError
from estimator.model_protocol import Model
from estimator.online.config import AUTO, EstimatorConfig
from estimator.spatial.dynamics import rnea_derivatives
from estimator.spatial.frame_wrenches import FrameWrenches, workspace_poses
from estimator.spatial.model import SpatialModel
from estimator.spatial.tangent import mean_length


def wrench_frames(mech: Model, config: EstimatorConfig) -> FrameWrenches | None:
    """The FrameWrenches of ``config.wrenches`` (None without); MbstateError naming the key for a planar
    model, an unknown frame or one on the fixed base (a configuration built in code is not checked by the
    file's reader)."""
    if not config.wrenches:
        return None
    if not isinstance(mech, SpatialModel):
        raise MbstateError("estimator.wrenches: external wrench states need a URDF model: a planar mechanism "
                           "has no named frames")
    try:
        return FrameWrenches.of(mech, config.wrenches)
    except MbstateError as exc:
        raise MbstateError(f"estimator.wrenches: {exc}") from None


def wrench_walk(frames: FrameWrenches, q: np.ndarray, config: EstimatorConfig) -> np.ndarray:
    """K_w of each entry of w (6k,): ``wrench_random_walk``, or (auto) the module docstring's at q."""
    if config.wrench_random_walk != AUTO:
        return np.full(frames.size, float(config.wrench_random_walk))
    model = frames.model
    rnea_derivatives(model, q, np.zeros(model.dof), np.zeros(model.dof), work=frames.work)  # leaves the poses
    levers = np.abs(frames.joint_columns(workspace_poses(frames.work))).max(axis=0, initial=0.0)
    least = np.tile(np.repeat([1.0, mean_length(model)], 3), len(frames.names))
    return config.force_walk / np.maximum(levers, least)
