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
  has S empty. With ``frames`` (spatial only: estimator.spatial.frame_wrenches.FrameWrenches) and their
  wrenches ``w``, the RNEA takes them as applied wrenches, d gains −Σ_f J_fᵀ w_f and the Jacobian the
  columns ∂d/∂w = −J_fᵀ after F.
- ``constraint_rows(model, rows, q, qd, qdd, jac)``: c = [Φ_S; Φq_S q̇; Φq_S q̈ + s_S] and
  ∂c/∂[q, q̇, q̈]; a tree has none.
- ``mass_matrix(model, q)``: M(q).
- ``generalized_forces(model, q, qd)``: Q(q, q̇), every force but the inertia's and the constraints':
  gravity, springs, dampers, loads; on a tree −RNEA(q, q̇, 0), joint friction included.
- ``free_accelerations(model, q, qd)``: (q̈, λ) of the motion under Q alone (M q̈ + Φqᵀλ = Q,
  Φq q̈ = γ; on a tree the ABA with no joint forces, λ empty; on a closed chain the KKT system of
  estimator.spatial.closed_dynamics, λ over all loop rows).

Members the online estimator asks (estimator.online; a spatial model answers them through its loop
closures, estimator.spatial.loops and .assembly: a tree has none):
- ``actuators(model)``: (name, coordinate) of each actuator; ``start_configuration(model)``: the file's q
  (the planar q0, a URDF's sidecar ``initial`` or 0), not necessarily assembled; ``drawn_at(model, q)``:
  the model as if its file had been drawn at q (q its start configuration);
- ``point_coordinates(model)``: the coordinates that are lengths [m] (a planar file's points; a tree's
  prismatic joints are its own coordinates, not points: none);
- ``constraint_count(model)``: m, the constraint rows (a tree: 0); ``constraint_names(model)``: theirs;
- ``constraints(model, q)``: (Φ, Φq); ``constraint_jacobian(model, q)``: Φq (m × n);
- ``velocity_term(model, q, q̇)``: γ = −Φ̇q q̇ of Φq q̈ = γ;
- ``multipliers(model, q, q̇, q̈)``: λ of Φqᵀλ = Q − M q̈;
- ``assemble(model, q, held)``: q with Φ(q) = 0 near q, the ``held`` coordinates kept (AssemblyError);
- ``independent_rows(model, q)``: S; ``independent_coordinates(model, q, rank)``: the start's I
  (a tree: every joint);
- ``tangent_metric(model)``: T(q, N), the tangent basis N made orthonormal in the bodies' angular
  velocities, Σ_b |ω_b|² = |v|² for q̇ = T v (the acceleration noise's shape, estimator.online.drafting);
- ``coordinate_lengths(model)``: per coordinate, what one radian of a body's turn moves it: 1 on
  angles, a mean body length [m] on lengths (the guessed start's σ, estimator.online.scales);
- ``total_mass(model)`` [kg]; ``model_errors(model, rows)``: (gravity, masses, lengths), the
  model-error states' terms (estimator.mass, estimator.lengths; a URDF model's link masses,
  estimator.spatial.link_masses), None where a model has none (a URDF model's lengths);
- ``payload_terms(model, link)``: the terms of an unknown payload on a named link, the rigid body whose
  joint forces the step rows add (estimator.spatial.payload; a spatial model only: the planar model refuses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial, singledispatch, wraps
from pathlib import Path

import numpy as np

from estimator import constraints as planar_constraints
from estimator import kinematics
from estimator.dynamics import forward, lagrange
from estimator.dynamics import step_rows as planar_rows
from estimator.errors import MbstateError
from estimator.forces import generalized_forces as planar_forces
from estimator.lengths import BodyLengthTerms, body_length_terms
from estimator.mass import BodyMassTerms, body_mass_terms
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.spatial import assembly as spatial_assembly
from estimator.spatial import closed_dynamics, loop_rows, loops
from estimator.spatial import dynamics as spatial
from estimator.spatial import payload as spatial_payload
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.link_masses import LinkMassTerms, link_mass_terms
from estimator.spatial.model import PRISMATIC, SpatialModel, is_urdf, load_spatial
from estimator.spatial.tangent import mean_length, motion_tangent

Model = Mechanism | SpatialModel


def load_model(path: str | Path) -> Model:
    """The model of a mechanism file: a URDF (by its suffix, with its sidecar) or a planar YAML file;
    MbstateError with one line for a bad file."""
    return load_spatial(path) if is_urdf(path) else load_mechanism(path)


def member(stub: Callable) -> Callable:
    """A protocol member: a generic function of the model's type with ``stub``'s name, signature and
    docstring, whose registrations are the models' answers and whose base refuses any other object."""
    @wraps(stub)
    def refuse(model: object, *args: object) -> None:
        raise TypeError(f"not a mechanism model: {type(model).__name__}")

    return singledispatch(refuse)


@member
def step_rows(model: Model, rows: np.ndarray, selection: np.ndarray, q: np.ndarray, qd: np.ndarray,
              qdd: np.ndarray, lam: np.ndarray, f: np.ndarray, jac: bool, frames: FrameWrenches | None = None,
              w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(e, ∂e/∂[q, q̇, q̈, λ, F, w]) of one step (module docstring; 0 Jacobian rows without ``jac``)."""


@member
def constraint_rows(model: Model, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    jac: bool) -> tuple[np.ndarray, np.ndarray]:
    """(c, ∂c/∂[q, q̇, q̈]) over the constraint ``rows`` (module docstring)."""


@member
def mass_matrix(model: Model, q: np.ndarray) -> np.ndarray:
    """M(q), (n, n)."""


@member
def generalized_forces(model: Model, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Q(q, q̇), (n,) [N, N·m]."""


@member
def free_accelerations(model: Model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, λ) under the model's own forces Q."""


@step_rows.register
def _(model: Mechanism, rows, selection, q, qd, qdd, lam, f, jac, frames=None, w=None):
    if frames is not None:
        raise MbstateError("external wrenches on frames are states of a URDF model only: a planar model has no "
                           "named frames")
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
def _(model: SpatialModel, rows, selection, q, qd, qdd, lam, f, jac, frames=None, w=None):
    return loop_rows.step_rows(model, rows, selection, q, qd, qdd, lam, f, jac, frames, w)


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


@member
def actuators(model: Model) -> tuple[tuple[str, int], ...]:
    """(name, coordinate) of each actuator."""


@member
def start_configuration(model: Model) -> np.ndarray:
    """The file's configuration q (n,)."""


@member
def drawn_at(model: Model, q: np.ndarray) -> Model:
    """The model with ``q`` as its start configuration."""


@member
def point_coordinates(model: Model) -> tuple[int, ...]:
    """The indices of the point coordinates."""


@member
def constraint_count(model: Model) -> int:
    """m, the constraint rows."""


@member
def constraint_names(model: Model) -> tuple[str, ...]:
    """The names of the m constraint rows."""


@member
def constraints(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Φ(q) (m,), Φq (m, n))."""


@member
def constraint_jacobian(model: Model, q: np.ndarray) -> np.ndarray:
    """Φq (m, n)."""


@member
def velocity_term(model: Model, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """γ = −Φ̇q q̇ (m,), the right side of Φq q̈ = γ."""


@member
def multipliers(model: Model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """λ (m,) of Φqᵀλ = Q − M q̈ (least squares)."""


@member
def assemble(model: Model, q: np.ndarray, held: Sequence[int] = ()) -> np.ndarray:
    """q with Φ(q) = 0 near ``q``, the coordinates ``held`` unchanged; kinematics.AssemblyError."""


@member
def independent_rows(model: Model, q: np.ndarray) -> np.ndarray:
    """S: a maximal independent subset of the constraint rows at q (sorted)."""


@member
def independent_coordinates(model: Model, q: np.ndarray, rank: int) -> list[int]:
    """The independent coordinates suggested at q for constraints of ``rank``."""


@member
def tangent_metric(model: Model) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """T(q, N): the tangent basis N (n × f) made orthonormal in the bodies' angular velocities."""


@member
def coordinate_lengths(model: Model) -> np.ndarray:
    """(n,): 1 on angles, a mean body length [m] on lengths."""


@member
def total_mass(model: Model) -> float:
    """The moving bodies' mass [kg]."""


@member
def model_errors(model: Model, rows: Sequence[int]
                 ) -> tuple[bool, BodyMassTerms | LinkMassTerms | None, BodyLengthTerms | None]:
    """(whether gravity loads the model, the bodies' mass terms, the length terms of the rows S)."""


@member
def payload_terms(model: Model, link: str) -> spatial_payload.PayloadTerms:
    """The terms of a payload on link ``link``; MbstateError (one line) for a model or link that has none."""


@actuators.register
def _(model: Mechanism):
    return tuple((a.name, a.coordinate) for a in model.actuators)


@start_configuration.register
def _(model: Mechanism):
    return model.q0


@drawn_at.register
def _(model: Mechanism, q):
    return dataclasses.replace(model, q0=np.array(q, dtype=float))


@point_coordinates.register
def _(model: Mechanism):
    return tuple(model.point_coordinates)


@constraint_count.register
def _(model: Mechanism):
    return model.m


@constraint_names.register
def _(model: Mechanism):
    return model.constraint_names


@constraints.register
def _(model: Mechanism, q):
    phi, phi_q, _ = planar_constraints.constraint_derivatives(model, q, False)
    return phi, phi_q


@constraint_jacobian.register
def _(model: Mechanism, q):
    return planar_constraints.constraint_jacobian(model, q)


@velocity_term.register
def _(model: Mechanism, q, qd):
    return -planar_constraints.constraint_derivatives(model, q, True)[2] @ qd @ qd


@multipliers.register
def _(model: Mechanism, q, qd, qdd):
    return forward.multipliers(model, q, qd, qdd)


@assemble.register
def _(model: Mechanism, q, held=()):
    return kinematics.solve_position_problem(model, q, held)


@independent_rows.register
def _(model: Mechanism, q):
    return kinematics.independent_constraint_rows(model, q)


@independent_coordinates.register
def _(model: Mechanism, q, rank):
    return kinematics.suggested_independent(model, q, rank)


@tangent_metric.register
def _(model: Mechanism):
    return partial(kinematics.motion_tangent, model, kinematics.BodyAxes.of(model))


@coordinate_lengths.register
def _(model: Mechanism):
    lengths = np.ones(model.n)
    lengths[model.point_coordinates] = kinematics.BodyAxes.of(model).length
    return lengths


@total_mass.register
def _(model: Mechanism):
    return sum(body.mass for body in model.bodies)


@model_errors.register
def _(model: Mechanism, rows):
    return bool(np.any(model.gravity)), body_mass_terms(model), body_length_terms(model, rows)


@payload_terms.register
def _(model: Mechanism, link):
    raise MbstateError(f"estimator.payload: a payload state needs a spatial model (a URDF arm); {model.source} is "
                       "planar (its bodies' mass errors are mass_sigma's)")


@actuators.register
def _(model: SpatialModel):
    return tuple(zip(model.actuator_names, (int(i) for i in model.actuated)))


@start_configuration.register
def _(model: SpatialModel):
    return model.initial


@drawn_at.register
def _(model: SpatialModel, q):
    return dataclasses.replace(model, initial=np.array(q, dtype=float))


@point_coordinates.register
def _(model: SpatialModel):
    return ()


@constraint_count.register
def _(model: SpatialModel):
    return loops.row_count(model)


@constraint_names.register
def _(model: SpatialModel):
    return loops.row_names(model)


@constraints.register
def _(model: SpatialModel, q):
    terms = loops.loop_terms(model, q, np.zeros(model.dof))
    return terms.phi, terms.jac


@constraint_jacobian.register
def _(model: SpatialModel, q):
    return loops.loop_terms(model, q, np.zeros(model.dof)).jac


@velocity_term.register
def _(model: SpatialModel, q, qd):
    return -loops.loop_terms(model, q, qd).rate @ qd


@multipliers.register
def _(model: SpatialModel, q, qd, qdd):
    jac = loops.loop_terms(model, q, qd).jac
    if not jac.size:
        return np.zeros(0)
    return np.linalg.lstsq(jac.T, -spatial.inverse_dynamics(model, q, qd, qdd), rcond=None)[0]


@assemble.register
def _(model: SpatialModel, q, held=()):
    return spatial_assembly.assemble(model, q, held) if model.loops else np.array(q, dtype=float)


@independent_rows.register
def _(model: SpatialModel, q):
    return spatial_assembly.independent_rows(loops.loop_terms(model, q, np.zeros(model.dof)).jac)


@independent_coordinates.register
def _(model: SpatialModel, q, rank):
    return spatial_assembly.independent_joints(model, q)


@tangent_metric.register
def _(model: SpatialModel):
    return partial(motion_tangent, model)


@coordinate_lengths.register
def _(model: SpatialModel):
    return np.where(model.kind == PRISMATIC, mean_length(model), 1.0)


@total_mass.register
def _(model: SpatialModel):
    return model.total_mass


@model_errors.register
def _(model: SpatialModel, rows):
    return False, link_mass_terms(model), None


@payload_terms.register
def _(model: SpatialModel, link):
    return spatial_payload.payload_terms(model, link)
