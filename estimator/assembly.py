"""Assembly near the mechanism file's configuration with named coordinates held (the position
problem of estimator.kinematics); an unknown name or a failed assembly is one MbstateError line."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.errors import MbstateError
from estimator.kinematics import AssemblyError, solve_position_problem
from estimator.model import Mechanism


def coordinate_indices(mech: Mechanism, names: Mapping[str, float] | list[str], option: str) -> list[int]:
    """Indices of named coordinates; an unknown name is a one-line error naming ``option``."""
    try:
        return [mech.index(name) for name in names]
    except KeyError as exc:
        raise MbstateError(f"{option}: {exc.args[0]}") from None


def assembled(mech: Mechanism, held: Mapping[str, float], option: str = "--initial",
              guess: Mapping[str, float] | None = None) -> np.ndarray:
    """q satisfying the constraints near the file's coordinates (those named in ``guess`` replaced,
    to start on another assembly branch), ``held`` coordinates set and kept."""
    q = mech.q0.copy()
    if guess:
        q[coordinate_indices(mech, guess, option)] = list(guess.values())
    indices = coordinate_indices(mech, held, option)
    q[indices] = list(held.values())
    try:
        return solve_position_problem(mech, q, indices)
    except AssemblyError as exc:
        raise MbstateError(f"{mech.source}: {exc}") from None
