"""Kinematic problems of a spatial closed chain, rank-revealing (redundant closures are allowed).

The planar problems' method (estimator.kinematics; García de Jalón and Bayo, ch. 2) on the loop
closures of estimator.spatial.loops, over joint coordinates: Newton-Raphson on Φ(q) = 0 over the
free joints with minimum-norm least-squares steps (SVD, ``numpy.linalg.lstsq``: redundant rows give
a consistent singular system); the velocity problem Φq q̇ = 0 and the acceleration problem
Φq q̈ = −Φ̇q q̇ with the held joints' rates given; the rank of Φq by SVD; independent joints by QR
with column pivoting (estimator.linalg.pivot_columns picks the dependent ones, best conditioned
first). A step is shortened to turn no joint by more than estimator.kinematics.MAX_TURN, so that
Newton stays on the start's branch. The projection of a state of the motion back onto the loops
(``project``) is M-orthogonal instead: its corrections are least in the kinetic energy's metric.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.dynamics.kernels import saddle_solve
from estimator.kinematics import MAX_TURN, RANK_TOLERANCE, AssemblyError, free_mask, least_squares
from estimator.linalg import pivot_columns
from estimator.spatial.dynamics import Workspace, mass_matrix
from estimator.spatial.loops import loop_terms, row_names
from estimator.spatial.model import SpatialModel


def assemble(model: SpatialModel, guess: np.ndarray, held: Sequence[int] = (), tol: float = 1e-12,
             max_iter: int = 100) -> np.ndarray:
    """q with Φ(q) = 0 [m] near ``guess``, the joints ``held`` unchanged; AssemblyError (the model protocol's,
    an MbstateError) naming the worst row when Newton-Raphson does not reach ``tol``."""
    q, free = np.array(guess, dtype=float), free_mask(model.dof, held)
    zero = np.zeros(model.dof)
    terms = loop_terms(model, q, zero)
    for _ in range(max_iter):
        if np.max(np.abs(terms.phi), initial=0.0) <= tol:
            return q
        step = least_squares(terms.jac[:, free], -terms.phi)
        q[free] += step * min(1.0, MAX_TURN / max(np.max(np.abs(step), initial=0.0), 1e-300))
        terms = loop_terms(model, q, zero)
    if np.max(np.abs(terms.phi), initial=0.0) <= 1e3 * tol:
        return q
    worst = int(np.argmax(np.abs(terms.phi)))
    raise AssemblyError(f"{model.name} cannot be assembled: |Φ| = {abs(terms.phi[worst]):.3g} m at loop row "
                       f"{row_names(model)[worst]!r} after {max_iter} Newton iterations")


def velocities(model: SpatialModel, q: np.ndarray, qd_held: np.ndarray, held: Sequence[int]) -> np.ndarray:
    """q̇ with Φq q̇ = 0, the held joints' rates ``qd_held``."""
    free, qd = free_mask(model.dof, held), np.zeros(model.dof)
    qd[list(held)] = qd_held
    jac = loop_terms(model, q, qd).jac
    qd[free] = least_squares(jac[:, free], -jac[:, ~free] @ qd[~free])
    return qd


def accelerations(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd_held: np.ndarray,
                  held: Sequence[int]) -> np.ndarray:
    """q̈ with Φq q̈ + Φ̇q q̇ = 0, the held joints' accelerations ``qdd_held``."""
    free, qdd = free_mask(model.dof, held), np.zeros(model.dof)
    qdd[list(held)] = qdd_held
    terms = loop_terms(model, q, qd)
    qdd[free] = least_squares(terms.jac[:, free], -terms.rate @ qd - terms.jac[:, ~free] @ qdd[~free])
    return qdd


def rank(jac: np.ndarray) -> int:
    """The rank of Φq (m, n) by SVD, relative tolerance estimator.kinematics.RANK_TOLERANCE."""
    if not jac.size:
        return 0
    return int(np.linalg.matrix_rank(jac, tol=RANK_TOLERANCE * max(1.0, float(np.abs(jac).max())) * max(jac.shape)))


def independent_rows(jac: np.ndarray) -> np.ndarray:
    """S: a maximal independent subset of Φq's rows (QR with column pivoting on Φqᵀ), ascending."""
    return np.sort(pivot_columns(np.ascontiguousarray(jac.T), RANK_TOLERANCE)) if jac.size else np.zeros(0, np.int64)


def independent_joints(model: SpatialModel, q: np.ndarray) -> list[int]:
    """n − rank Φq joints that fix the others (coordinate partitioning): QR with column pivoting picks the
    dependent joints from Φq's columns, from the unactuated joints' columns when those reach Φq's rank
    (then every actuator's joint is independent), else from all."""
    jac = loop_terms(model, q, np.zeros(model.dof)).jac
    if not jac.size:
        return list(range(model.dof))
    others = np.array([k for k in range(model.dof) if k not in set(model.actuated.tolist())], dtype=np.int64)
    pool = others if len(others) and rank(jac[:, others]) == rank(jac) else np.arange(model.dof)
    dependent = set(pool[pivot_columns(np.ascontiguousarray(jac[:, pool]), RANK_TOLERANCE)].tolist())
    return [k for k in range(model.dof) if k not in dependent]


def project(model: SpatialModel, q: np.ndarray, qd: np.ndarray, held: Sequence[int] = (), tol: float = 1e-13,
            max_iter: int = 10, work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) moved onto Φ(q) = 0 and Φq q̇ = 0 by the free joints' corrections Δ least in the kinetic
    energy's metric M (M-orthogonal projection): [[M_ff, Φq_fᵀ], [Φq_f, 0]] [Δ; μ] = [0; r], r = −Φ for
    each Newton step of q (M at the given q), r = −Φq q̇ for q̇ (rank-revealing saddle_solve); the
    ``held`` joints' values and rates kept. The rate correction is M-orthogonal to the loops' tangent
    space, so T changes by −½ ΔᵀMΔ only (second order in the violation; a Euclidean one changes it by
    q̇ᵀMΔ, first order)."""
    q, qd, free = np.array(q, dtype=float), np.array(qd, dtype=float), free_mask(model.dof, held)
    zero = np.zeros(model.dof)
    metric = mass_matrix(model, q, work)[np.ix_(free, free)]
    for _ in range(max_iter):
        terms = loop_terms(model, q, zero)
        if np.max(np.abs(terms.phi), initial=0.0) <= tol:
            break
        q[free] += saddle_solve(metric, terms.jac[:, free], np.zeros(len(metric)), -terms.phi)[0]
    jac = loop_terms(model, q, zero).jac
    metric = mass_matrix(model, q, work)[np.ix_(free, free)]
    qd[free] += saddle_solve(metric, jac[:, free], np.zeros(len(metric)), -jac @ qd)[0]
    return q, qd
