"""Body kinematics for sensors as constant linear maps of q with analytic derivatives.

In natural coordinates a body-fixed point with body-frame coordinates (ξ, η) is
r = r0 + A (r1 − r0), A = (ξ I + η J)/L (its numpy reference form: tests/reference_forms.py): linear in
z = [q, c], so r = C q + c0 with a constant 2 x n matrix C, and ṙ = C q̇, r̈ = C q̈ exactly. The body's x axis
u = r1 − r0 = D q + d0 is such a map too. From u:

    φ = atan2(u_y, u_x),            ∂φ/∂u = J u / |u|²;
    ω = (u × u̇) / |u|²,             ∂ω/∂u = (Jᵀ u̇ − 2 ω u) / |u|²,  ∂ω/∂u̇ = J u / |u|²,

with J the 90° rotation and a × b = a_x b_y − a_y b_x. ``axis_angle`` and ``axis_rate`` evaluate
these through the map u = D q + d0 in one compiled call, gradients wrt q and q̇ included: the online
estimator needs them at every step, and as small numpy operations they would cost several times
more, mostly Python overhead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from estimator.mass import J
from estimator.model import Body, Mechanism


@dataclass(frozen=True)
class LinearMap:
    """x = matrix @ q + offset (2 x n and 2,): a body-fixed point or a body axis."""

    matrix: np.ndarray
    offset: np.ndarray

    def __call__(self, q: np.ndarray) -> np.ndarray:
        return self.matrix @ q + self.offset

    def rate(self, qd: np.ndarray) -> np.ndarray:
        """The same map on rates (q̇ or q̈): constants contribute nothing."""
        return self.matrix @ qd


def _from_z(mech: Mechanism, weights: list[tuple[int, np.ndarray]]) -> LinearMap:
    """Σ W_p r_p over points p with 2 x 2 weights W_p, split into coordinates and constants."""
    n, constants = mech.n, mech.arrays.constants
    matrix, offset = np.zeros((2, n)), np.zeros(2)
    for point, weight in weights:
        for column, z in enumerate(mech.point_z[point]):
            if z < n:
                matrix[:, z] += weight[:, column]
            else:
                offset += weight[:, column] * constants[z - n]
    return LinearMap(matrix, offset)


def point_map(mech: Mechanism, body: Body, local: tuple[float, float]) -> LinearMap:
    """r = r0 + A (r1 − r0) of the body-frame point ``local`` = (ξ, η) [m]."""
    a = (local[0] * np.eye(2) + local[1] * J) / body.length
    return _from_z(mech, [(body.points[0], np.eye(2) - a), (body.points[1], a)])


def axis_map(mech: Mechanism, body: Body) -> LinearMap:
    """u = r1 − r0, the body's x axis (length L)."""
    return _from_z(mech, [(body.points[0], -np.eye(2)), (body.points[1], np.eye(2))])


def position_map(mech: Mechanism, point: int) -> LinearMap:
    """r_p, the global position of a point (constant for a fixed point)."""
    return _from_z(mech, [(point, np.eye(2))])


def segment_map(mech: Mechanism, first: int, second: int) -> LinearMap:
    """u = r_second − r_first between two points."""
    return _from_z(mech, [(first, -np.eye(2)), (second, np.eye(2))])


@njit(cache=True)
def _axis(matrix: np.ndarray, offset: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """u = D q + d0 as two scalars."""
    ux, uy = offset[0], offset[1]
    for j in range(q.shape[0]):
        ux += matrix[0, j] * q[j]
        uy += matrix[1, j] * q[j]
    return ux, uy


@njit(cache=True)
def _through(matrix: np.ndarray, gx: float, gy: float) -> np.ndarray:
    """gᵀ D: a gradient wrt u carried to q (n,)."""
    return gx * matrix[0] + gy * matrix[1]


@njit(cache=True)
def axis_angle(matrix: np.ndarray, offset: np.ndarray, q: np.ndarray) -> tuple[float, np.ndarray]:
    """φ = atan2(u_y, u_x) [rad] of u = D q + d0 (D = ``matrix``, d0 = ``offset``) and ∂φ/∂q (n,)."""
    ux, uy = _axis(matrix, offset, q)
    u2 = ux * ux + uy * uy
    return np.arctan2(uy, ux), _through(matrix, -uy / u2, ux / u2)  # ∂φ/∂u = J u / |u|²


@njit(cache=True)
def axis_rate(matrix: np.ndarray, offset: np.ndarray, q: np.ndarray,
              qd: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """ω = (u × u̇)/|u|² [rad/s] of u = D q + d0, u̇ = D q̇; ∂ω/∂q and ∂ω/∂q̇ (each (n,))."""
    ux, uy = _axis(matrix, offset, q)
    udx, udy = _axis(matrix, np.zeros(2), qd)
    u2 = ux * ux + uy * uy
    omega = (ux * udy - uy * udx) / u2
    d_u = _through(matrix, (udy - 2.0 * omega * ux) / u2, (-udx - 2.0 * omega * uy) / u2)  # (Jᵀ u̇ − 2 ω u)/|u|²
    return omega, d_u, _through(matrix, -uy / u2, ux / u2)


def rotation(angle_rad: float) -> np.ndarray:
    """R(β), the 2 x 2 rotation by β [rad]."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, -s], [s, c]])
