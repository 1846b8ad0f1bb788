"""Near-singular poses along a trajectory: where the constraint Jacobian comes close to losing rank.

The matrix checked is Φq restricted to the coordinates the actuators do not drive (all of them in
a mechanism without actuators), each row scaled to unit norm so that the measure does not depend
on the rows' units and lengths: A = diag(1/|Φq,i|) Φq[:, U]. Its rank r is that of the first pose;
the measure is σ_r(A) / σ_1(A), the r-th singular value relative to the largest (redundant rows
only add zero singular values beyond r). Without actuators a small σ_r means Φq itself is close to losing rank
(a bifurcation of the configuration space). With actuators it also means the actuated coordinates
no longer fix the others to first order, the mechanism can move with its inputs locked: the five-bar
with its couplers aligned (García de Jalón and Bayo, ch. 2). Near such a pose the motion is
ill-conditioned, the R matrix of the actuated coordinates blows up, and the integration methods
can part ways.

A pose is near-singular when σ_r / σ_1 < NEAR_SINGULAR. All the poses of a trajectory are checked
at once by one batched SVD of the small A matrices (singular values only), after the integration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_jacobian
from estimator.kinematics import RANK_TOLERANCE
from estimator.model import Mechanism

NEAR_SINGULAR = 1e-3  # σ_r / σ_1 of the row-scaled Φq[:, U] under which a pose counts as near-singular


@dataclass(frozen=True)
class NearSingularity:
    """The near-singular stretch of a trajectory: the pose closest to singular (time [s] and its
    σ_r / σ_1), the first time under the threshold and the number of separate passes under it."""

    t_worst: float
    ratio: float
    t_first: float
    passes: int

    def message(self) -> str:
        """One line for the user."""
        more = f"; first under it at t = {self.t_first:.4g} s, {self.passes} passes in all" if self.passes > 1 else ""
        return (f"near-singular pose at t = {self.t_worst:.4g} s: the constraint Jacobian over the coordinates "
                f"not actuated is close to losing rank (σ_min/σ_max = {self.ratio:.2g} < {NEAR_SINGULAR:g}"
                f"{more}); results near it are ill-conditioned and the methods may disagree")


def unactuated_columns(mech: Mechanism) -> np.ndarray:
    """Indices of the coordinates no actuator drives."""
    actuated = {actuator.coordinate for actuator in mech.actuators}
    return np.array([k for k in range(mech.n) if k not in actuated], dtype=int)


def singularity_ratios(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """σ_r / σ_1 of the row-scaled Φq[:, U] at each pose of q (N, n), r its rank at the first pose."""
    columns = unactuated_columns(mech)
    if mech.m == 0 or len(columns) == 0:
        return np.ones(len(q))
    blocks = np.array([constraint_jacobian(mech, pose)[:, columns] for pose in q])
    blocks /= np.maximum(np.linalg.norm(blocks, axis=2, keepdims=True), np.finfo(float).tiny)
    singular = np.linalg.svd(blocks, compute_uv=False)
    rank = max(1, int(np.sum(singular[0] > RANK_TOLERANCE * singular[0, 0])))
    return singular[:, rank - 1] / np.maximum(singular[:, 0], np.finfo(float).tiny)


def near_singularity(mech: Mechanism, t: np.ndarray, q: np.ndarray,
                     threshold: float = NEAR_SINGULAR) -> NearSingularity | None:
    """The near-singular stretch of the trajectory (t, q), or None if it has no such pose."""
    ratios = singularity_ratios(mech, q)
    under = ratios < threshold
    if not under.any():
        return None
    worst = int(np.argmin(ratios))
    passes = int(under[0]) + int(np.count_nonzero(under[1:] & ~under[:-1]))
    return NearSingularity(t_worst=float(t[worst]), ratio=float(ratios[worst]), t_first=float(t[np.argmax(under)]),
                           passes=passes)
