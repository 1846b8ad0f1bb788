"""The actuator selection E (n x a) of the unknown forces F in the dynamics rows
M q̈ + Φqᵀ λ − Q − E F (estimator.factors.step_bundle): column j is the unit vector of the j-th
actuated coordinate."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.errors import MbstateError
from estimator.model import Mechanism


def actuator_selection(mech: Mechanism, coordinates: Sequence[int] | None = None) -> np.ndarray:
    """E (n x a): column j is the unit vector of the j-th actuated coordinate (default: mech.actuators)."""
    if coordinates is None:
        coordinates = [act.coordinate for act in mech.actuators]
    if not len(coordinates):
        raise MbstateError(f"{mech.source}: inverse dynamics needs actuated coordinates, none given")
    selection = np.zeros((mech.n, len(coordinates)))
    selection[list(coordinates), np.arange(len(coordinates))] = 1.0
    return selection
