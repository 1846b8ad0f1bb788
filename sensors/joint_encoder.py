"""Joint encoder of a spatial open chain (a URDF, estimator.spatial): one joint's coordinate.

h(q) = qⱼ − zero, ∂h/∂q = eⱼᵀ: joint j's angle [rad] (revolute, continuous) or displacement [m]
(prismatic), a URDF joint coordinate being the joint's own relative motion (estimator.spatial.model).
An angle is read as the planar rotary encoder reads one (sensors.encoder): wrapped to (−π, π]
(``turns: single``) or unwrapped from the first reading (``turns: multi``), residuals wrapped,
``counts`` per revolution quantizing to Δ = 2π/counts; a displacement has a ``resolution`` [m].
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from estimator.section import Section
from estimator.spatial.model import PRISMATIC, SpatialModel
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common, wrap_angle
from sensors.encoder import KIND, SPANS, TURNS, presented_angles, read_counts, reject_quantum
from sensors.mounting import read_joint


class JointEncoder(SensorModel):
    """Encoder on joint ``joint`` (index in the model) minus ``zero`` (module docstring)."""

    dimension = 1
    variables = ("q",)

    def __init__(self, params: SensorParams, model: SpatialModel, joint: int, zero: float = 0.0,
                 counts: int = 0, turns: str = "single", resolution: float = 0.0) -> None:
        self.joint, self.zero, self.counts, self.turns = joint, zero, counts, turns
        self.wraps = bool(model.kind[joint] != PRISMATIC)
        quantum = (2.0 * math.pi / counts if counts else 0.0) if self.wraps else resolution
        self.params = replace(params, noise=replace(params.noise, quantum=quantum))
        self._gradient = np.zeros((1, model.dof))
        self._gradient[0, joint] = 1.0

    @classmethod
    def from_config(cls, section: Section, name: str, model: SpatialModel) -> JointEncoder:
        """Keys: ``joint`` (a movable URDF joint), ``zero``; an angle's ``counts`` and ``turns``, a
        displacement's ``resolution``; and the keys every sensor has (sensors.base.read_common)."""
        for key in ("body", "bodies", "point"):
            if section.has(key):
                raise section.error(key, "an encoder of a URDF names its joint (joint: NAME), not a body or point")
        joint = read_joint(section, model)
        reject_quantum(section)
        units = "m" if model.kind[joint] == PRISMATIC else "rad"
        params = read_common(section, KIND, name, units, SPANS[units])
        zero = section.number("zero", 0.0)
        if units == "m":
            sensor = cls(params, model, joint, zero, resolution=section.number("resolution", 0.0, minimum=0.0))
        else:
            sensor = cls(params, model, joint, zero, read_counts(section), section.choice("turns", TURNS, "single"))
        check_noise(section, sensor.params)
        return sensor

    def measurement(self, q: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = qⱼ − zero [rad, wrapped, or m] and ∂h/∂q = eⱼᵀ."""
        value = np.array([q[self.joint] - self.zero])
        return (wrap_angle(value) if self.wraps else value), [self._gradient.copy()] if jac else None

    def present(self, values: np.ndarray) -> np.ndarray:
        """An angle: wrapped to (−π, π] (single-turn) or unwrapped along the sequence (multi-turn)."""
        return presented_angles(values, self.turns) if self.wraps else values
