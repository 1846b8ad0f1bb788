"""The external-wrench states of the online estimator (EstimatorConfig ``wrenches``, ``wrench_sigma``,
``wrench_random_walk``): the frames they sit on and the density of their random walk.

The ``auto`` walk of component c of frame f's wrench is the unknown forces' walk density K seen from the
joint that feels that component most,

    K_w,c = K / max(max_j |J_f[c, j]|, L_c),

J_f the frame's body Jacobian at the start configuration (−J_fᵀ is ∂Q/∂w_f, so |J_f[c, j]| is the torque
on joint j per unit of component c: the lever), L_c = 1 for a moment and the bodies' mean length
(estimator.spatial.tangent.mean_length) for a force, the least lever counted (a component no joint feels,
a force through the only axis, gets a mean lever's walk), then all of them by one factor so that the
components together walk no joint's torque faster than K:

    K_w,c ← K_w,c / max(1, max_j (Σ_c (J_f[c, j] K_w,c / K)²)^½),

the joint-space walk Σ_c K_w,c² J_f[c, j]² of joint j at most K². A drive torque walks at K; a wrench whose
every component walked its most-felt joint at K would walk a joint that feels several components (a wrist
joint feels all three moments and the forces) √(their count) times faster, and its estimate, the moments'
above all, would carry that much more of the sensors' noise.
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
    columns = frames.joint_columns(workspace_poses(frames.work))
    least = np.tile(np.repeat([1.0, mean_length(model)], 3), len(frames.names))
    shape = 1.0 / np.maximum(np.abs(columns).max(axis=0, initial=0.0), least)
    together = np.sqrt(np.max(np.sum((columns * shape) ** 2, axis=1), initial=0.0))
    return config.force_walk * shape / max(together, 1.0)
