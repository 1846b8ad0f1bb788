"""What the page draws of a planar mechanism: its bodies as segments between their points.

A point's position is z[point_z[p]] with z = [q, constants] (estimator.model.Mechanism.z): moving points
read q, fixed ones the constants. A body is drawn as the polyline through its points in the order of
the mechanism file (closed when it has more than two). A spatial mechanism is drawn as a skeleton in 3-D
(estimator.view.skeleton); :func:`scene_of` picks the drawing of a model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from estimator.model import Mechanism
from estimator.model_protocol import Model
from estimator.view.skeleton import Skeleton


class Scene:
    """The points and bodies of ``mech`` for the page: :meth:`layout` once, :meth:`points` per frame."""

    def __init__(self, mech: Mechanism) -> None:
        self.point_z = np.asarray(mech.point_z, int)
        self.constants = np.asarray(mech.arrays.constants, float)
        self.n = mech.n
        self.bodies = [(body.name, [int(p) for p in body.points]) for body in mech.bodies]
        self.point_names = list(mech.point_names)
        self.reference = self.points(mech.q0)

    def points(self, q: Any) -> list[list[float]]:
        """Every point's [x, y] [m] at coordinates ``q`` (mechanism order)."""
        z = np.concatenate((np.asarray(q, float)[:self.n], self.constants))
        return z[self.point_z].tolist()

    def layout(self) -> dict[str, Any]:
        """The static part: body names and point indices, point names, the file's pose (for the page's scale)."""
        return {"kind": "planar", "bodies": [{"name": name, "points": points} for name, points in self.bodies],
                "point_names": self.point_names, "reference": self.reference}


def scene_of(model: Model) -> Scene | Skeleton:
    """The page's drawing of ``model``: its points and bodies (planar) or its skeleton (spatial)."""
    return Scene(model) if isinstance(model, Mechanism) else Skeleton(model)
