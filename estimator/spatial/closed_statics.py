"""Static equilibrium of a spatial closed chain under gravity, some joints held, and its stability.

The planar constrained statics (estimator.dynamics.statics) in the tree's joint coordinates: at
rest, friction off, the free joints balance gravity and the loops' reactions,

    r(q_free, λ) = [Q_free − (Φq_Sᵀ λ)_free;  Φ_S(q)] = 0,   Q = −g(q) = −RNEA(q, 0, 0),
    ∂r/∂(q_free, λ) = [[−K_free,free, −(Φq_S)_freeᵀ], [(Φq_S)_free, 0]],   K = ∂g/∂q + Σ_r λ_r ∂²Φ_r/∂q²,

S the independent loop rows at the start (estimator.spatial.assembly.independent_rows), ∂g/∂q from
the analytic RNEA derivatives and the weighted Hessian from estimator.spatial.loop_rows; damped
Newton steps that turn no joint by more than estimator.kinematics.MAX_TURN (the shared
estimator.dynamics.equilibrium step), from the sidecar's ``initial`` assembled with the held joints
at their values. Holding forces: [Φq_Sᵀ | −E_held] [λ; Q_held] = Q (the inverse dynamics' least
squares). Stability: the eigenvalues of Nᵀ sym(K_free,free) N, N an orthonormal basis of the free
motions the loops allow (the null space of (Φq_S)_free).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.dynamics.equilibrium import Equilibrium, EquilibriumError, damped_newton_step, verdict
from estimator.dynamics.inverse import multipliers_and_drive_forces
from estimator.kinematics import MAX_TURN, RANK_TOLERANCE
from estimator.spatial import assembly
from estimator.spatial.dynamics import workspace
from estimator.spatial.loop_rows import weighted_hessian
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import SpatialModel, joint_values
from estimator.spatial.statics import gravity_forces, gravity_stiffness


def solve_statics(model: SpatialModel, hold: Mapping[str, float] | None = None, tol: float = 1e-10,
                  max_iter: int = 50) -> Equilibrium:
    """Static equilibrium of a closed chain, the joints named in ``hold`` fixed at the given values
    [rad or m] (module docstring); MbstateError for an unknown joint or a chain that cannot be
    assembled, EquilibriumError when Newton-Raphson does not converge."""
    hold = dict(hold or {})
    values = joint_values(model, hold, "--hold")  # an unknown joint: one error line
    held = [model.joint_names.index(name) for name in hold]
    q = np.where(np.isin(np.arange(model.dof), held), values, model.initial)
    q = assembly.assemble(model, q, held)
    free = np.ones(model.dof, dtype=bool)
    free[held] = False
    nf, zero, work = int(free.sum()), np.zeros(model.dof), workspace(model)
    rows = assembly.independent_rows(loop_terms(model, q, zero).jac)
    lam = multipliers_and_drive_forces(loop_terms(model, q, zero).jac[rows], -gravity_forces(model, q, work), held)[0]
    scale = max(1.0, float(np.max(np.abs(gravity_forces(model, q, work)), initial=0.0)))

    def residual(q: np.ndarray, lam: np.ndarray) -> np.ndarray:
        terms = loop_terms(model, q, zero)
        return np.concatenate(((-gravity_forces(model, q, work) - terms.jac[rows].T @ lam)[free], terms.phi[rows]))

    def stiffness(q: np.ndarray, lam: np.ndarray) -> np.ndarray:
        return gravity_stiffness(model, q, work) + weighted_hessian(model, rows, q, lam)

    def take(step: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], float]:
        turn = float(np.max(np.abs(step[:nf]), initial=0.0))
        fraction = 1.0 if turn <= MAX_TURN else MAX_TURN / turn
        moved = q.copy()
        moved[free] += fraction * step[:nf]
        return (moved, lam + fraction * step[nf:]), fraction

    r, iterations = residual(q, lam), 0
    while not (np.max(np.abs(r[:nf]), initial=0.0) <= tol * scale and np.max(np.abs(r[nf:]), initial=0.0) <= tol):
        if iterations == max_iter or not np.all(np.isfinite(r)):
            raise EquilibriumError(f"static equilibrium not found: residual {np.max(np.abs(r)):.3g} "
                                   f"after {iterations} Newton iterations")
        jac = loop_terms(model, q, zero).jac[rows][:, free]
        matrix = np.block([[-stiffness(q, lam)[np.ix_(free, free)], -jac.T], [jac, np.zeros((len(rows), len(rows)))]])
        q, lam = damped_newton_step(matrix, r, nf, take)
        r, iterations = residual(q, lam), iterations + 1
    jac = loop_terms(model, q, zero).jac[rows]
    lam, held_force, _ = multipliers_and_drive_forces(jac, -gravity_forces(model, q, work), held)
    _, singular, vt = np.linalg.svd(jac[:, free])
    basis = vt[int(np.sum(singular > RANK_TOLERANCE * max(singular.max(initial=0.0), 1.0))):].T
    k = stiffness(q, lam)
    eigenvalues = np.linalg.eigvalsh(basis.T @ (0.5 * (k + k.T))[np.ix_(free, free)] @ basis)
    stable, words = verdict(eigenvalues, max(1.0, float(np.max(np.abs(k)))))
    return Equilibrium(q=q, lam=lam, held_forces={model.joint_names[c]: float(f) for c, f in zip(held, held_force)},
                       eigenvalues=eigenvalues, stable=stable, verdict=words, iterations=iterations)
