"""Gyroscope: the angular velocity of one body about the plane's normal [rad/s].

h(q, q̇) = s ω,  ω = (u × u̇)/|u|² with u the body's x axis (sensors.geometry), s = +1 for a sensor
whose sensitive axis points out of the plane (counter-clockwise positive), −1 if mounted upside
down. The mounting point does not matter: every point of a rigid body turns at the same rate.
∂h/∂q = s ∂ω/∂u D, ∂h/∂q̇ = s ∂ω/∂u̇ D (D: the constant matrix of u = D q + d0; compiled,
sensors.geometry.axis_rate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from estimator.model import Body, Mechanism
from estimator.section import Section
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common
from sensors.geometry import axis_map, axis_rate

KIND, UNITS = "gyroscope", "rad/s"
SPAN = 1e3  # default range ±SPAN [rad/s] (about 9500 rpm) without a saturation


@dataclass(frozen=True)
class GyroscopeParams:
    """The body it is mounted on and the direction of its axis (+1 out of the plane, −1 into it)."""

    body: Body
    sign: float = 1.0


class Gyroscope(SensorModel):
    """Planar gyroscope on one body (see the module docstring)."""

    dimension = 1
    variables = ("q", "v")

    def __init__(self, params: SensorParams, mech: Mechanism, gyro: GyroscopeParams) -> None:
        self.params, self.gyro = params, gyro
        self._axis = axis_map(mech, gyro.body)

    @classmethod
    def from_config(cls, section: Section, name: str, mech: Mechanism) -> Gyroscope:
        body = section.body(mech, "body")
        sign = section.number("axis", 1.0)
        if sign not in (1.0, -1.0):
            raise section.error("axis", f"must be 1 (out of the plane) or -1 (into it), got {sign:g}")
        params = read_common(section, KIND, name, UNITS, SPAN)
        check_noise(section, params)
        return cls(params, mech, GyroscopeParams(body, sign))

    def measurement(self, q: np.ndarray, qd: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = s ω [rad/s]; Jacobians wrt (q, q̇)."""
        value, d_q, d_qd = signed_rate(self._axis.matrix, self._axis.offset, self.gyro.sign, q, qd)
        return value, [d_q, d_qd] if jac else None


@njit(cache=True)
def signed_rate(matrix: np.ndarray, offset: np.ndarray, sign: float, q: np.ndarray,
                qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """h = s ω (1,) of the axis u = D q + d0 and ∂h/∂q, ∂h/∂q̇ (1 x n each; sensors.geometry.axis_rate)."""
    omega, d_q, d_qd = axis_rate(matrix, offset, q, qd)
    return np.array([sign * omega]), (sign * d_q).reshape(1, -1), (sign * d_qd).reshape(1, -1)
