"""Loop closures of a spatial closed chain: Φ(q) = 0 and its time derivatives, with the Jacobians.

A closed chain is its URDF spanning tree plus loop closures between two named frames A and B
(the sidecar's ``loops``, estimator.spatial.sidecar), in world components:

- ball (3 rows): Φ = r_A − r_B, the frames' origins coincide;
- revolute (5 rows): besides, z_A · x_B = z_A · y_B = 0 (A's z axis along B's, the joint's axis);
- weld (6 rows): besides, y_A · z_B = z_A · x_B = x_A · y_B = 0 (the frames coincide near alignment;
  at alignment the three rows' rates are the relative angular velocity's components).

Every row is a point difference or a product of two directions fixed in bodies, so Φq, Φ̇q and Φ̈q
follow from the columns of the spatial Jacobian Jˢⱼ = (ωⱼ; vⱼ) (Müller eq. 104) and their rates
J̇ˢⱼ = [Vˢⱼ, Jˢⱼ], J̈ˢⱼ = [V̇ˢⱼ, Jˢⱼ] + [Vˢⱼ, J̇ˢⱼ] (Vˢⱼ, V̇ˢⱼ body j's spatial twist and acceleration,
eqs. 70c–d): a point r of body b moves with ṙ = v_b + ω_b × r, its column j (j moves b) is
gⱼ = vⱼ + ωⱼ × r, ġⱼ = v̇ⱼ + ω̇ⱼ × r + ωⱼ × ṙ, g̈ⱼ = v̈ⱼ + ω̈ⱼ × r + 2 ω̇ⱼ × ṙ + ωⱼ × r̈ (a direction u:
the same without the v terms); a product u · w by Leibniz's rule.

Scleronomic Φ gives ∂(Φq q̇)/∂q = Φ̇q and ∂(Φq q̈ + Φ̇q q̇)/∂q = Φ̈q (both sides are
Σ Φ_{q q_l} q̈ + Σ Φ_{q q_l q_k} q̇_l q̇_k), so the velocity and acceleration rows' Jacobians need no
third derivative tensor; Φ̇q q̇ is the acceleration at q̈ = 0 (for a point: its classical
acceleration). The weighted Hessian Σ λ_r ∂²Φ_r/∂q² of the dynamics rows (estimator.spatial.loop_rows)
in closed form: ∂²x/∂q_a∂q_c = ω_a × g_c, a the ancestor of c or c (estimator.spatial.loop_kernels).
Compiled (loop_kernels) in a workspace per thread and model, so a call allocates only its results;
tests/estimator/spatial/loops_reference.py keeps the numpy sweeps they replace as the reference.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from estimator.spatial.loop_kernels import (L_WIDTH, POINT_ROW, PRODUCT_ROW, hessian_kernel, motion_kernel, row_kernel,
                                            track_kernel)
from estimator.spatial.model import SpatialModel
from estimator.spatial.ops import G_WIDTH

ROWS = {"ball": (".x", ".y", ".z"), "revolute": (".x", ".y", ".z", ".axis_x", ".axis_y"),
        "weld": (".x", ".y", ".z", ".rx", ".ry", ".rz")}
AXIS_PAIRS = {"ball": (), "revolute": ((2, 0), (2, 1)), "weld": ((1, 2), (2, 0), (0, 1))}  # (A's axis, B's)


@dataclass(frozen=True)
class LoopTerms:
    """Φ (m,), Φq (m, n), Φ̇q (m, n) at (q, q̇) and, when q̈ was given, Φ̈q (m, n) (else None); the
    acceleration rows are Φq q̈ + Φ̇q q̇."""
    phi: np.ndarray
    jac: np.ndarray
    rate: np.ndarray
    accel: np.ndarray | None


def row_names(model: SpatialModel) -> tuple[str, ...]:
    """The constraint rows' names, ``<loop>.x`` …, in the order of Φ."""
    return tuple(loop.name + suffix for loop in model.loops for suffix in ROWS[loop.type])


def row_count(model: SpatialModel) -> int:
    """m, the number of loop-closure rows."""
    return sum(len(ROWS[loop.type]) for loop in model.loops)


@dataclass(frozen=True)
class LoopWork:
    """Preallocated arrays of one model's loop kernels (estimator.spatial.loop_kernels): the workspace
    rows (a copy of model.packed, then the motion), the track and constraint rows (the model's loops,
    fixed), the tracks' values, the Hessian's weights and the state (q; q̇; q̈). One per thread: the
    kernels write into it."""
    model: SpatialModel = field(repr=False)
    rows: np.ndarray
    tracks: np.ndarray
    spec: np.ndarray
    values: np.ndarray
    weights: np.ndarray
    state: np.ndarray


def loop_workspace(model: SpatialModel) -> LoopWork:
    """The loop kernels' arrays for ``model``: a track per frame origin and per frame axis that a row
    reads (module docstring), the rows in ``row_names`` order."""
    tracks: list[tuple[float, ...]] = []
    spec: list[tuple[int, int, int, int]] = []

    def track(name: str, axis: int | None) -> int:
        frame = model.frame(name)
        local = frame.pos if axis is None else frame.rot[:, axis]
        tracks.append((frame.body, 1.0 if axis is None else 0.0, *local))
        return len(tracks) - 1

    for loop in model.loops:
        a, b = track(loop.frames[0], None), track(loop.frames[1], None)
        spec += [(POINT_ROW, a, b, c) for c in range(3)]
        spec += [(PRODUCT_ROW, track(loop.frames[0], i), track(loop.frames[1], k), 0) for i, k in AXIS_PAIRS[loop.type]]
    rows = np.zeros((model.dof, L_WIDTH))
    rows[:, :G_WIDTH] = model.packed
    return LoopWork(model, rows, np.array(tracks, dtype=float).reshape(-1, 5),
                    np.array(spec, dtype=float).reshape(-1, 4), np.zeros((len(tracks), 3, 3, model.dof + 1)),
                    np.zeros((len(tracks), 3)), np.zeros((3, model.dof)))


_CACHE = threading.local()
_CACHED = 8  # models whose workspace a thread keeps


def _work(model: SpatialModel) -> LoopWork:
    """This thread's workspace for ``model`` (made on first use, the last _CACHED models kept)."""
    cache = _CACHE.__dict__.setdefault("works", {})
    work = cache.get(id(model))
    if work is None or work.model is not model:
        if len(cache) >= _CACHED:
            cache.pop(next(iter(cache)))
        work = cache[id(model)] = loop_workspace(model)
    return work


def _kinematics(work: LoopWork, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray | None, levels: int) -> None:
    """The motion and the tracks' values at (q, q̇, q̈) (q̈ None: 0) in ``work``."""
    work.state[0], work.state[1] = q, qd
    work.state[2] = 0.0 if qdd is None else qdd
    motion_kernel(work.rows, work.state)
    track_kernel(work.rows, work.tracks, levels, work.values)


def loop_terms(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray | None = None) -> LoopTerms:
    """Φ, Φq, Φ̇q at (q, q̇) and, with ``qdd``, Φ̈q (module docstring), rows in ``row_names`` order."""
    work, levels = _work(model), 3 if qdd is not None else 2
    m = len(work.spec)
    if not m:  # a tree: no rows, and no kinematics to compute for them
        empty = np.zeros((0, model.dof))
        return LoopTerms(np.zeros(0), empty, empty, None if qdd is None else empty)
    _kinematics(work, q, qd, qdd, levels)
    phi, jac = np.empty(m), np.empty((levels, m, model.dof))
    row_kernel(work.spec, work.values, levels, phi, jac)
    return LoopTerms(phi, jac[0], jac[1], jac[2] if qdd is not None else None)


def weighted_hessian(model: SpatialModel, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Σ_r λ_r ∂²Φ_r/∂q² (n, n) over every loop row, λ (m,) in ``row_names`` order (module docstring)."""
    out, work = np.zeros((model.dof, model.dof)), _work(model)
    if len(work.spec):
        _kinematics(work, q, np.zeros(model.dof), None, 1)
        hessian_kernel(work.rows, work.tracks, work.spec, np.ascontiguousarray(lam, dtype=float), work.values,
                       work.weights, out)
    return out
