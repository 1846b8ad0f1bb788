"""The bodies' lengths in the constraint rows, for the length-error states (estimator ``length_sigma``).

A body's first two points are held at its length L by the DISTANCE row φ = u·u − L²
(estimator.constraints). With ℓ the relative error of the model's length the row becomes

    φ = u·u − L² (1 + ℓ)² = φ_model − L² ((1 + ℓ)² − 1),   ∂φ/∂ℓ = −2 L² (1 + ℓ).

Only the position rows change: Φq, hence the velocity and acceleration rows, does not depend on L,
and the mass matrix and gravity force keep the model's lengths (exact for bodies whose inertia and
centre of gravity scale with their length, as a uniform rod's I0 = m L²/3 and cog L/2 do:
estimator.mass gives M and Q_g of such a body independent of L).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimator.mass import body_z_indices
from estimator.model import DISTANCE, Mechanism


@dataclass(frozen=True)
class BodyLengthTerms:
    """``names``: the bodies whose DISTANCE row is kept; ``positions``: where that row sits among the
    kept rows S; ``squares``: the model's L² of each."""

    names: tuple[str, ...]
    positions: np.ndarray
    squares: np.ndarray

    def rows(self, ell: np.ndarray, jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """The change −L² ((1 + ℓ)² − 1) of each body's position row and its derivative −2 L² (1 + ℓ)
        by ℓ (a diagonal, as a vector; None without ``jac``)."""
        stretch = 1.0 + ell
        return -self.squares * (stretch * stretch - 1.0), (-2.0 * self.squares * stretch if jac else None)


def body_length_terms(mech: Mechanism, rows: Sequence[int]) -> BodyLengthTerms:
    """The BodyLengthTerms of the bodies whose DISTANCE row is among the constraint ``rows`` S, in the
    order of ``mech.bodies``."""
    arrays, kept = mech.arrays, [int(r) for r in rows]
    names, positions = [], []
    for body in mech.bodies:
        if len(body.points) < 2:
            continue
        ends = body_z_indices(body, mech.point_z)
        for position, r in enumerate(kept):
            if arrays.c_kind[r] == DISTANCE and np.array_equal(arrays.c_idx[r, :4], ends):
                names.append(body.name)
                positions.append(position)
    positions = np.asarray(positions, int)
    squares = arrays.c_coef[np.asarray(kept, int)[positions], 0] if len(positions) else np.zeros(0)
    return BodyLengthTerms(tuple(names), positions, np.asarray(squares, float))
