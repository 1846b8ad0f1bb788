"""The numpy sweeps of the loop closures that estimator.spatial.loop_kernels replaced, kept as the
kernels' second formulation: Φ, Φq, Φ̇q, Φ̈q by the spatial Jacobian's columns and their rates
(estimator.spatial.loops' docstring), and the weighted Hessian Σ λ_r ∂²Φ_r/∂q² column by column as
Φ̇qᵀ λ at q̇ = e_k (Φ̇q = Σ_k ∂Φq/∂q_k q̇_k), n sweeps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.spatial.kinematics import BodyKinematics, ancestry, body_kinematics, spatial_jacobian, spatial_motion
from estimator.spatial.loops import AXIS_PAIRS, LoopTerms
from estimator.spatial.model import SpatialModel

_LEIBNIZ = ((1.0,), (1.0, 1.0), (1.0, 2.0, 1.0))


@dataclass(frozen=True)
class _Motion:
    """The tree's state: poses, spatial twists and accelerations (n, 6), the spatial Jacobian and its
    rates stacked (levels, 6, n), and which joints move which body."""
    kin: BodyKinematics
    twist: np.ndarray
    accel: np.ndarray
    columns: np.ndarray
    moves: np.ndarray


def _motion(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, levels: int) -> _Motion:
    kin = body_kinematics(model, q, qd, qdd)
    twist, accel = spatial_motion(model, kin, qd, qdd)
    columns = np.zeros((levels, 6, model.dof))
    columns[0] = spatial_jacobian(model, kin)
    columns[1] = _bracket(twist.T, columns[0])
    if levels > 2:
        columns[2] = _bracket(accel.T, columns[0]) + _bracket(twist.T, columns[1])
    return _Motion(kin, twist, accel, columns, ancestry(model))


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the first axis (3, …), broadcasting the rest (numpy.cross costs 20 µs a call)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _bracket(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[X, Y] = ad_X Y column by column, X and Y (6, k) twists (ω; v) (Müller eq. 113)."""
    return np.concatenate((_cross(x[:3], y[:3]), _cross(x[:3], y[3:]) + _cross(x[3:], y[:3])))


def _track(model: SpatialModel, motion: _Motion, name: str, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(values (3, 3): x, ẋ, ẍ; columns (levels, 3, n): ∂x/∂q and its rates) of frame ``name``'s
    origin (``axis`` None) or of its unit axis ``axis`` (0, 1, 2: x, y, z), in world components."""
    frame = model.frame(name)
    levels = len(motion.columns)
    values, cols = np.zeros((3, 3)), np.zeros((levels, 3, model.dof))
    local = frame.pos if axis is None else frame.rot[:, axis]
    if frame.body < 0:
        values[0] = local
        return values, cols
    b, kin = frame.body, motion.kin
    w, v, wd, vd = motion.twist[b, :3], motion.twist[b, 3:], motion.accel[b, :3], motion.accel[b, 3:]
    x = kin.rot[b] @ local + (kin.pos[b] if axis is None else 0.0)
    xd = _cross(w, x) + (v if axis is None else 0.0)
    xdd = _cross(wd, x) + _cross(w, xd) + (vd if axis is None else 0.0)
    values[:] = x, xd, xdd
    moves = motion.moves[b]
    spin, at = motion.columns[:, :3, moves], (x[:, None], xd[:, None], xdd[:, None])
    cols[0][:, moves] = _cross(spin[0], at[0])
    cols[1][:, moves] = _cross(spin[1], at[0]) + _cross(spin[0], at[1])
    if levels > 2:
        cols[2][:, moves] = _cross(spin[2], at[0]) + 2.0 * _cross(spin[1], at[1]) + _cross(spin[0], at[2])
    if axis is None:
        cols[:, :, moves] += motion.columns[:, 3:, moves]
    return values, cols


def reference_loop_terms(model: SpatialModel, q: np.ndarray, qd: np.ndarray,
                         qdd: np.ndarray | None = None) -> LoopTerms:
    """Φ, Φq, Φ̇q at (q, q̇) and, with ``qdd``, Φ̈q (module docstring), rows in ``row_names`` order."""
    if not model.loops:  # a tree: no rows, and no kinematics to compute for them
        empty = np.zeros((0, model.dof))
        return LoopTerms(np.zeros(0), empty, empty, None if qdd is None else empty)
    levels = 3 if qdd is not None else 2
    motion = _motion(model, np.asarray(q, float), np.asarray(qd, float),
                     np.zeros(model.dof) if qdd is None else np.asarray(qdd, float), levels)
    phi, blocks = [], []
    for loop in model.loops:
        a, b = loop.frames
        (xa, ga), (xb, gb) = _track(model, motion, a, None), _track(model, motion, b, None)
        phi.append(xa[0] - xb[0])
        blocks.append(ga - gb)
        for i, k in AXIS_PAIRS[loop.type]:
            (u, gu), (w, gw) = _track(model, motion, a, i), _track(model, motion, b, k)
            phi.append([u[0] @ w[0]])
            blocks.append(np.array([sum(c * (u[s] @ gw[level - s] + w[s] @ gu[level - s])
                                        for s, c in enumerate(_LEIBNIZ[level])) for level in range(levels)])[:, None])
    stacked = np.concatenate(blocks, axis=1)
    return LoopTerms(np.concatenate(phi), stacked[0], stacked[1], stacked[2] if qdd is not None else None)


def reference_weighted_hessian(model: SpatialModel, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Σ_r λ_r ∂²Φ_r/∂q² over every row: column k is Φ̇qᵀ λ at q̇ = e_k."""
    eye = np.eye(model.dof)
    return np.column_stack([reference_loop_terms(model, q, eye[k]).rate.T @ lam for k in range(model.dof)])
