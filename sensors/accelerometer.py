"""Accelerometer: 2-axis specific force at a body-fixed point, in the sensor frame [m/s²].

The sensor sits at body-frame point P = (ξ, η) with its x axis at angle β from the body's x axis;
the sensor frame turns with the body (angle φ + β). It measures the specific force

    h(q, q̈, ε) = R(β)ᵀ R(φ)ᵀ (r̈_P − (1 + ε) g),   r̈_P = C q̈  (exact in natural coordinates),

g the model's gravity and ε the estimator's relative gravity error (estimator.online.config
``gravity_sigma``; 0 when it has none): a gravity that is off is off for the sensor too. Centripetal
and tangential terms are already in q̈, so q̇ is not needed. With u the body's x axis,
R(φ)ᵀ v = P(u) v, P(u) = [[u_x, u_y], [−u_y, u_x]]/|u|, hence with v = C q̈ − (1 + ε) g, s = P(u) v:

    ∂h/∂q̈ = R(β)ᵀ P(u) C,   ∂h/∂ε = −R(β)ᵀ P(u) g,
    ∂h/∂q  = R(β)ᵀ ([[v_x, v_y], [v_y, −v_x]]/|u| − s uᵀ/|u|²) D   (u = D q + d0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from estimator.model import Body, Mechanism
from estimator.section import Section
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common
from sensors.geometry import axis_map, point_map, rotation

KIND, UNITS = "accelerometer", "m/s^2"
SPAN = 1e4  # default range ±SPAN [m/s²] (about 1000 g) without a saturation


@dataclass(frozen=True)
class AccelerometerParams:
    """Mounting: body, position (ξ, η) [m] in the body frame, angle β [rad] from the body's x axis."""

    body: Body
    position: tuple[float, float]
    angle: float = 0.0


class Accelerometer(SensorModel):
    """2-axis accelerometer (see the module docstring); gravity from the mechanism."""

    dimension = 2
    variables = ("q", "a", "g")

    def __init__(self, params: SensorParams, mech: Mechanism, mount: AccelerometerParams) -> None:
        self.params, self.mount = params, mount
        self._point = point_map(mech, mount.body, mount.position)
        self._axis = axis_map(mech, mount.body)
        self._gravity = np.asarray(mech.gravity, float)
        self._rt = rotation(mount.angle).T

    @classmethod
    def from_config(cls, section: Section, name: str, mech: Mechanism) -> Accelerometer:
        mount = AccelerometerParams(section.body(mech, "body"), section.numbers("position", 2),
                                    section.number("angle", 0.0))
        params = read_common(section, KIND, name, UNITS, SPAN)
        check_noise(section, params)
        return cls(params, mech, mount)

    def measurement(self, q: np.ndarray, qdd: np.ndarray, error: np.ndarray,
                    jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = R(β)ᵀ R(φ)ᵀ (r̈_P − (1 + ε) g) [m/s²], ε = ``error`` (one entry); Jacobians wrt (q, q̈,
        ε)."""
        value, d_q, d_qdd, d_error = specific_force(self._axis.matrix, self._axis.offset, self._point.matrix,
                                                    self._gravity, 1.0 + error[0], self._rt, q, qdd)
        return value, [d_q, d_qdd, d_error] if jac else None


@njit(cache=True)
def specific_force(axis: np.ndarray, offset: np.ndarray, point: np.ndarray, gravity: np.ndarray, scale: float,
                   rt: np.ndarray, q: np.ndarray,
                   qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """h = R(β)ᵀ P(u) v with u = D q + d0 (D = ``axis``), v = C q̈ − s g (C = ``point``, s = ``scale``),
    R(β)ᵀ = ``rt``, and ∂h/∂q, ∂h/∂q̈ (2 x n each), ∂h/∂s (2 x 1; module docstring). Compiled: in numpy,
    Python overhead would dominate it."""
    u = axis @ q + offset
    v = point @ qdd - scale * gravity
    norm = np.sqrt(u @ u)
    p = np.array([[u[0], u[1]], [-u[1], u[0]]]) / norm
    s = p @ v
    d_u = np.array([[v[0], v[1]], [v[1], -v[0]]]) / norm - np.outer(s, u) / (norm * norm)
    return rt @ s, rt @ d_u @ axis, rt @ p @ point, -(rt @ p @ gravity).reshape(2, 1)
