"""3-axis accelerometer on a link of a URDF: the specific force at its mounting point, in the
sensor frame [m/s²].

The sensor frame S sits at point p of a link (sensors.mounting) with rotation R_s in the world.
It reads the specific force, not the body-fixed twist acceleration (notes §3, E2):

    h(q, q̇, q̈) = R_sᵀ (r̈_p − g) = v̇ + ω × v,

(ω; v) = V_s and (ω̇; v̇) = V̇_s its body-fixed twist and acceleration, the base accelerating at
(0; −g) (estimator.spatial.frame_motion): at rest with its z axis up it reads (0, 0, +9.81).
With the tangents ∂V_s = (∂ω; ∂v), ∂V̇_s = (∂ω̇; ∂v̇) of each block (q, q̇, q̈),

    ∂h = ∂v̇ − ṽ ∂ω + ω̃ ∂v       (∂V_s/∂q̈ = 0).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sensors.accelerometer import KIND, SPAN, UNITS
from sensors.base import Jacobians
from sensors.mounting import LinkSensor


class LinkAccelerometer(LinkSensor):
    """3-axis accelerometer mounted on a link (module docstring); gravity from the model."""

    KIND, UNITS, SPAN = KIND, UNITS, SPAN
    dimension = 3
    variables = ("q", "v", "a")

    def measurement(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = R_sᵀ (r̈_p − g) [m/s²]; Jacobians wrt (q, q̇, q̈), 3 x n each."""
        twist, accel, tangents = self.motion.evaluate(q, qd, qdd)
        value, d_q, d_qd, d_qdd = specific_force(twist, accel, tangents, jac)
        return value, [d_q, d_qd, d_qdd] if jac else None


@njit(cache=True)
def specific_force(twist: np.ndarray, accel: np.ndarray, tangents: np.ndarray,
                   jac: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """h = v̇ + ω × v and, if ``jac``, ∂h = ∂v̇ − ṽ ∂ω + ω̃ ∂v per block (3 x n each; module docstring)
    from frame_motion's tangents (rows ∂V/∂q, ∂V/∂q̇, ∂V̇/∂q, ∂V̇/∂q̇, ∂V̇/∂q̈)."""
    w, v = twist[:3], twist[3:]
    value = np.array([accel[3] + w[1] * v[2] - w[2] * v[1], accel[4] + w[2] * v[0] - w[0] * v[2],
                      accel[5] + w[0] * v[1] - w[1] * v[0]])
    n = tangents.shape[1] if jac else 0
    out = np.zeros((3, 3, n))
    for block, (dv, da) in enumerate(((0, 2), (1, 3), (-1, 4))):
        for k in range(n):
            x = tangents[da, k]
            for r in range(3):
                out[block, r, k] = x[3 + r]
            if dv >= 0:
                y = tangents[dv, k]
                out[block, 0, k] += y[1] * v[2] - y[2] * v[1] + w[1] * y[5] - w[2] * y[4]
                out[block, 1, k] += y[2] * v[0] - y[0] * v[2] + w[2] * y[3] - w[0] * y[5]
                out[block, 2, k] += y[0] * v[1] - y[1] * v[0] + w[0] * y[4] - w[1] * y[3]
    return value, out[0], out[1], out[2]
