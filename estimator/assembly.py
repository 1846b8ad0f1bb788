"""Assembly near the mechanism file's configuration with named coordinates held (the model protocol's
``assemble``: the planar position problem of estimator.kinematics; a URDF tree's joints as given); an
unknown name or a failed assembly is one MbstateError line.

Held coordinates set more than estimator.kinematics.MAX_TURN away from the file's values are reached by
continuation: in equal stages of at most MAX_TURN, each assembled from the last, so that the solution
stays on the file's assembly branch (a Delta's motors set 1.1 rad away in one solve land its platform above
the base, on the other branch of its forward kinematics)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.errors import MbstateError
from estimator.kinematics import MAX_TURN, AssemblyError
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
    to start on another assembly branch), ``held`` coordinates set and kept (by continuation when far from
    the file's values, module docstring)."""
    q = np.array(start_configuration(mech), dtype=float)
    if guess:
        q[coordinate_indices(mech, guess, option)] = list(guess.values())
    indices = coordinate_indices(mech, held, option)
    start, target = q[indices].copy(), np.array(list(held.values()), dtype=float)
    stages = max(1, int(np.ceil(np.max(np.abs(target - start), initial=0.0) / MAX_TURN)))
    try:
        for stage in range(1, stages + 1):
            q[indices] = start + (target - start) * stage / stages if stage < stages else target
            q = assemble(mech, q, indices)
        return q
    except AssemblyError as exc:
        raise MbstateError(f"{mech.source}: {exc}") from None
