"""The frozen mechanism model in natural coordinates.

Every kinematic quantity is indexed into the *extended* vector ``z = [q, constants]``: the n
generalized coordinates followed by constant values (1.0, 0.0, the coordinates of fixed points and
constant angles). Constraints and forces store indices into ``z``, so a fixed point is used exactly
like a moving one and only derivatives with respect to ``z[:n]`` are kept. This removes every special
case for bodies with a fixed point and for the orientation of a body's points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

ONE = 0  # index into ``constants`` of the value 1.0
ZERO = 1  # index into ``constants`` of the value 0.0

# Constraint kinds (one scalar equation each); see estimator.constraints for the equations.
LINEAR, DISTANCE, ANGLE = 0, 1, 2
CONSTRAINT_WIDTH = 9  # z entries one constraint row may use


class Arrays(NamedTuple):
    """The model as plain arrays, the form the compiled kernels take.

    Constraint row r: kind ``c_kind[r]`` over ``z[c_idx[r]]`` with parameters ``c_coef[r]``.
    Springs: points (xi, yi, xj, yj) as z indices, parameters (k, c, rest length).
    Torsional springs: a coordinate index, parameters (k, c, rest angle).
    Body torques: the body's first two points as z indices, and the torque.
    """

    n: int
    constants: np.ndarray
    c_kind: np.ndarray
    c_idx: np.ndarray
    c_coef: np.ndarray
    mass: np.ndarray
    q_force: np.ndarray  # constant generalized forces on q: gravity, point and coordinate loads
    spring_idx: np.ndarray
    spring_par: np.ndarray
    torsion_idx: np.ndarray
    torsion_par: np.ndarray
    torque_idx: np.ndarray
    torque_val: np.ndarray


@dataclass(frozen=True)
class Body:
    """A planar rigid body; its mass is carried by its first two points (natural coordinates).

    ``inertia`` is I0 about the first point [kg·m²]; ``cog`` is in the body frame whose origin is the
    first point and whose x axis points to the second; ``length`` is the distance between those
    two points [m] used by the mass matrix.
    """

    name: str
    points: tuple[int, ...]
    mass: float
    inertia: float
    cog: tuple[float, float]
    length: float


@dataclass(frozen=True)
class Actuator:
    """A named generalized force acting on one coordinate (torque on an angle, force on x/y)."""

    name: str
    coordinate: int


@dataclass(frozen=True)
class Mechanism:
    """An immutable mechanism: coordinates, constraints, constant mass matrix and force elements.

    ``q0`` holds the file's approximate coordinates (not necessarily assembled);
    ``point_z[p]`` the z indices of point p's x and y; ``gravity_z`` the gravity generalized
    force over all of z (used for the potential energy ``V = -gravity_z · z``).
    """

    source: str
    coordinate_names: tuple[str, ...]
    point_names: tuple[str, ...]
    point_z: np.ndarray
    bodies: tuple[Body, ...]
    constraint_names: tuple[str, ...]
    actuators: tuple[Actuator, ...]
    gravity: np.ndarray
    gravity_z: np.ndarray
    q0: np.ndarray
    arrays: Arrays
    # named configurations: (name, ((coordinate, value), …)) for each
    configurations: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    @property
    def n(self) -> int:
        """Number of generalized coordinates."""
        return self.arrays.n

    @property
    def m(self) -> int:
        """Number of scalar constraint equations (redundant ones included)."""
        return len(self.constraint_names)

    @property
    def point_coordinates(self) -> list[int]:
        """Indices in q of the moving points' x and y [m], ascending; the other coordinates are angles."""
        return sorted({int(i) for i in np.ravel(self.point_z) if i < self.n})

    def index(self, name: str) -> int:
        """Position of a coordinate in q, by name."""
        try:
            return self.coordinate_names.index(name)
        except ValueError:
            raise KeyError(f"unknown coordinate '{name}' (known: {', '.join(self.coordinate_names)})") from None

    def z(self, q: np.ndarray) -> np.ndarray:
        """The extended vector [q, constants]."""
        return np.concatenate((q, self.arrays.constants))

