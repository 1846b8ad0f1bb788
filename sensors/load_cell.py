"""Load cell: the axial force in a two-point link [N], or the force/torque of an actuator [N, N·m].

Link: the link's distance constraint row r, φ_r = |r_b − r_a|² − L², enters Lagrange's equations
M q̈ + Φqᵀ λ = Q as the force −Φq_rᵀ λ_r on the coordinates: −2 λ_r u on point b and +2 λ_r u on
point a (u = r_b − r_a). For λ_r > 0 both pull the points together, so the link is in tension

    h(λ) = T = 2 L λ_r        (tension positive, compression negative; ∂h/∂λ = 2 L e_rᵀ).

For a massless link T is the force in the rod; for a link with mass it is the force the natural
coordinate model carries between the two points (the body's inertia is lumped on them). With
redundant constraints λ is not unique; a load cell on a redundant loop is not observable.

Actuator: h(f) = f_j, the actuator's generalized force (N·m on an angle, N on x/y), with the
sign of estimator.model.Actuator; the estimator then carries f as variables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from estimator.errors import shown
from estimator.model import DISTANCE, Mechanism
from estimator.section import Section
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common

KIND = "load_cell"
SPAN = 1e7  # default range ±SPAN [N, N·m] without a saturation


@dataclass(frozen=True)
class LoadCellParams:
    """Either the distance-constraint ``row`` of a link (with its ``length`` [m]) or an actuator
    index into mech.actuators."""

    row: int | None = None
    length: float = 0.0
    actuator: int | None = None


class LoadCell(SensorModel):
    """Link tension from λ, or actuator force from f (see the module docstring)."""

    dimension = 1

    def __init__(self, params: SensorParams, mech: Mechanism, spec: LoadCellParams) -> None:
        self.params, self.spec = params, spec
        if spec.row is not None:
            self.variables = ("l",)
            self._gradient = np.zeros((1, mech.m))
            self._gradient[0, spec.row] = 2.0 * spec.length
        else:
            self.variables = ("f",)
            self._gradient = np.zeros((1, len(mech.actuators)))
            self._gradient[0, spec.actuator] = 1.0

    @classmethod
    def from_config(cls, section: Section, name: str, mech: Mechanism) -> LoadCell:
        given = [key for key in ("link", "constraint", "actuator") if section.has(key)]
        if len(given) != 1:
            raise section.error("link", "give exactly one of link (a body), constraint (a distance "
                                        "constraint's name) or actuator")
        if given[0] == "actuator":
            names = [a.name for a in mech.actuators]
            actuator = section.raw("actuator")
            if actuator not in names:
                raise section.error("actuator", f"unknown actuator {shown(actuator)} (known: {', '.join(names) or 'none'})")
            spec = LoadCellParams(actuator=names.index(actuator))
            on_point = mech.actuators[spec.actuator].coordinate in mech.point_z.ravel()
            units = "N" if on_point else "N*m"
        else:
            rows = [r for r in range(mech.m) if mech.arrays.c_kind[r] == DISTANCE]
            if given[0] == "link":
                body = section.body(mech, "link")
                matches = [r for r in rows if mech.constraint_names[r].startswith(f"{body.name}: distance ")]
                if not matches:
                    raise section.error("link", f"body '{body.name}' has no distance constraint (both points fixed?)")
            else:
                label = section.text("constraint")
                matches = [r for r in rows if mech.constraint_names[r] == label]
                if not matches:
                    known = ", ".join(mech.constraint_names[r] for r in rows)
                    raise section.error("constraint", f"no distance constraint named {shown(label)} (known: {known})")
            row = matches[0]
            spec = LoadCellParams(row=row, length=math.sqrt(mech.arrays.c_coef[row, 0]))
            units = "N"
        params = read_common(section, KIND, name, units, SPAN)
        check_noise(section, params)
        return cls(params, mech, spec)

    def measurement(self, x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = 2 L λ_r (x = λ) or h = f_j (x = f) [N or N·m]; ∂h/∂x constant."""
        return self._gradient @ x, [self._gradient] if jac else None

