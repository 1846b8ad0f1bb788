"""3-axis gyroscope on a link of a URDF: the link's angular velocity in the sensor frame [rad/s].

The sensor frame S is mounted on a link (sensors.mounting); with V_s = (ω; v) its body-fixed twist,

    h(q, q̇) = ω = R_sᵀ ω_world,   ∂h/∂q_k = [ĉ_k]_ω,   ∂h/∂q̇_k = [Ĵ_k]_ω

for the joints k that move the link (0 for the others), ĉ_k = [V̂_k, Ĵ_k] and Ĵ_k the joint's screw
in S's axes (estimator.spatial.frame_motion). Every point of a rigid body turns at the same rate,
so ``xyz`` does not change the reading; ``rpy`` turns its axes. Positive about each sensor axis,
right-handed.
"""

from __future__ import annotations

import numpy as np

from estimator.spatial.model import SpatialModel
from sensors.base import Jacobians, SensorParams
from sensors.gyroscope import KIND, SPAN, UNITS
from sensors.mounting import LinkSensor, Mount


class LinkGyroscope(LinkSensor):
    """3-axis gyroscope mounted on a link (module docstring)."""

    KIND, UNITS, SPAN = KIND, UNITS, SPAN
    dimension = 3
    variables = ("q", "v")

    def __init__(self, params: SensorParams, model: SpatialModel, mount: Mount) -> None:
        super().__init__(params, model, mount)
        self._still = np.zeros(model.dof)

    def measurement(self, q: np.ndarray, qd: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = ω in the sensor frame [rad/s]; Jacobians wrt (q, q̇), 3 x n each."""
        twist, _, tangents = self.motion.evaluate(q, qd, self._still)
        value = twist[:3].copy()
        if not jac:
            return value, None
        return value, [tangents[0, :, :3].T.copy(), tangents[1, :, :3].T.copy()]
