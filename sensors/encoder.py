"""Encoder: a rotary encoder's angle between two bodies (or a body and the ground) [rad], or a
linear encoder's displacement of a point along a direction [m].

Rotary: h(q) = φ_b − φ_a − zero, φ = atan2 of each body's x axis (φ_a = 0 for the ground),
∂h/∂q = (J u_b/|u_b|²)ᵀ D_b − (J u_a/|u_a|²)ᵀ D_a (sensors.geometry). The residual h − z is
wrapped to (−π, π], so single-turn readings (wrapped, ``turns: single``) and multi-turn ones
(unwrapped from the first reading, ``turns: multi``) give the same rows. ``counts`` per revolution
quantize the angle to Δ = 2π/counts (rounding to the nearest count: error uniform, σ = Δ/√12).

Linear: h(q) = dᵀ (r_p − r_ref) − zero with the unit direction d (global frame) and the reference
point (default: the global origin); linear in q, ∂h/∂q = dᵀ (C_p − C_ref). ``resolution`` [m] is Δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from estimator.errors import shown
from estimator.model import Body, Mechanism
from estimator.section import Section
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common, wrap_angle
from sensors.geometry import LinearMap, axis_angle, axis_map, position_map, segment_map

KIND = "encoder"
SPANS = {"rad": 1e6, "m": 1e3}  # default range ±span [rad] (multi-turn) or [m] without a saturation
TURNS = ("single", "multi")


@dataclass(frozen=True)
class RotaryParams:
    """Angle of ``body`` relative to ``reference`` (None: the ground) minus ``zero`` [rad];
    ``counts`` per revolution (0: continuous); ``turns``: single (wrapped) or multi (unwrapped)."""

    body: Body
    reference: Body | None = None
    counts: int = 0
    turns: str = "single"
    zero: float = 0.0


@dataclass(frozen=True)
class LinearParams:
    """Displacement of ``point`` from ``reference`` (None: the origin) along the unit ``direction``
    minus ``zero`` [m]; ``resolution`` [m] (0: continuous)."""

    point: int
    direction: tuple[float, float]
    reference: int | None = None
    resolution: float = 0.0
    zero: float = 0.0


class Encoder(SensorModel):
    """Rotary or linear encoder (see the module docstring)."""

    dimension = 1
    variables = ("q",)

    def __init__(self, params: SensorParams, mech: Mechanism, spec: RotaryParams | LinearParams) -> None:
        self.spec = spec
        self.wraps = isinstance(spec, RotaryParams)
        quantum = (2.0 * math.pi / spec.counts if spec.counts else 0.0) if self.wraps else spec.resolution
        self.params = replace(params, noise=replace(params.noise, quantum=quantum))
        if isinstance(spec, RotaryParams):
            axes = [axis_map(mech, spec.body)] + ([axis_map(mech, spec.reference)] if spec.reference else [])
            self._axis_matrices = np.array([axis.matrix for axis in axes])
            self._axis_offsets = np.array([axis.offset for axis in axes])
        else:
            d = np.asarray(spec.direction)
            seg = (segment_map(mech, spec.reference, spec.point) if spec.reference is not None
                   else position_map(mech, spec.point))
            self._line = LinearMap((d @ seg.matrix)[None, :], np.array([d @ seg.offset - spec.zero]))

    @classmethod
    def from_config(cls, section: Section, name: str, mech: Mechanism) -> Encoder:
        linear = section.has("point")
        reject_quantum(section)
        units = "m" if linear else "rad"
        params = read_common(section, KIND, name, units, SPANS[units])
        if linear:
            direction = np.array(section.numbers("direction", 2))
            if not np.hypot(*direction) > 0.0:
                raise section.error("direction", "must not be zero")
            reference = section.point(mech, "reference") if section.has("reference") else None
            spec: RotaryParams | LinearParams = LinearParams(
                point=section.point(mech, "point"), direction=tuple(direction / np.hypot(*direction)),
                reference=reference, resolution=section.number("resolution", 0.0, minimum=0.0),
                zero=section.number("zero", 0.0))
        else:
            if section.has("body") == section.has("bodies"):
                raise section.error("body", "give either body (angle to the ground) or bodies: [reference, body]")
            if section.has("body"):
                body, reference = section.body(mech, "body"), None
            else:
                pair = section.raw("bodies")
                if not isinstance(pair, list) or len(pair) != 2:
                    raise section.error("bodies", f"must be [reference, body], got {shown(pair)}")
                pick = Section(section.source, section.where, {"bodies[0]": pair[0], "bodies[1]": pair[1]})
                reference, body = pick.body(mech, "bodies[0]"), pick.body(mech, "bodies[1]")
            spec = RotaryParams(body=body, reference=reference, counts=read_counts(section),
                                turns=section.choice("turns", TURNS, "single"), zero=section.number("zero", 0.0))
        sensor = cls(params, mech, spec)
        check_noise(section, sensor.params)
        return sensor

    def measurement(self, q: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """Rotary: h = wrap(φ_b − φ_a − zero) [rad]; linear: h = dᵀ(r_p − r_ref) − zero [m]; ∂h/∂q."""
        if not self.wraps:
            return self._line(q), [self._line.matrix] if jac else None
        value, gradient = relative_angle(self._axis_matrices, self._axis_offsets, q)
        return wrap_angle(np.array([value - self.spec.zero])), [gradient] if jac else None

    def present(self, values: np.ndarray) -> np.ndarray:
        """Single-turn: wrapped to (−π, π]; multi-turn: unwrapped along the sequence."""
        return presented_angles(values, self.spec.turns) if self.wraps else values


def reject_quantum(section: Section) -> None:
    """An encoder's resolution comes from its counts (an angle) or its resolution (a displacement),
    not from noise.quantum."""
    noise = section.data.get("noise")
    if isinstance(noise, dict) and "quantum" in noise:
        raise section.error("noise.quantum", "an encoder's resolution is set by counts (rotary) or "
                                             "resolution (linear)")


def read_counts(section: Section) -> int:
    """``counts`` per revolution, a whole number (0, the default: continuous)."""
    counts = section.number("counts", 0, minimum=0)
    if counts != int(counts):
        raise section.error("counts", f"must be a whole number, got {counts:g}")
    return int(counts)


def presented_angles(values: np.ndarray, turns: str) -> np.ndarray:
    """Angles (N, 1) in time order as a ``turns`` encoder reports them: single, wrapped to (−π, π];
    multi, unwrapped along the sequence."""
    wrapped = wrap_angle(values)
    return wrapped if turns == "single" else np.unwrap(wrapped, axis=0)


@njit(cache=True)
def relative_angle(matrices: np.ndarray, offsets: np.ndarray, q: np.ndarray) -> tuple[float, np.ndarray]:
    """φ_b − φ_a (unwrapped) [rad] and its gradient (1 x n) for the body axis u_b = matrices[0] q + offsets[0]
    and, if given, the reference axis u_a = matrices[1] q + offsets[1] (sensors.geometry.axis_angle)."""
    value, gradient = 0.0, np.zeros((1, q.shape[0]))
    for i in range(matrices.shape[0]):
        phi, d_q = axis_angle(matrices[i], offsets[i], q)
        sign = 1.0 if i == 0 else -1.0
        value += sign * phi
        row = gradient[0]
        row += sign * d_q
    return value, gradient
