"""One time step's rows of a spatial closed chain, with their Jacobians: what the estimator's step
factor asks of a model (estimator.model_protocol), in the planar rows' order and signs
(estimator.dynamics.step_rows):

    c = [Φ_S;  Φq_S q̇;  Φq_S q̈ + Φ̇q_S q̇],
    ∂c/∂q = [Φq_S;  Φ̇q_S;  Φ̈q_S],  ∂c/∂q̇ = [0;  Φq_S;  2 Φ̇q_S],  ∂c/∂q̈ = [0;  0;  Φq_S];

    d = RNEA(q, q̇, q̈; W(w)) + Φq_Sᵀ λ − E F   (= M q̈ + Φq_Sᵀ λ − Q − Σ_f J_fᵀ w_f − E F),
    ∂d/∂q = ∂RNEA/∂q + Σ_r λ_r ∂²Φ_r/∂q²,  ∂d/∂q̇ = ∂RNEA/∂q̇,  ∂d/∂q̈ = M,  ∂d/∂λ = Φq_Sᵀ,  ∂d/∂F = −E,
    ∂d/∂w_f = −J_fᵀ;

e = [Φ_S; Φq_S q̇; d; Φq_S q̈ + Φ̇q_S q̇] over [q, q̇, q̈, λ, F, w]. w: the external wrenches on the named
frames of ``frames`` (estimator.spatial.frame_wrenches; none without), the RNEA's applied body wrenches
W(w), whose turn with q the analytic RNEA derivatives carry. S: the loop rows ``rows`` (a maximal
independent subset, estimator.spatial.assembly.independent_rows); Φ̇q, Φ̈q and the weighted Hessian
Σ λ_r ∂²Φ_r/∂q² (closed form, λ_r = 0 off S) from estimator.spatial.loops' compiled kernels.
"""

from __future__ import annotations

import numpy as np

from estimator.spatial import loops
from estimator.spatial.dynamics import inverse_dynamics, rnea_derivatives
from estimator.spatial.frame_wrenches import FrameWrenches, workspace_poses
from estimator.spatial.loops import LoopTerms, loop_terms, row_count
from estimator.spatial.model import SpatialModel


def _terms(model: SpatialModel, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> LoopTerms:
    """The loops' terms at (q, q̇, q̈); ValueError when ``rows`` are not rows of the model's loops."""
    count = row_count(model)
    if len(rows) and not (0 <= min(rows) and max(rows) < count):
        raise ValueError(f"{model.name} has {count} loop rows, asked for rows {[int(r) for r in rows]}")
    return loop_terms(model, q, qd, qdd)


def _constraint_block(terms: LoopTerms, rows: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                      jac: bool) -> tuple[np.ndarray, np.ndarray]:
    n, size = len(qd), len(rows)
    phi, jac_s, rate, accel = terms.phi[rows], terms.jac[rows], terms.rate[rows], terms.accel[rows]
    error = np.concatenate((phi, jac_s @ qd, jac_s @ qdd + rate @ qd))
    if not jac:
        return error, np.zeros((0, 3 * n))
    out = np.zeros((3 * size, 3 * n))
    out[:size, :n] = jac_s
    out[size:2 * size, :n], out[size:2 * size, n:2 * n] = rate, jac_s
    out[2 * size:, :n], out[2 * size:, n:2 * n], out[2 * size:, 2 * n:] = accel, 2.0 * rate, jac_s
    return error, out


def constraint_rows(model: SpatialModel, rows: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    jac: bool) -> tuple[np.ndarray, np.ndarray]:
    """(c, ∂c/∂[q, q̇, q̈]) over the loop rows ``rows`` (3|S| x 3n; 0 rows without ``jac``)."""
    return _constraint_block(_terms(model, rows, q, qd, qdd), rows, qd, qdd, jac)


def weighted_hessian(model: SpatialModel, rows: np.ndarray, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Σ_r λ_r ∂²Φ_r/∂q² (n x n) over the loop rows ``rows``."""
    full = np.zeros(row_count(model))
    full[rows] = lam
    return loops.weighted_hessian(model, q, full)


def step_rows(model: SpatialModel, rows: np.ndarray, selection: np.ndarray, q: np.ndarray, qd: np.ndarray,
              qdd: np.ndarray, lam: np.ndarray, f: np.ndarray, jac: bool, frames: FrameWrenches | None = None,
              w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(e, ∂e/∂[q, q̇, q̈, λ, F, w]) of one step (module docstring; 0 Jacobian rows without ``jac``)."""
    n, size, forces = model.dof, len(rows), selection.shape[1]
    width = 3 * n + size + forces + (0 if frames is None else frames.size)
    inverse, derivatives, by_wrench = _inverse_dynamics(model, q, qd, qdd, jac, frames, w)
    if not size:  # a tree, or no loop row kept: the dynamics alone, without the loops' kinematics
        d = inverse - selection @ f
        if not jac:
            return d, np.zeros((0, width))
        out = np.empty((n, width))
        out[:, :3 * n], out[:, 3 * n:3 * n + forces] = derivatives, -selection
        out[:, 3 * n + forces:] = by_wrench
        return d, out
    terms = _terms(model, rows, q, qd, qdd)
    c, dc = _constraint_block(terms, rows, qd, qdd, jac)
    jac_s = terms.jac[rows]
    d = inverse + jac_s.T @ lam - selection @ f
    error = np.concatenate((c[:2 * size], d, c[2 * size:]))
    if not jac:
        return error, np.zeros((0, width))
    out = np.zeros((3 * size + n, width))
    out[:2 * size, :3 * n] = dc[:2 * size]
    out[2 * size + n:, :3 * n] = dc[2 * size:]
    dynamics = out[2 * size:2 * size + n]
    dynamics[:, :3 * n] = derivatives
    dynamics[:, :n] += weighted_hessian(model, rows, q, lam)
    dynamics[:, 3 * n:3 * n + size] = jac_s.T
    dynamics[:, 3 * n + size:3 * n + size + forces] = -selection
    dynamics[:, 3 * n + size + forces:] = by_wrench
    return error, out


def _inverse_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, jac: bool,
                      frames: FrameWrenches | None, w: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """RNEA(q, q̇, q̈; W(w)) and, with ``jac``, its derivatives by [q, q̇, q̈] (n, 3n) and by w (n, 6k; 0
    columns without ``frames``)."""
    wrench, work = (None, None) if frames is None else (frames.body_wrenches(w), frames.work)
    inverse = inverse_dynamics(model, q, qd, qdd, wrench, work=work)
    if not jac:
        return inverse, None, None
    derivatives = np.concatenate(rnea_derivatives(model, q, qd, qdd, wrench, work=work), axis=1)
    by_wrench = np.zeros((model.dof, 0)) if frames is None else frames.joint_columns(workspace_poses(work))
    return inverse, derivatives, by_wrench
