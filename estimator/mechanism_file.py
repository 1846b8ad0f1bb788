"""Load a mechanism YAML file (a superset of the upstream MBSE format) into a frozen Mechanism.

Upstream keys: ``parameters``; ``points`` (``x``, ``y``, ``fixed``); ``planar_bodies`` (``points``,
``length``, ``mass``, ``I0``, ``cog``, ``visual``); ``relative_coordinates`` of type
``RelativeAngleAbsoluteDOF``. Additions: ``name`` on points, bodies and relative coordinates;
``gravity``; relative coordinates of type ``RelativeAngle`` (between two bodies); ``constraints``,
``forces`` and ``actuators`` sections. ``configs/mechanisms/README.md`` documents every key.

Every number is finite and at most estimator.errors.LIMIT in magnitude; lengths are positive,
masses, moments of inertia, stiffnesses, damping coefficients and rest lengths not negative.

Coordinates q: x, y of every moving point in file order, then the relative coordinates. Names:
``x<i>``/``y<i>`` (``x_<name>``/``y_<name>`` for a named point), ``theta<k>`` or the given name.

Constraints, one scalar row each (kinds in estimator.constraints):
- per body: the distance between its first two points, and two linear rows per further point
  fixing it in the body frame (``r_k = r_0 + A_k (r_1 − r_0)``, exact count, no redundancy);
- per relative angle: ``ANGLE`` between a reference segment and the body segment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from estimator.errors import LIMIT, MechanismFileError, shown
from estimator.expressions import ExpressionError, evaluate
from estimator.mass import assemble_gravity_force, assemble_mass_matrix
from estimator.model import (ANGLE, CONSTRAINT_WIDTH, DISTANCE, LINEAR, ONE, ZERO, Actuator, Arrays, Body,
                             Mechanism)
from estimator.yaml_file import read_yaml

TOP_KEYS = {"parameters", "points", "planar_bodies", "relative_coordinates", "gravity", "constraints",
            "forces", "actuators", "configurations", "name", "description"}
POINT_KEYS = {"x", "y", "fixed", "name"}
BODY_KEYS = {"points", "length", "mass", "I0", "cog", "visual", "name"}
RELATIVE_KEYS = {"type", "points", "bodies", "name"}
CONSTRAINT_KEYS = {
    "slider": {"type", "point", "line", "name"},
    "point_on_line": {"type", "point", "through", "angle", "name"},
    "relative_angle": {"type", "bodies", "angle", "name"},
    "fixed_coordinate": {"type", "coordinate", "value", "name"},
}
FORCE_KEYS = {
    "spring": {"type", "points", "k", "c", "length", "name"},
    "damper": {"type", "points", "c", "name"},
    "torsional_spring": {"type", "coordinate", "k", "c", "angle", "name"},
    "point_force": {"type", "point", "value", "name"},
    "coordinate_force": {"type", "coordinate", "value", "name"},
    "torque": {"type", "body", "value", "name"},
}
ACTUATOR_KEYS = {"name", "coordinate"}
DEFAULT_GRAVITY = (0.0, -9.81)


@dataclass
class _Tables:
    """The extended-vector constants and the constraint rows under construction.

    All indices are absolute z indices: q occupies z[:n], ``constants`` follow.
    """

    n: int
    constants: list[float] = field(default_factory=lambda: [1.0, 0.0])  # ONE, ZERO
    kind: list[int] = field(default_factory=list)
    idx: list[list[int]] = field(default_factory=list)
    coef: list[list[float]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    @property
    def one(self) -> int:
        return self.n + ONE

    @property
    def zero(self) -> int:
        return self.n + ZERO

    def constant(self, value: float) -> int:
        """z index of a new constant entry."""
        self.constants.append(float(value))
        return self.n + len(self.constants) - 1

    def add(self, kind: int, idx: list[int], coef: list[float], name: str) -> None:
        """One constraint row; unused slots point at the constant 0 with coefficient 0."""
        self.kind.append(kind)
        self.idx.append(list(idx) + [self.zero] * (CONSTRAINT_WIDTH - len(idx)))
        self.coef.append(list(coef) + [0.0] * (CONSTRAINT_WIDTH - len(coef)))
        self.names.append(name)


class _Reader:
    """Reads one file; every error names the file and the entry (``points[2].x``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, entry: str, problem: str) -> MechanismFileError:
        return MechanismFileError(self.path, entry, problem)

    def mapping(self, value: Any, entry: str, allowed: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(entry, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                raise self.fail(entry, f"unknown key '{key}' (allowed: {', '.join(sorted(allowed))})")
        return value

    def sequence(self, value: Any, entry: str) -> list:
        if not isinstance(value, list):
            raise self.fail(entry, f"expected a list, got {type(value).__name__}")
        return value

    def required(self, item: dict, key: str, entry: str) -> Any:
        if key not in item:
            raise self.fail(entry, f"missing key '{key}'")
        return item[key]

    def number(self, value: Any, entry: str, variables: Mapping[str, float], minimum: float = -LIMIT,
               positive: bool = False) -> float:
        """A number or expression, finite, in [minimum, LIMIT] (``positive``: > 0)."""
        try:
            result = evaluate(value, variables)
        except ExpressionError as exc:
            raise self.fail(entry, str(exc)) from None
        if positive and result <= 0.0:
            raise self.fail(entry, f"must be positive, got {shown(result)}")
        if result < minimum:
            bound = "must not be negative" if minimum == 0.0 else f"must be at least {minimum:g}"
            raise self.fail(entry, f"{bound}, got {shown(result)}")
        if result > LIMIT:
            raise self.fail(entry, f"must be at most {LIMIT:g}, got {shown(result)}")
        return result

    def vector(self, value: Any, entry: str, variables: Mapping[str, float]) -> np.ndarray:
        values = self.sequence(value, entry)
        if len(values) != 2:
            raise self.fail(entry, f"expected 2 values [x, y], got {len(values)}")
        return np.array([self.number(v, f"{entry}[{i}]", variables) for i, v in enumerate(values)])

    def index(self, value: Any, entry: str, count: int, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(entry, f"expected a {what} index (integer), got {value!r}")
        if not 0 <= value < count:
            raise self.fail(entry, f"{what} index {value} out of range (0..{count - 1})")
        return value


def load_mechanism(path: str | Path) -> Mechanism:
    """Parse and validate a mechanism file; raises MechanismFileError naming entry and problem."""
    path = str(path)
    return build_mechanism(read_yaml(path), path)


def build_mechanism(document: Any, path: str = "<mechanism>") -> Mechanism:
    """Build a Mechanism from a parsed YAML document."""
    read = _Reader(path)
    doc = read.mapping(document, "", TOP_KEYS)
    variables = _parameters(read, doc.get("parameters") or {})
    gravity = read.vector(doc.get("gravity", list(DEFAULT_GRAVITY)), "gravity", variables)
    xy, fixed, point_names = _points(read, doc.get("points"), variables)
    relatives = read.sequence(doc.get("relative_coordinates") or [], "relative_coordinates")

    moving = [p for p in range(len(xy)) if not fixed[p]]
    tables = _Tables(n=2 * len(moving) + len(relatives))
    point_z = np.zeros((len(xy), 2), dtype=np.int64)
    for k, p in enumerate(moving):
        point_z[p] = (2 * k, 2 * k + 1)
    for p in np.flatnonzero(fixed):
        point_z[p] = (tables.constant(xy[p, 0]), tables.constant(xy[p, 1]))
    names, owners = [], []  # owners: the entry that defines each coordinate, for error messages
    for p in moving:
        label = p if point_names[p] is None else f"_{point_names[p]}"
        names += [f"x{label}", f"y{label}"]
        owners += [f"points[{p}]"] * 2
    q0 = list(xy[moving].ravel())

    bodies = _bodies(read, doc.get("planar_bodies"), variables, xy, point_z, tables)
    for k, item in enumerate(relatives):
        name, angle = _relative_coordinate(read, item, k, xy, bodies, point_z, len(names), tables)
        names.append(name)
        owners.append(f"relative_coordinates[{k}].name")
        q0.append(angle)
    for k, name in enumerate(names):
        if (first := names.index(name)) < k:
            raise read.fail(owners[k], f"duplicate coordinate name '{name}' (also {owners[first]})")
    coordinate = _CoordinateLookup(read, tuple(names))
    _constraints(read, doc.get("constraints") or [], variables, xy, bodies, point_z, coordinate, np.array(q0), tables)
    forces = _forces(read, doc.get("forces") or [], variables, xy, bodies, point_z, coordinate, tables.n)
    actuators = _actuators(read, doc.get("actuators") or [], coordinate)
    configurations = _configurations(read, doc.get("configurations") or {}, variables, coordinate)

    n = tables.n
    size = n + len(tables.constants)
    gravity_z = assemble_gravity_force(bodies, point_z, gravity, size)
    arrays = Arrays(
        n=n, constants=np.array(tables.constants),
        c_kind=np.array(tables.kind, dtype=np.int64),
        c_idx=np.array(tables.idx, dtype=np.int64).reshape(-1, CONSTRAINT_WIDTH),
        c_coef=np.array(tables.coef, dtype=float).reshape(-1, CONSTRAINT_WIDTH),
        mass=assemble_mass_matrix(bodies, point_z, n), q_force=gravity_z[:n] + forces.constant,
        spring_idx=np.array(forces.spring_idx, dtype=np.int64).reshape(-1, 4),
        spring_par=np.array(forces.spring_par, dtype=float).reshape(-1, 3),
        torsion_idx=np.array(forces.torsion_idx, dtype=np.int64),
        torsion_par=np.array(forces.torsion_par, dtype=float).reshape(-1, 3),
        torque_idx=np.array(forces.torque_idx, dtype=np.int64).reshape(-1, 4),
        torque_val=np.array(forces.torque_val, dtype=float),
    )
    for array in arrays[1:]:
        array.setflags(write=False)
    return Mechanism(
        source=path, coordinate_names=tuple(names),
        point_names=tuple(name or str(p) for p, name in enumerate(point_names)),
        point_z=point_z, bodies=bodies, constraint_names=tuple(tables.names), actuators=actuators,
        gravity=gravity, gravity_z=gravity_z, q0=np.array(q0, dtype=float), arrays=arrays,
        configurations=configurations)


def _name(read: _Reader, item: dict, entry: str) -> str | None:
    """An optional ``name:``: a non-empty string usable in CSV headers."""
    name = item.get("name")
    if name is None:
        return None
    if not isinstance(name, str) or not name or any(c in name for c in " ,\t\n"):
        raise read.fail(f"{entry}.name", f"expected a name without spaces or commas, got {name!r}")
    return name


def _parameters(read: _Reader, parameters: Any) -> dict[str, float]:
    """Parameters in file order; each may use the ones before it."""
    if not isinstance(parameters, dict):
        raise read.fail("parameters", f"expected a mapping, got {type(parameters).__name__}")
    variables: dict[str, float] = {}
    for key, value in parameters.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise read.fail("parameters", f"parameter name {key!r} is not an identifier")
        variables[key] = read.number(value, f"parameters.{key}", variables)
    return variables


def _points(read: _Reader, points: Any, variables: dict[str, float]) -> tuple[np.ndarray, np.ndarray, list]:
    """Approximate positions, fixed flags and names; ``x<i>``, ``y<i>`` become variables."""
    if points is None:
        raise read.fail("", "missing key 'points'")
    points = read.sequence(points, "points")
    if not points:
        raise read.fail("points", "a mechanism needs at least one point")
    xy, fixed, names = np.zeros((len(points), 2)), np.zeros(len(points), dtype=bool), []
    scope = dict(variables)
    for i, item in enumerate(points):
        entry = f"points[{i}]"
        item = read.mapping(item, entry, POINT_KEYS)
        for axis, key in enumerate("xy"):
            xy[i, axis] = read.number(read.required(item, key, entry), f"{entry}.{key}", scope)
        flag = item.get("fixed", False)
        if not isinstance(flag, bool):
            raise read.fail(f"{entry}.fixed", f"expected true or false, got {flag!r}")
        fixed[i] = flag
        names.append(_name(read, item, entry))
        if names[-1] is not None and names[-1] in names[:-1]:
            raise read.fail(f"{entry}.name", f"duplicate point name '{names[-1]}' (also points[{names.index(names[-1])}])")
        scope[f"x{i}"], scope[f"y{i}"] = xy[i]
    return xy, fixed, names


def _bodies(read: _Reader, bodies: Any, variables: dict[str, float], xy: np.ndarray, point_z: np.ndarray,
            tables: _Tables) -> tuple[Body, ...]:
    """Bodies with their mass properties, and their rigid-body constraint rows."""
    result = []
    for b, item in enumerate(read.sequence(bodies or [], "planar_bodies")):
        entry = f"planar_bodies[{b}]"
        item = read.mapping(item, entry, BODY_KEYS)
        points = read.sequence(read.required(item, "points", entry), f"{entry}.points")
        if len(points) < 2:
            raise read.fail(f"{entry}.points", f"a body needs 2 or more points, got {len(points)}")
        points = tuple(read.index(p, f"{entry}.points", len(xy), "point") for p in points)
        if len(set(points)) != len(points):
            raise read.fail(f"{entry}.points", "a point appears twice")
        scope = dict(variables)
        for i in range(len(points)):
            for j in range(i + 1, len(points)):
                scope[f"length{i + 1}{j + 1}"] = float(np.linalg.norm(xy[points[j]] - xy[points[i]]))
        span = scope["length12"]
        if span == 0.0:
            raise read.fail(f"{entry}.points", "the first two points coincide")
        length = item.get("length", "auto")
        if len(points) > 2 or length == "auto":
            length = span
        else:
            length = read.number(length, f"{entry}.length", scope, positive=True)
        scope["length"] = length
        mass = read.number(read.required(item, "mass", entry), f"{entry}.mass", scope, minimum=0.0)
        scope["mass"] = mass
        inertia = read.number(read.required(item, "I0", entry), f"{entry}.I0", scope, minimum=0.0)
        cog = read.vector(read.required(item, "cog", entry), f"{entry}.cog", scope)
        name = _name(read, item, entry) or f"body{b}"
        if name in [body.name for body in result]:
            raise read.fail(f"{entry}.name", f"duplicate body name '{name}'")
        body = Body(name=name, points=points, mass=mass, inertia=inertia, cog=(cog[0], cog[1]), length=length)
        result.append(body)
        _rigid_body_rows(body, xy, point_z, tables)
    return tuple(result)


def _rigid_body_rows(body: Body, xy: np.ndarray, point_z: np.ndarray, tables: _Tables) -> None:
    """Distance between the first two points; each further point k fixed in the body frame:
    r_k − r_0 − A_k (r_1 − r_0) = 0 with A_k = a I + b J from the file's positions (two linear rows)."""
    p0, p1 = body.points[:2]
    x0, y0, x1, y1 = *point_z[p0], *point_z[p1]
    if min(x0, x1) < tables.n:  # a body with both points fixed is part of the ground
        tables.add(DISTANCE, [x0, y0, x1, y1], [body.length**2], f"{body.name}: distance {p0}-{p1}")
    d = xy[p1] - xy[p0]
    for pk in body.points[2:]:
        xk, yk = point_z[pk]
        if min(x0, x1, xk) >= tables.n:
            continue
        r = xy[pk] - xy[p0]
        a, b = (d @ r) / (d @ d), (d[0] * r[1] - d[1] * r[0]) / (d @ d)
        tables.add(LINEAR, [xk, x0, x1, y0, y1], [1.0, a - 1.0, -a, -b, b], f"{body.name}: point {pk} x")
        tables.add(LINEAR, [yk, y0, y1, x0, x1], [1.0, a - 1.0, -a, b, -b], f"{body.name}: point {pk} y")


def _segment(read: _Reader, entry: str, bodies: tuple[Body, ...], value: Any) -> tuple[int, int]:
    """The first two points of a body given by index or name."""
    names = [body.name for body in bodies]
    if isinstance(value, str):
        if value not in names:
            raise read.fail(entry, f"unknown body '{value}'")
        value = names.index(value)
    b = read.index(value, entry, len(bodies), "body")
    return bodies[b].points[0], bodies[b].points[1]


def _angle_row(tables: _Tables, reference: list[int], segment: list[int], angle_z: int, name: str) -> None:
    """ANGLE row: segment rotated by −angle is parallel to the reference segment."""
    tables.add(ANGLE, reference + segment + [angle_z], [], name)


def _relative_coordinate(read: _Reader, item: Any, k: int, xy: np.ndarray, bodies: tuple[Body, ...],
                         point_z: np.ndarray, z_index: int, tables: _Tables) -> tuple[str, float]:
    """A relative angle coordinate (absolute, or between two bodies) and its constraint row."""
    entry = f"relative_coordinates[{k}]"
    item = read.mapping(item, entry, RELATIVE_KEYS)
    kind = read.required(item, "type", entry)
    name = _name(read, item, entry) or f"theta{k}"
    if kind == "RelativeAngleAbsoluteDOF":
        pts = read.sequence(read.required(item, "points", entry), f"{entry}.points")
        if len(pts) != 2:
            raise read.fail(f"{entry}.points", f"expected 2 points, got {len(pts)}")
        i, j = (read.index(p, f"{entry}.points", len(xy), "point") for p in pts)
        reference, (a, b) = [tables.zero, tables.zero, tables.one, tables.zero], (i, j)
        start = np.array([1.0, 0.0])
    elif kind == "RelativeAngle":
        pair = read.sequence(read.required(item, "bodies", entry), f"{entry}.bodies")
        if len(pair) != 2:
            raise read.fail(f"{entry}.bodies", f"expected 2 bodies, got {len(pair)}")
        (i0, j0), (a, b) = (_segment(read, f"{entry}.bodies", bodies, v) for v in pair)
        reference, start = [*point_z[i0], *point_z[j0]], xy[j0] - xy[i0]
    else:
        raise read.fail(f"{entry}.type", f"unknown type '{kind}' (known: RelativeAngleAbsoluteDOF, RelativeAngle)")
    segment = xy[b] - xy[a]
    if not segment.any():
        raise read.fail(f"{entry}", "the angle's points coincide")
    angle = math.atan2(start[0] * segment[1] - start[1] * segment[0], start @ segment)
    _angle_row(tables, reference, [*point_z[a], *point_z[b]], z_index, f"{name}: angle")
    return name, angle


@dataclass(frozen=True)
class _CoordinateLookup:
    """Coordinate names to indices, with a file error for unknown names."""

    read: _Reader
    names: tuple[str, ...]

    def __call__(self, value: Any, entry: str) -> int:
        if value not in self.names:
            raise self.read.fail(entry, f"unknown coordinate {value!r} (known: {', '.join(self.names)})")
        return self.names.index(value)


def _typed(read: _Reader, item: Any, entry: str, known: dict[str, set[str]]) -> tuple[str, dict]:
    """An entry with a ``type`` key among ``known``, checked against that type's keys."""
    if not isinstance(item, dict):
        raise read.fail(entry, f"expected a mapping, got {type(item).__name__}")
    kind = read.required(item, "type", entry)
    if kind not in known:
        raise read.fail(f"{entry}.type", f"unknown type {kind!r} (known: {', '.join(known)})")
    return kind, read.mapping(item, entry, known[kind])


def _constraints(read: _Reader, items: Any, variables: dict[str, float], xy: np.ndarray, bodies: tuple[Body, ...],
                 point_z: np.ndarray, coordinate: _CoordinateLookup, q0: np.ndarray, tables: _Tables) -> None:
    """Rows of the ``constraints:`` section."""
    for k, item in enumerate(read.sequence(items, "constraints")):
        entry = f"constraints[{k}]"
        kind, item = _typed(read, item, entry, CONSTRAINT_KEYS)
        label = _name(read, item, entry) or f"constraints[{k}]"
        if kind == "slider":
            point = read.index(read.required(item, "point", entry), f"{entry}.point", len(xy), "point")
            line = read.sequence(read.required(item, "line", entry), f"{entry}.line")
            if len(line) != 2:
                raise read.fail(f"{entry}.line", f"expected 2 points, got {len(line)}")
            i, j = (read.index(p, f"{entry}.line", len(xy), "point") for p in line)
            _angle_row(tables, [*point_z[i], *point_z[j]], [*point_z[i], *point_z[point]], tables.zero,
                       f"{label}: slider {point} on {i}-{j}")
        elif kind == "point_on_line":
            point = read.index(read.required(item, "point", entry), f"{entry}.point", len(xy), "point")
            through = read.vector(read.required(item, "through", entry), f"{entry}.through", variables)
            angle = read.number(item.get("angle", 0.0), f"{entry}.angle", variables)
            nx, ny = -math.sin(angle), math.cos(angle)  # normal of the line
            x, y = point_z[point]
            tables.add(LINEAR, [x, y, tables.one], [nx, ny, -(nx * through[0] + ny * through[1])],
                       f"{label}: point {point} on line")
        elif kind == "relative_angle":
            pair = read.sequence(read.required(item, "bodies", entry), f"{entry}.bodies")
            if len(pair) != 2:
                raise read.fail(f"{entry}.bodies", f"expected 2 bodies, got {len(pair)}")
            (i, j), (a, b) = (_segment(read, f"{entry}.bodies", bodies, v) for v in pair)
            u, w = xy[j] - xy[i], xy[b] - xy[a]
            default = math.atan2(u[0] * w[1] - u[1] * w[0], u @ w)
            angle = read.number(item.get("angle", default), f"{entry}.angle", variables)
            _angle_row(tables, [*point_z[i], *point_z[j]], [*point_z[a], *point_z[b]], tables.constant(angle),
                       f"{label}: relative angle")
        else:  # fixed_coordinate
            c = coordinate(read.required(item, "coordinate", entry), f"{entry}.coordinate")
            value = read.number(item.get("value", q0[c]), f"{entry}.value", variables)
            tables.add(LINEAR, [c, tables.one], [1.0, -value], f"{label}: {coordinate.names[c]} fixed")


@dataclass
class _Forces:
    """Force elements under construction (see Arrays)."""

    constant: np.ndarray
    spring_idx: list[list[int]] = field(default_factory=list)
    spring_par: list[list[float]] = field(default_factory=list)
    torsion_idx: list[int] = field(default_factory=list)
    torsion_par: list[list[float]] = field(default_factory=list)
    torque_idx: list[list[int]] = field(default_factory=list)
    torque_val: list[float] = field(default_factory=list)


def _forces(read: _Reader, items: Any, variables: dict[str, float], xy: np.ndarray, bodies: tuple[Body, ...],
            point_z: np.ndarray, coordinate: _CoordinateLookup, n: int) -> _Forces:
    """Force elements of the ``forces:`` section."""
    forces = _Forces(constant=np.zeros(n))
    for k, item in enumerate(read.sequence(items, "forces")):
        entry = f"forces[{k}]"
        kind, item = _typed(read, item, entry, FORCE_KEYS)
        _name(read, item, entry)

        def value(key: str, default: float | None = None, minimum: float = -LIMIT) -> float:
            raw = item.get(key, default) if default is not None else read.required(item, key, entry)
            return read.number(raw, f"{entry}.{key}", variables, minimum)

        if kind in ("spring", "damper"):
            pts = read.sequence(read.required(item, "points", entry), f"{entry}.points")
            if len(pts) != 2:
                raise read.fail(f"{entry}.points", f"expected 2 points, got {len(pts)}")
            i, j = (read.index(p, f"{entry}.points", len(xy), "point") for p in pts)
            rest = float(np.linalg.norm(xy[j] - xy[i]))
            stiffness = value("k", minimum=0.0) if kind == "spring" else 0.0
            length = value("length", rest, minimum=0.0) if kind == "spring" else rest
            forces.spring_idx.append([*point_z[i], *point_z[j]])
            forces.spring_par.append([stiffness, value("c", 0.0, minimum=0.0), length])
        elif kind == "torsional_spring":
            c = coordinate(read.required(item, "coordinate", entry), f"{entry}.coordinate")
            forces.torsion_idx.append(c)
            forces.torsion_par.append([value("k", minimum=0.0), value("c", 0.0, minimum=0.0), value("angle", 0.0)])
        elif kind == "point_force":
            point = read.index(read.required(item, "point", entry), f"{entry}.point", len(xy), "point")
            load = read.vector(read.required(item, "value", entry), f"{entry}.value", variables)
            for axis in range(2):
                if point_z[point, axis] < n:
                    forces.constant[point_z[point, axis]] += load[axis]
        elif kind == "coordinate_force":
            c = coordinate(read.required(item, "coordinate", entry), f"{entry}.coordinate")
            forces.constant[c] += value("value")
        else:  # torque on a body
            i, j = _segment(read, f"{entry}.body", bodies, read.required(item, "body", entry))
            forces.torque_idx.append([*point_z[i], *point_z[j]])
            forces.torque_val.append(value("value"))
    return forces


def _configurations(read: _Reader, items: Any, variables: Mapping[str, float],
                    coordinate: _CoordinateLookup) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    """Named configurations: {name: {coordinate: value}}, the values held when the mechanism is
    assembled there (an estimator's ``initial_state`` may name one)."""
    if not isinstance(items, dict):
        raise read.fail("configurations",
                        f"expected a mapping of names to coordinate values, got {type(items).__name__}")
    result = []
    for name, values in items.items():
        entry = f"configurations.{name}"
        if not isinstance(name, str) or not name:
            raise read.fail("configurations", f"a configuration name must be text, got {name!r}")
        values = read.mapping(values, entry, set(coordinate.names))
        result.append((name, tuple((key, read.number(value, f"{entry}.{key}", variables))
                                   for key, value in values.items())))
    return tuple(result)


def _actuators(read: _Reader, items: Any, coordinate: _CoordinateLookup) -> tuple[Actuator, ...]:
    """Named generalized forces on coordinates."""
    result = []
    for k, item in enumerate(read.sequence(items, "actuators")):
        entry = f"actuators[{k}]"
        item = read.mapping(item, entry, ACTUATOR_KEYS)
        c = coordinate(read.required(item, "coordinate", entry), f"{entry}.coordinate")
        name = _name(read, item, entry) or coordinate.names[c]
        if name in [a.name for a in result]:
            raise read.fail(f"{entry}.name", f"duplicate actuator name '{name}'")
        result.append(Actuator(name=name, coordinate=c))
    return tuple(result)
