"""Kinematic problems (position, velocity, acceleration) and the choice of independent coordinates.

Position problem: Newton-Raphson on Φ(q) = 0 over the free coordinates, the held ones fixed
(García de Jalón and Bayo, ch. 2). Every linear solve is a least-squares solve by SVD
(``numpy.linalg.lstsq``), rank-revealing, so redundant constraints (the pick-and-place robot's
double parallelogram) give the minimum-norm step instead of a singular matrix.

Staying on the guess's branch: the equation of a relative angle t, |u||w| sin(α − t) = 0, also
holds for t = α + π (the segment turned half a turn) and is 2π-periodic, so a long Newton step can
land on another solution. Hence every Newton step is shortened to turn no segment of a distance
constraint by more than MAX_TURN (estimator.constraints.turn_limited_fraction), so that a relative
angle changes by less than half a turn; after it, each free angle coordinate is set to its
geometric angle α on the turn nearest its previous value (so it stays continuous); and held angles
farther than MAX_TURN from the guess's geometry are approached in increments of at most MAX_TURN,
each solved from the last.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from estimator.constraints import (acceleration_rhs, angle_coordinates, constraint_derivatives, constraint_jacobian,
                                   constraint_values, turn_limited_fraction)
from estimator.errors import MbstateError
from estimator.linalg import pivot_columns
from estimator.model import Mechanism

RANK_TOLERANCE = 1e-9
MAX_TURN = np.pi / 4  # largest turn of a segment in one Newton step, and of a held angle per increment [rad]


class AssemblyError(MbstateError):
    """The constraints cannot be satisfied from the given guess."""


def free_mask(n: int, held: Sequence[int]) -> np.ndarray:
    """True for each of n coordinates not in ``held``."""
    free = np.ones(n, dtype=bool)
    free[list(held)] = False
    return free


def least_squares(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The minimum-norm least-squares x of a x = b, rank-revealing (RANK_TOLERANCE)."""
    return np.linalg.lstsq(a, b, rcond=RANK_TOLERANCE)[0]


@njit(cache=True)
def _nearest_turn(angle: float, reference: float) -> float:
    """angle + 2πk [rad] with the integer k that brings it nearest ``reference``."""
    return angle + 2.0 * np.pi * np.round((reference - angle) / (2.0 * np.pi))


@njit(cache=True)
def _branch_step(q, free, step, constants, c_kind, c_idx):
    """(q after the Newton step ``step`` of its free coordinates, the fraction of the step taken):
    the step is shortened to turn no segment by more than MAX_TURN, then the free angle
    coordinates are set to their geometric angles on the turn nearest their values at q."""
    full = np.zeros(q.shape[0])
    full[free] = step
    fraction = turn_limited_fraction(q, full, constants, c_kind, c_idx, MAX_TURN)
    out = q + fraction * full
    coordinates, alpha = angle_coordinates(out, constants, c_kind, c_idx)
    for k in range(coordinates.shape[0]):
        if free[coordinates[k]]:
            out[coordinates[k]] = _nearest_turn(alpha[k], q[coordinates[k]])
    return out, fraction


@njit(cache=True)
def _held_angle_starts(q, free, constants, c_kind, c_idx):
    """The held angle coordinates, their geometric angles at q on the turn nearest their values
    (the targets), and the largest distance of a target from its start."""
    coordinates, alpha = angle_coordinates(q, constants, c_kind, c_idx)
    held = ~free[coordinates]
    angles, start = coordinates[held], alpha[held]
    gap = 0.0
    for k in range(angles.shape[0]):
        start[k] = _nearest_turn(start[k], q[angles[k]])
        gap = max(gap, abs(q[angles[k]] - start[k]))
    return angles, start, gap


def branch_step(mech: Mechanism, q: np.ndarray, free: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, float]:
    """(q after a Newton step ``step`` of its ``free`` coordinates, shortened, with the free angle
    coordinates following their geometry (see the module docstring); the fraction of the step
    taken)."""
    a = mech.arrays
    return _branch_step(np.asarray(q, float), free, np.asarray(step, float), a.constants, a.c_kind, a.c_idx)


def solve_position_problem(mech: Mechanism, q_guess: np.ndarray, held: Sequence[int] = (), tol: float = 1e-12,
                           max_iter: int = 50) -> np.ndarray:
    """q with Φ(q) = 0 near ``q_guess`` and on its branch, the coordinates ``held`` unchanged;
    raises AssemblyError."""
    q = np.array(q_guess, dtype=float)
    free = free_mask(mech.n, held)
    a = mech.arrays
    angles, start, gap = _held_angle_starts(q, free, a.constants, a.c_kind, a.c_idx)
    if gap > MAX_TURN:
        target, increments = q[angles], math.ceil(gap / MAX_TURN)
        for k in range(1, increments):
            q[angles] = start + (target - start) * (k / increments)
            q = _newton_position(mech, q, free, tol, max_iter)
        q[angles] = target
    return _newton_position(mech, q, free, tol, max_iter)


def _newton_position(mech: Mechanism, q: np.ndarray, free: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Newton-Raphson on Φ(q) = 0 over the free coordinates, with shortened steps and the free
    angle coordinates following their geometry (see the module docstring)."""
    phi = constraint_values(mech, q)
    for _ in range(max_iter):
        if np.max(np.abs(phi), initial=0.0) <= tol:
            return q
        step = least_squares(constraint_jacobian(mech, q)[:, free], -phi)
        q = branch_step(mech, q, free, step)[0]
        phi = constraint_values(mech, q)
        if np.max(np.abs(step), initial=0.0) <= tol * 1e-3 * (1.0 + np.max(np.abs(q))):
            break
    if np.max(np.abs(phi), initial=0.0) <= tol * 1e3:
        return q
    worst = int(np.argmax(np.abs(phi)))
    raise AssemblyError(f"cannot be assembled: |Φ| = {abs(phi[worst]):.3g} at constraint "
                        f"'{mech.constraint_names[worst]}' after {max_iter} Newton iterations")


def solve_velocity_problem(mech: Mechanism, q: np.ndarray, qd_held: np.ndarray, held: Sequence[int]) -> np.ndarray:
    """q̇ with Φq q̇ = 0 and the held coordinates' velocities ``qd_held``."""
    free = free_mask(mech.n, held)
    jac = constraint_jacobian(mech, q)
    qd = np.zeros(mech.n)
    qd[list(held)] = qd_held
    qd[free] = least_squares(jac[:, free], -jac[:, ~free] @ qd[~free])
    return qd


def solve_acceleration_problem(mech: Mechanism, q: np.ndarray, qd: np.ndarray, qdd_held: np.ndarray,
                               held: Sequence[int]) -> np.ndarray:
    """q̈ with Φq q̈ = −Φ̇q q̇ and the held coordinates' accelerations ``qdd_held``."""
    free = free_mask(mech.n, held)
    jac = constraint_jacobian(mech, q)
    qdd = np.zeros(mech.n)
    qdd[list(held)] = qdd_held
    qdd[free] = least_squares(jac[:, free], acceleration_rhs(mech, q, qd) - jac[:, ~free] @ qdd[~free])
    return qdd


def constraint_rank(mech: Mechanism, q: np.ndarray) -> int:
    """Rank of Φq(q), by SVD."""
    if mech.m == 0:
        return 0
    return int(np.linalg.matrix_rank(constraint_jacobian(mech, q), tol=RANK_TOLERANCE * mech.n))


def degrees_of_freedom(mech: Mechanism, q: np.ndarray) -> int:
    """n − rank Φq(q)."""
    return mech.n - constraint_rank(mech, q)


def independent_coordinates(mech: Mechanism, q: np.ndarray) -> list[int]:
    """A well-conditioned choice of independent coordinates: those left over when QR with column
    pivoting picks a basis of Φq's column space (the dependent coordinates)."""
    dependent = set(pivot_columns(constraint_jacobian(mech, q), RANK_TOLERANCE).tolist())
    return [k for k in range(mech.n) if k not in dependent]


def suggested_independent(mech: Mechanism, q: np.ndarray, rank: int) -> list[int]:
    """The actuated coordinates when they are a valid independent set (as many as the degrees of
    freedom, and the remaining columns of Φq keep its rank); else the angles and what the points
    leave over, when the points' columns alone reach the rank (an angle stays a good coordinate over
    whole turns, a point's x or y is singular at its extremes); otherwise a column-pivoted choice."""
    actuated = sorted({a.coordinate for a in mech.actuators})
    if actuated and len(actuated) == mech.n - rank:
        dependent = [k for k in range(mech.n) if k not in actuated]
        jac = constraint_jacobian(mech, q)[:, dependent]
        if rank == 0 or np.linalg.matrix_rank(jac, tol=RANK_TOLERANCE * mech.n) == rank:
            return actuated
    points = np.asarray(mech.point_coordinates, int)
    if rank and len(points) >= rank:
        picked = pivot_columns(constraint_jacobian(mech, q)[:, points], RANK_TOLERANCE)
        if len(picked) == rank:
            dependent = set(points[picked].tolist())
            return [k for k in range(mech.n) if k not in dependent]
    return independent_coordinates(mech, q)


def tangent_basis(jacobian: np.ndarray) -> np.ndarray:
    """An orthonormal basis N (n × (n − rank)) of the null space of a full-row-rank Φq_S: the admissible
    velocities q̇ = N v (by SVD)."""
    _, _, vt = np.linalg.svd(jacobian)
    return vt[jacobian.shape[0]:].T


def partition_quality(jacobian: np.ndarray, independent: Sequence[int]) -> float:
    """σ_min of Φq_S's columns off I (the dependent block, square for a full-row-rank Φq_S): the pivot of
    coordinate partitioning (García de Jalón and Bayo, ch. 5), how well the constraint rows determine the
    dependent coordinates from z = q[I]. 0 at a pose where I is not a valid independent set (a point's x
    at its extreme)."""
    dependent = np.setdiff1d(np.arange(jacobian.shape[1]), np.asarray(independent, int))
    return float(np.linalg.svd(jacobian[:, dependent], compute_uv=False).min(initial=np.inf))


@dataclass(frozen=True)
class BodyAxes:
    """The x axis u = r1 − r0 of each body of ``mech`` with two points, as z indices (z = [q, constants]):
    ``head`` r1's x, y and ``tail`` r0's; ``length``: the mean of those bodies' lengths [m]."""

    head: np.ndarray
    tail: np.ndarray
    length: float

    @classmethod
    def of(cls, mech: Mechanism) -> BodyAxes:
        bodies = [b for b in mech.bodies if len(b.points) >= 2]
        head = np.array([mech.point_z[b.points[1]] for b in bodies], int).reshape(-1, 2)
        tail = np.array([mech.point_z[b.points[0]] for b in bodies], int).reshape(-1, 2)
        return cls(head, tail, float(np.mean([b.length for b in bodies])) if bodies else 1.0)


def rotation_rates(mech: Mechanism, axes: BodyAxes, q: np.ndarray) -> np.ndarray:
    """∂ω/∂q̇ (bodies × n) of the bodies' angular velocities ω = (u_x u̇_y − u_y u̇_x)/|u|², u their x axes
    (``axes``), at the pose q."""
    z = mech.z(q)
    u = z[axes.head] - z[axes.tail]
    along = np.column_stack((-u[:, 1], u[:, 0])) / np.sum(u * u, axis=1)[:, None]  # ∂ω/∂u̇
    rows = np.arange(len(u))[:, None]
    full = np.zeros((len(u), len(z)))
    full[rows, axes.head] = along  # a body's two points are distinct: no index repeats
    full[rows, axes.tail] = -along
    return full[:, :mech.n]


def motion_tangent(mech: Mechanism, axes: BodyAxes, q: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """The tangent basis N made orthonormal in the bodies' angular velocities: T = N L⁻ᵀ with L Lᵀ = G,
    G = (W N)ᵀ W N (W = rotation_rates), so that Σ over the bodies of ω² = |v|² for q̇ = T v. A motion
    that turns no body (W N loses rank: a translation) is measured by its points' speeds over the bodies'
    mean length instead (G + V₀ V₀ᵀ N[points]ᵀ N[points] V₀ V₀ᵀ / ℓ², V₀ the null space of W N), so
    that G stays regular."""
    turning = rotation_rates(mech, axes, q) @ basis
    metric = turning.T @ turning
    values, vectors = np.linalg.eigh(metric)
    still = vectors[:, values <= 1e-12 * max(float(values.max(initial=0.0)), 1e-300)]
    if still.shape[1]:
        points = basis[mech.point_coordinates] @ still
        metric += still @ (points.T @ points) @ still.T / axes.length ** 2
    return np.linalg.solve(np.linalg.cholesky(metric), basis.T).T


def repartition(jacobian: np.ndarray, current: Sequence[int], reference: float | None,
                ratio: float) -> tuple[tuple[int, ...], float]:
    """(I, its quality) (partition_quality) at the pose of a full-row-rank Φq_S (``jacobian``): ``current``
    while its quality is at least ``ratio`` times ``reference`` (its quality where it was chosen; None:
    not yet known, taken here), else the coordinates that QR with column pivoting leaves over when it
    picks the dependent ones (the best conditioned dependent block; independent_coordinates), in
    increasing order: coordinate partitioning with a pivot check."""
    if not len(current):
        return tuple(current), 1.0
    quality = partition_quality(jacobian, current)
    if reference is None or quality >= ratio * reference:
        return tuple(current), quality if reference is None else reference
    dependent = set(pivot_columns(jacobian, RANK_TOLERANCE).tolist())
    best = tuple(k for k in range(jacobian.shape[1]) if k not in dependent)
    return best, partition_quality(jacobian, best)


def independent_constraint_rows(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Indices of a maximal independent subset of the rows of Φq(q) (sorted), by QR with column
    pivoting on Φqᵀ. Redundant rows (rank Φq < m) are left out, so the systems built on these rows
    stay regular off the constraint manifold too."""
    phi_q = constraint_derivatives(mech, q, False)[1]
    return np.sort(pivot_columns(np.ascontiguousarray(phi_q.T), RANK_TOLERANCE))
