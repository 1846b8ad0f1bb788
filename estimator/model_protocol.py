"""The one model protocol: what the dynamics, the solvers and the estimator ask of a mechanism.

Two models answer it: the planar one (estimator.model.Mechanism: natural coordinates, constraints
Φ(q) = 0, a constant mass matrix) and the spatial one (estimator.spatial.model.SpatialModel: the joint
coordinates of a tree, M(q) by the CRBA, and for a closed chain the loop closures Φ(q) = 0 of its
sidecar, estimator.spatial.loops). Each member is a generic function
(``functools.singledispatch``) of the model's type, so its callers keep one code path and a model is a
registration here, not a copy of them.

Members (S: a maximal independent subset of the constraint rows, λ its multipliers; E the n × a
selection of the unknown forces F):
- attributes ``n`` and ``coordinate_names``: q's size and names (a tree's: its movable joints');
- ``step_rows(model, rows, selection, q, qd, qdd, lam, f, jac)``: one step's error
  e = [Φ_S; Φq_S q̇; d; Φq_S q̈ + s_S], d = M q̈ + Φq_Sᵀ λ − Q(q, q̇) − E F, and with ``jac`` its
  Jacobian over [q, q̇, q̈, λ, F] (estimator.dynamics.step_rows). On a spatial model
  d = RNEA(q, q̇, q̈) + Φq_Sᵀ λ − E F (Müller eqs. 66–67), s_S = Φ̇q_S q̇ (estimator.spatial.loop_rows):
  ∂d/∂q, ∂d/∂q̇ the analytic RNEA derivatives (plus Σ λ_r ∂²Φ_r/∂q²), ∂d/∂q̈ = M, ∂d/∂F = −E; a tree
  has S empty.
- ``constraint_rows(model, rows, q, qd, qdd, jac)``: c = [Φ_S; Φq_S q̇; Φq_S q̈ + s_S] and
  ∂c/∂[q, q̇, q̈]; a tree has none.
- ``mass_matrix(model, q)``: M(q).
- ``generalized_forces(model, q, qd)``: Q(q, q̇), every force but the inertia's and the constraints':
  gravity, springs, dampers, loads; on a tree −RNEA(q, q̇, 0), joint friction included.
- ``free_accelerations(model, q, qd)``: (q̈, λ) of the motion under Q alone (M q̈ + Φqᵀλ = Q,
  Φq q̈ = γ; on a tree the ABA with no joint forces, λ empty; on a closed chain the KKT system of
  estimator.spatial.closed_dynamics, λ over all loop rows).
"""

from __future__ import annotations

from functools import singledispatch

import numpy as np

from estimator.dynamics import lagrange
from estimator.dynamics import step_rows as planar_rows
from estimator.forces import generalized_forces as planar_forces
from estimator.model import Mechanism
from estimator.spatial import closed_dynamics, loop_rows
from estimator.spatial import dynamics as spatial
from estimator.spatial.model import SpatialModel

Model = Mechanism | SpatialModel


@singledispatch
def step_rows(model: Model, rows: np.ndarray, selection: np.ndarray, q: np.ndarray, qd: np.ndarray,
              qdd: np.ndarray, lam: np.ndarray, f: np.ndarray, jac: bool) -> tuple[np.ndarray, np.ndarray]:
    """(e, ∂e/∂[q, q̇, q̈, λ, F]) of one step (module docstring; 0 Jacobian rows without ``jac``)."""
    raise TypeError(f"not a mechanism model: {type(model).__name__}")


@singledispatch
def constraint_rows(model: Model, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    jac: bool) -> tuple[np.ndarray, np.ndarray]:
    """(c, ∂c/∂[q, q̇, q̈]) over the constraint ``rows`` (module docstring)."""
    raise TypeError(f"not a mechanism model: {type(model).__name__}")


@singledispatch
def mass_matrix(model: Model, q: np.ndarray) -> np.ndarray:
    """M(q), (n, n)."""
    raise TypeError(f"not a mechanism model: {type(model).__name__}")


@singledispatch
def generalized_forces(model: Model, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Q(q, q̇), (n,) [N, N·m]."""
    raise TypeError(f"not a mechanism model: {type(model).__name__}")


@singledispatch
def free_accelerations(model: Model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, λ) under the model's own forces Q."""
    raise TypeError(f"not a mechanism model: {type(model).__name__}")


@step_rows.register
def _(model: Mechanism, rows, selection, q, qd, qdd, lam, f, jac):
    return planar_rows.step_rows(model.arrays, rows, selection, q, qd, qdd, lam, f, jac)


@constraint_rows.register
def _(model: Mechanism, rows, q, qd, qdd, jac):
    return planar_rows.constraint_rows(model.arrays, rows, q, qd, qdd, jac)


@mass_matrix.register
def _(model: Mechanism, q):
    return model.arrays.mass


@generalized_forces.register
def _(model: Mechanism, q, qd):
    return planar_forces(model, q, qd)


@free_accelerations.register
def _(model: Mechanism, q, qd):
    return lagrange.accelerations(model.arrays, q, qd, 0.0, 0.0)


@step_rows.register
def _(model: SpatialModel, rows, selection, q, qd, qdd, lam, f, jac):
    return loop_rows.step_rows(model, rows, selection, q, qd, qdd, lam, f, jac)


@constraint_rows.register
def _(model: SpatialModel, rows, q, qd, qdd, jac):
    return loop_rows.constraint_rows(model, rows, q, qd, qdd, jac)


@mass_matrix.register
def _(model: SpatialModel, q):
    return spatial.mass_matrix(model, q)


@generalized_forces.register
def _(model: SpatialModel, q, qd):
    return -spatial.inverse_dynamics(model, q, qd, np.zeros(model.dof))


@free_accelerations.register
def _(model: SpatialModel, q, qd):
    if model.loops:
        return closed_dynamics.accelerations(model, q, qd, np.zeros(model.dof))
    return spatial.forward_dynamics(model, q, qd, np.zeros(model.dof)), np.zeros(0)
