"""Static equilibrium of a spatial open chain under gravity, some joints held, and its stability.

At rest (q̇ = q̈ = 0, friction off: damping vanishes at rest and Coulomb friction is left out, so
that the equilibrium is that of the potential alone) the joint forces that keep the chain still
are the gravity forces g(q) = RNEA(q, 0, 0) = ∂V/∂q (Müller 2018 eqs. 66–67 with V̇₀ = (0; −g)).
The model carries no other constant load. Over the free joints, Newton-Raphson on

    r(q) = Q_free = −g_free(q) = 0,    ∂r/∂q_free = −K_free,free,    K = ∂g/∂q,

K from the analytic RNEA derivatives (estimator.spatial.dynamics.rnea_derivatives), from q = 0
with the held joints at their values. A step that would turn a revolute joint by more than
estimator.kinematics.MAX_TURN is damped (Levenberg-Marquardt, estimator.dynamics.equilibrium, as
the planar statics): far from an equilibrium the step follows the steepest descent of V, near one
it is plain Newton, so any equilibrium there, stable or not, is found with quadratic convergence.
The holding forces are g on the held joints (the joint forces a holder applies).

Stability: K is the Hessian of V (symmetric; its symmetric part is taken against rounding). The
equilibrium is a strict minimum iff K_free,free is positive definite (a tree has no constraints:
the reduced stiffness is K_free,free itself). A free joint that lifts nothing (a revolute axis
parallel to gravity, a prismatic axis across it) leaves K singular: the verdict is neutral, and
the joints that move along the singular directions are named (``Equilibrium.singular``). Joint
limits are stored in the model but not enforced: an equilibrium may lie outside them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.dynamics.equilibrium import SINGULAR, Equilibrium, EquilibriumError, damped_newton_step, verdict
from estimator.kinematics import MAX_TURN
from estimator.spatial.dynamics import Workspace, inverse_dynamics, rnea_derivatives, workspace
from estimator.spatial.model import REVOLUTE, SpatialModel, joint_values

NAMED = 0.1  # a joint is named along a singular direction when its component there is at least this


def gravity_forces(model: SpatialModel, q: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """g(q) = RNEA(q, 0, 0) without friction: the joint forces [N·m or N] that hold the chain at rest."""
    zero = np.zeros(model.dof)
    return inverse_dynamics(model, q, zero, zero, friction=False, work=work)


def gravity_stiffness(model: SpatialModel, q: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """K = ∂g/∂q (n, n) [N·m/rad or N/m], the Hessian of the potential."""
    zero = np.zeros(model.dof)
    return rnea_derivatives(model, q, zero, zero, friction=False, work=work)[0]


def solve_statics(model: SpatialModel, hold: Mapping[str, float] | None = None, tol: float = 1e-10,
                  max_iter: int = 50) -> Equilibrium:
    """Static equilibrium from q = 0 with the joints named in ``hold`` fixed at the given values
    [rad or m] (module docstring); MbstateError for an unknown joint, EquilibriumError when the
    Newton iteration does not converge (no equilibrium: a free prismatic joint along gravity)."""
    hold = dict(hold or {})
    q = joint_values(model, hold, "--hold")
    free = np.ones(model.dof, dtype=bool)
    free[[model.joint_names.index(name) for name in hold]] = False
    revolute = model.kind == REVOLUTE
    work = workspace(model)
    nf = int(free.sum())
    scale = max(1.0, float(np.max(np.abs(gravity_forces(model, q, work)), initial=0.0)))

    def take(step: np.ndarray) -> tuple[np.ndarray, float]:
        full = np.zeros(model.dof)
        full[free] = step
        turn = float(np.max(np.abs(full[revolute]), initial=0.0))
        fraction = 1.0 if turn <= MAX_TURN else MAX_TURN / turn
        return q + fraction * full, fraction

    residual, iterations = -gravity_forces(model, q, work)[free], 0
    while not np.max(np.abs(residual), initial=0.0) <= tol * scale:
        if iterations == max_iter or not np.all(np.isfinite(residual)):
            raise EquilibriumError(f"static equilibrium not found: residual {np.max(np.abs(residual)):.3g} "
                                   f"after {iterations} Newton iterations")
        q = damped_newton_step(-gravity_stiffness(model, q, work)[np.ix_(free, free)], residual, nf, take)
        residual, iterations = -gravity_forces(model, q, work)[free], iterations + 1
    stiffness = gravity_stiffness(model, q, work)
    reduced = stiffness[np.ix_(free, free)]
    eigenvalues, vectors = np.linalg.eigh(0.5 * (reduced + reduced.T))
    stiffness_scale = max(1.0, float(np.max(np.abs(stiffness))))
    stable, words = verdict(eigenvalues, stiffness_scale)
    names = [name for name, f in zip(model.joint_names, free) if f]
    soft = np.abs(eigenvalues) <= SINGULAR * stiffness_scale
    singular = tuple(name for k, name in enumerate(names) if np.any(np.abs(vectors[k, soft]) >= NAMED))
    g = gravity_forces(model, q, work)
    held_forces = {name: float(g[model.joint_names.index(name)]) for name in hold}
    return Equilibrium(q=q, lam=None, held_forces=held_forces, eigenvalues=eigenvalues, stable=stable,
                       verdict=words, iterations=iterations, singular=singular)


def outside_limits(model: SpatialModel, q: np.ndarray) -> list[str]:
    """The joints whose coordinate lies outside their URDF limits (not enforced by the solver)."""
    return [name for name, value, low, high in zip(model.joint_names, q, model.lower, model.upper)
            if not low <= value <= high]
