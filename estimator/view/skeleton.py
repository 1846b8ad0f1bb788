"""What the page draws of a spatial mechanism (a URDF): a skeleton of 3-D points and segments.

The points are the base's origin, each moving body's frame origin and each named frame (a merged link,
a sidecar frame) that sits off its body's origin; the segments join each body's origin to its parent's
(the base's for a root joint) and each named frame to its body's origin, and each loop closure of a closed
chain joins its two frames (a zero-length segment when the loop is closed). Only the poses are computed,
by the recursion Cᵢ = C_λ(i) Bᵢ exp(ⁱXᵢ qᵢ) of estimator.spatial.kinematics (no twists: the page needs
none); the page projects the points (estimator/view/page.html).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from estimator.spatial import lie
from estimator.spatial.kinematics import relative
from estimator.spatial.model import SpatialModel

OFFSET_M = 1e-9  # [m] a named frame closer than this to its body's origin is drawn at that origin


class Skeleton:
    """The skeleton of ``model`` for the page: :meth:`layout` once, :meth:`points` per frame."""

    def __init__(self, model: SpatialModel) -> None:
        self.model = model
        offset = [frame for frame in model.frames if np.linalg.norm(frame.pos) > OFFSET_M]
        self.frame_body = np.array([frame.body + 1 for frame in offset], int)  # 0: the base, i + 1: body i
        self.frame_pos = np.array([frame.pos for frame in offset], float).reshape(-1, 3)
        first = model.dof + 1  # the offset frames' points follow the base's and the bodies'
        point_of = {frame.name: frame.body + 1 for frame in model.frames}
        point_of.update((frame.name, first + k) for k, frame in enumerate(offset))
        self.point_names = [model.base, *model.link_names, *(frame.name for frame in offset)]
        self.segments = ([[int(model.parent[i]) + 1, i + 1] for i in range(model.dof)]
                         + [[int(body), first + k] for k, body in enumerate(self.frame_body)])
        self.loops = [[point_of[a], point_of[b]] for a, b in (loop.frames for loop in model.loops)]
        self.reference = self.points(model.initial)

    def points(self, q: Any) -> list[list[float]]:
        """Every point's [x, y, z] in the world [m] at joint coordinates ``q`` (the model's order)."""
        n, q = self.model.dof, np.asarray(q, float)
        rot, pos = np.empty((n + 1, 3, 3)), np.empty((n + 1, 3))
        rot[0], pos[0] = np.eye(3), np.zeros(3)
        for i in range(n):
            p = self.model.parent[i] + 1
            rot[i + 1], pos[i + 1] = lie.compose((rot[p], pos[p]), relative(self.model, i, q[i]))
        frames = np.einsum("kij,kj->ki", rot[self.frame_body], self.frame_pos) + pos[self.frame_body]
        return np.concatenate((pos, frames)).tolist()

    def layout(self) -> dict[str, Any]:
        """The static part: point names, segments and loop closures as point index pairs, the start pose."""
        return {"kind": "spatial", "point_names": self.point_names, "segments": self.segments, "loops": self.loops,
                "reference": self.reference}
