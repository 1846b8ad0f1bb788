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
can land on another solution of the angle equations. Such a step is damped (Levenberg-Marquardt):
K_free,free + μ I, μ raised tenfold from MIN_DAMPING times the largest entry of the force rows of
∂r/∂(q_free, λ) until the step turns no segment by more than MAX_TURN, which bends it towards the
steepest descent of the potential along the constraints; the free angle coordinates then follow their geometry continuously
(estimator.kinematics.branch_step). Near an equilibrium the full Newton step is taken, so any
equilibrium there (stable or not) is found with quadratic convergence.

Stability: K is the Hessian of the Lagrangian V + λᵀΦ (Q = −∂V/∂q for conservative forces; the
symmetric part is taken, body torques being non-conservative). The equilibrium is a strict minimum
of V on the constraint manifold iff Nᵀ K N is positive definite, N an orthonormal basis of the null
space of Φq restricted to the free coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.dynamics.inverse import drive_indices, multipliers_and_drive_forces
from estimator.errors import MbstateError
from estimator.forces import force_jacobians, generalized_forces
from estimator.kinematics import RANK_TOLERANCE, AssemblyError, branch_step, solve_position_problem
from estimator.model import Mechanism

STABLE = "stable minimum"
UNSTABLE = "not a minimum (saddle/maximum)"
NEUTRAL = "neutral (singular reduced stiffness)"
HELD = "no free motion left (all held)"
MIN_DAMPING, MAX_DAMPING = 1e-3, 1e12  # first and largest μ of a damped step, relative to the stiffness scale


class EquilibriumError(MbstateError):
    """The equilibrium iteration did not converge."""


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium: coordinates q, multipliers λ, the generalized forces holding the held
    coordinates [N or N·m], the eigenvalues of the reduced stiffness (ascending) and the verdict."""

    q: np.ndarray
    lam: np.ndarray
    held_forces: dict[str, float]
    eigenvalues: np.ndarray
    stable: bool
    verdict: str
    iterations: int


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


def _verdict(eigenvalues: np.ndarray, scale: float) -> tuple[bool, str]:
    tol = 1e-9 * scale
    if not len(eigenvalues):
        return True, HELD
    if np.all(eigenvalues > tol):
        return True, STABLE
    if np.any(eigenvalues < -tol):
        return False, UNSTABLE
    return False, NEUTRAL


def _damped_newton_step(mech: Mechanism, q: np.ndarray, lam: np.ndarray, free: np.ndarray,
                        residual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, λ) after one Newton step on r, damped until it turns no segment by more than MAX_TURN
    (see the module docstring); past the largest damping, the step is shortened instead."""
    jacobian = equilibrium_jacobian(mech, q, lam, free)
    nf = int(free.sum())
    scale = max(1.0, float(np.max(np.abs(jacobian[:nf]), initial=0.0)))
    damping = 0.0
    while True:
        matrix = jacobian.copy()
        matrix[:nf, :nf] -= damping * np.eye(nf)
        step = np.linalg.lstsq(matrix, -residual, rcond=RANK_TOLERANCE)[0]
        q_next, fraction = branch_step(mech, q, free, step[:nf])
        if fraction == 1.0 or damping >= MAX_DAMPING * scale:
            return q_next, lam + fraction * step[nf:]
        damping = max(10.0 * damping, MIN_DAMPING * scale)


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
    stable, verdict = _verdict(eigenvalues, max(1.0, float(np.max(np.abs(tangent_stiffness(mech, q, lam))))))
    held_forces = {mech.coordinate_names[c]: float(f) for c, f in zip(held, held_force)}
    return Equilibrium(q=q, lam=lam, held_forces=held_forces, eigenvalues=eigenvalues, stable=stable, verdict=verdict,
                       iterations=iterations)
