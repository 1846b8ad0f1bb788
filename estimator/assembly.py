"""Assembly near the mechanism file's configuration with named coordinates held (the model protocol's
``assemble``: the planar position problem of estimator.kinematics; a URDF tree's joints as given); an
unknown name or a failed assembly is one MbstateError line."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.errors import MbstateError
from estimator.kinematics import AssemblyError
from estimator.model_protocol import Model, assemble, start_configuration


def coordinate_indices(mech: Model, names: Mapping[str, float] | list[str], option: str) -> list[int]:
    """Indices of named coordinates; an unknown name is a one-line error naming ``option``."""
    known = list(mech.coordinate_names)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise MbstateError(f"{option}: unknown coordinate {unknown[0]!r} (known: {', '.join(known)})")
    return [known.index(name) for name in names]


def assembled(mech: Model, held: Mapping[str, float], option: str = "--initial",
              guess: Mapping[str, float] | None = None) -> np.ndarray:
    """q satisfying the constraints near the file's coordinates (those named in ``guess`` replaced,
    to start on another assembly branch), ``held`` coordinates set and kept."""
    q = np.array(start_configuration(mech), dtype=float)
    if guess:
        q[coordinate_indices(mech, guess, option)] = list(guess.values())
    indices = coordinate_indices(mech, held, option)
    q[indices] = list(held.values())
    try:
        return assemble(mech, q, indices)
    except AssemblyError as exc:
        raise MbstateError(f"{mech.source}: {exc}") from None
