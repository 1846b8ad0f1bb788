"""What the planar (estimator.dynamics.statics) and the spatial (estimator.spatial.statics) static
equilibria share: the result, the stability verdict and the damped Newton step.

Both solve r(x) = 0 over the free unknowns x (the free coordinates, then any multipliers), the first
n_free rows of r being the generalized forces Q on the free coordinates at rest (so that
∂r/∂q_free = −K, K the tangent stiffness, the Hessian of the potential for conservative forces).

Damped step (Levenberg-Marquardt): the Newton step of r, with −(K_free,free + μ I) in place of
−K_free,free, μ raised tenfold from MIN_DAMPING times the largest entry of the force rows of ∂r/∂x
until the caller accepts the whole step (a planar segment, or a revolute joint, turns by at most
estimator.kinematics.MAX_TURN): a large μ bends the step towards the steepest descent of the
potential. Past MAX_DAMPING times that scale the caller's shortened step is taken. Near an
equilibrium μ = 0: plain Newton, quadratic convergence to any equilibrium (stable or not).

Verdict: from the eigenvalues of the reduced stiffness (the symmetric part of K over the free
motions), against 1e-9 times the stiffness scale: all positive, a strict minimum (stable); one
negative, a saddle or maximum; else neutral (singular reduced stiffness, e.g. a joint whose axis
is parallel to gravity); nothing free, held.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from estimator.errors import MbstateError
from estimator.kinematics import RANK_TOLERANCE

STABLE = "stable minimum"
UNSTABLE = "not a minimum (saddle/maximum)"
NEUTRAL = "neutral (singular reduced stiffness)"
HELD = "no free motion left (all held)"
MIN_DAMPING, MAX_DAMPING = 1e-3, 1e12  # first and largest μ of a damped step, relative to the stiffness scale
SINGULAR = 1e-9  # an eigenvalue within SINGULAR times the stiffness scale of zero counts as zero

State = TypeVar("State")


class EquilibriumError(MbstateError):
    """The equilibrium iteration did not converge."""


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium: coordinates q, multipliers λ (None for a tree: no constraints), the
    generalized forces holding the held coordinates [N or N·m], the eigenvalues of the reduced
    stiffness (ascending), the verdict, and the coordinates along which the reduced stiffness is
    singular when they can be named (a tree's free joints; empty otherwise)."""

    q: np.ndarray
    lam: np.ndarray | None
    held_forces: dict[str, float]
    eigenvalues: np.ndarray
    stable: bool
    verdict: str
    iterations: int
    singular: tuple[str, ...] = ()


def verdict(eigenvalues: np.ndarray, scale: float) -> tuple[bool, str]:
    """(stable, verdict) from the reduced stiffness's eigenvalues and the stiffness scale [N/m or
    N·m/rad] (module docstring)."""
    tol = SINGULAR * scale
    if not len(eigenvalues):
        return True, HELD
    if np.all(eigenvalues > tol):
        return True, STABLE
    if np.any(eigenvalues < -tol):
        return False, UNSTABLE
    return False, NEUTRAL


def damped_newton_step(jacobian: np.ndarray, residual: np.ndarray, nf: int,
                       take: Callable[[np.ndarray], tuple[State, float]]) -> State:
    """One damped Newton step on r (module docstring): ``jacobian`` ∂r/∂x, its first ``nf`` rows
    and columns the free coordinates'; ``take(step)`` applies a step of x and returns the new state
    and the fraction of the step it took (1: all of it)."""
    scale = max(1.0, float(np.max(np.abs(jacobian[:nf]), initial=0.0)))
    damping = 0.0
    while True:
        matrix = jacobian.copy()
        matrix[:nf, :nf] -= damping * np.eye(nf)
        state, fraction = take(np.linalg.lstsq(matrix, -residual, rcond=RANK_TOLERANCE)[0])
        if fraction == 1.0 or damping >= MAX_DAMPING * scale:
            return state
        damping = max(10.0 * damping, MIN_DAMPING * scale)
