"""Static equilibrium under gravity, springs and constant loads, with a stability check.

Equilibrium (García de Jalón and Bayo, ch. 6, with q̈ = q̇ = 0): over the free coordinates and the
multipliers, Newton-Raphson on

    r(q, λ) = [ (Q(q) − Φqᵀ λ)_free ; Φ(q) ] = 0,
    ∂r/∂(q_free, λ) = [ [−K_free,free, −Φq,freeᵀ], [Φq,free, 0] ],   K = −∂Q/∂q + Σ_i λ_i Φqq_i,

with every step solved by SVD least squares (redundant constraints allowed). Held coordinates keep
their values (reached from the guess on its branch, estimator.kinematics); the generalized forces
Q_h that hold them follow, with λ, from [Φqᵀ | −E_h] [λ; Q_h] = Q (the inverse-dynamics system at
rest).

Staying on the guess's branch: a Newton step that would turn a segment by more than
estimator.kinematics.MAX_TURN leaves the region where the linearization holds (where the reduced
stiffness is small, e.g. a rod drawn horizontal under gravity, the step is huge or undefined) and
can land on another solution of the angle equations. Such a step is damped (Levenberg-Marquardt,
estimator.dynamics.equilibrium, shared with the spatial statics): K_free,free + μ I, μ raised until
the step turns no segment by more than MAX_TURN, which bends it towards the steepest descent of the
potential along the constraints; the free angle coordinates then follow their geometry
continuously (estimator.kinematics.branch_step). Near an equilibrium the full Newton step is taken, so any
equilibrium there (stable or not) is found with quadratic convergence.

Stability: K is the Hessian of the Lagrangian V + λᵀΦ (Q = −∂V/∂q for conservative forces; the
symmetric part is taken, body torques being non-conservative). The equilibrium is a strict minimum
of V on the constraint manifold iff Nᵀ K N is positive definite, N an orthonormal basis of the null
space of Φq restricted to the free coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.dynamics.equilibrium import (HELD, NEUTRAL, STABLE, UNSTABLE, Equilibrium, EquilibriumError,
                                            damped_newton_step, verdict)
from estimator.dynamics.inverse import drive_indices, multipliers_and_drive_forces
from estimator.errors import MbstateError
from estimator.forces import force_jacobians, generalized_forces
from estimator.kinematics import RANK_TOLERANCE, AssemblyError, branch_step, solve_position_problem
from estimator.model import Mechanism

__all__ = ["HELD", "NEUTRAL", "STABLE", "UNSTABLE", "Equilibrium", "EquilibriumError", "equilibrium_jacobian",
           "equilibrium_residual", "reduced_stiffness_eigenvalues", "solve_statics", "tangent_stiffness"]


def tangent_stiffness(mech: Mechanism, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """K = −∂Q/∂q + Σ_i λ_i Φqq_i at rest, shape (n, n)."""
    dq, _ = force_jacobians(mech, q, np.zeros(mech.n))
    return -dq + np.tensordot(lam, constraint_derivatives(mech, q, True)[2], axes=1)


def equilibrium_residual(mech: Mechanism, q: np.ndarray, lam: np.ndarray, free: np.ndarray) -> np.ndarray:
    """r = [(Q − Φqᵀ λ)_free; Φ] (see the module docstring)."""
    phi, jac, _ = constraint_derivatives(mech, q)
    force = generalized_forces(mech, q, np.zeros(mech.n)) - jac.T @ lam
    return np.concatenate((force[free], phi))


def equilibrium_jacobian(mech: Mechanism, q: np.ndarray, lam: np.ndarray, free: np.ndarray) -> np.ndarray:
    """∂r/∂(q_free, λ), shape (n_free + m, n_free + m)."""
    jac = constraint_derivatives(mech, q)[1][:, free]
    top = np.hstack((-tangent_stiffness(mech, q, lam)[np.ix_(free, free)], -jac.T))
    bottom = np.hstack((jac, np.zeros((mech.m, mech.m))))
    return np.vstack((top, bottom))


def reduced_stiffness_eigenvalues(mech: Mechanism, q: np.ndarray, lam: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Eigenvalues (ascending) of Nᵀ sym(K) N over the free motions allowed by the constraints."""
    jac = constraint_derivatives(mech, q)[1][:, free]
    _, singular, vt = np.linalg.svd(jac) if mech.m else (None, np.zeros(0), np.eye(int(free.sum())))
    rank = int(np.sum(singular > RANK_TOLERANCE * max(singular.max(initial=0.0), 1.0)))
    basis = vt[rank:].T
    stiffness = tangent_stiffness(mech, q, lam)[np.ix_(free, free)]
    return np.linalg.eigvalsh(basis.T @ (0.5 * (stiffness + stiffness.T)) @ basis)


def _damped_newton_step(mech: Mechanism, q: np.ndarray, lam: np.ndarray, free: np.ndarray,
                        residual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, λ) after one Newton step on r, damped until it turns no segment by more than MAX_TURN
    (estimator.dynamics.equilibrium.damped_newton_step); past the largest damping, the step is shortened instead."""
    nf = int(free.sum())

    def take(step: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], float]:
        q_next, fraction = branch_step(mech, q, free, step[:nf])
        return (q_next, lam + fraction * step[nf:]), fraction

    return damped_newton_step(equilibrium_jacobian(mech, q, lam, free), residual, nf, take)


def solve_statics(mech: Mechanism, hold: Mapping[str, float] | None = None, q_guess: np.ndarray | None = None,
                  tol: float = 1e-10, max_iter: int = 50) -> Equilibrium:
    """Static equilibrium near ``q_guess`` (default ``mech.q0``) with the coordinates named in
    ``hold`` fixed at the given values [m or rad]; raises MbstateError (EquilibriumError if the
    Newton iteration does not converge)."""
    hold = dict(hold or {})
    held = drive_indices(mech, list(hold)) if hold else []
    free = np.ones(mech.n, dtype=bool)
    free[held] = False
    q = np.array(mech.q0 if q_guess is None else q_guess, dtype=float)
    q[held] = list(hold.values())
    try:
        q = solve_position_problem(mech, q, held)
    except AssemblyError as exc:
        raise MbstateError(str(exc)) from None
    zero = np.zeros(mech.n)
    force = generalized_forces(mech, q, zero)
    lam = multipliers_and_drive_forces(constraint_derivatives(mech, q)[1], force, held)[0]
    scale = max(1.0, float(np.max(np.abs(force), initial=0.0)))
    nf = int(free.sum())

    def converged(residual: np.ndarray) -> bool:
        return bool(np.max(np.abs(residual[:nf]), initial=0.0) <= tol * scale
                    and np.max(np.abs(residual[nf:]), initial=0.0) <= tol)

    residual, iterations = equilibrium_residual(mech, q, lam, free), 0
    while not converged(residual):
        if iterations == max_iter or not np.all(np.isfinite(residual)):
            raise EquilibriumError(f"static equilibrium not found: residual {np.max(np.abs(residual)):.3g} "
                                   f"after {iterations} Newton iterations")
        q, lam = _damped_newton_step(mech, q, lam, free, residual)
        residual, iterations = equilibrium_residual(mech, q, lam, free), iterations + 1
    lam, held_force, _ = multipliers_and_drive_forces(constraint_derivatives(mech, q)[1], generalized_forces(mech, q, zero),
                                                      held)
    eigenvalues = reduced_stiffness_eigenvalues(mech, q, lam, free)
    stable, verdict_words = verdict(eigenvalues, max(1.0, float(np.max(np.abs(tangent_stiffness(mech, q, lam))))))
    held_forces = {mech.coordinate_names[c]: float(f) for c, f in zip(held, held_force)}
    return Equilibrium(q=q, lam=lam, held_forces=held_forces, eigenvalues=eigenvalues, stable=stable,
                       verdict=verdict_words, iterations=iterations)
