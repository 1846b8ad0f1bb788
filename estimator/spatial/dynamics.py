"""Dynamics of a spatial model: the numba kernels behind plain functions of (model, q, q̇, …).

M(q) q̈ + h(q, q̇) = Q + Σ Jᵀ W: inverse dynamics (RNEA), the mass matrix (CRBA), forward
dynamics (ABA), the Coriolis matrix and the analytic derivatives of inverse dynamics. Each takes an
optional Workspace (``workspace(model)``) so that a loop calling it allocates nothing but its result;
applied wrenches are (n, 6) body wrenches (``body_wrenches`` builds them from named frames).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.aba import aba_kernel
from estimator.spatial.crba import crba_kernel
from estimator.spatial.derivatives import (D_WIDTH, T_JOINT, T_MOUNT, T_W, T_WIDTH, joint_wrench_kernel,
                                          rnea_derivatives_kernel)
from estimator.spatial.kinematics import ancestry
from estimator.spatial.model import SpatialModel
from estimator.spatial.ops import G_WIDTH, W_F
from estimator.spatial.rnea import rnea_kernel


@dataclass(frozen=True)
class Workspace:
    """Preallocated rows the kernels read and fill (Pinocchio's Data), made for one model: row i is
    body i's packed model (a copy of model.packed, ops) and then the recursions' terms (ops W_*,
    derivatives D_*); no_wrench: zeros (n, 6), the applied wrenches of a call without.

    The model's rows ride in the workspace so that a kernel takes one array for both and at most
    seven arguments in all: numba's dispatch costs per argument, markedly more from the eighth, and
    more for a read-only array (the model's are); docs/spatial.md, "Speed", has the figures. A
    workspace serves only the model it was made for (checked: its rows are that model's)."""
    model: SpatialModel = field(repr=False)
    rows: np.ndarray
    no_wrench: np.ndarray


def workspace(model: SpatialModel) -> Workspace:
    """A workspace for ``model``'s kernels; one per thread (the kernels write into it)."""
    rows = np.zeros((model.dof, D_WIDTH))
    rows[:, :G_WIDTH] = model.packed
    return Workspace(model, rows, np.zeros((model.dof, 6)))


_ARRAY, _FLOAT = np.ndarray, np.dtype(np.float64)


def _vector(model: SpatialModel, name: str, value: np.ndarray) -> np.ndarray:
    """``value`` as a float array of n entries (as given when it already is one)."""
    if value.__class__ is _ARRAY and value.dtype is _FLOAT and value.shape == model.shape:
        return value
    out = np.ascontiguousarray(value, dtype=float)
    if out.shape != (model.dof,):
        raise MbstateError(f"{name}: expected {model.dof} values, got shape {out.shape}")
    return out


def _workspace(model: SpatialModel, work: Workspace | None) -> Workspace:
    """``work``, or a new workspace when None; MbstateError when it was made for another model."""
    if work is None:
        return workspace(model)
    if work.model is not model:
        raise MbstateError(f"work: a workspace of another model ({work.model.name}); workspace(model) makes one "
                           f"for {model.name}")
    return work


def body_wrenches(model: SpatialModel, loads: Mapping[str, np.ndarray]) -> np.ndarray:
    """(n, 6) body wrenches from {frame name: (t; f)}, each in its frame's axes about its origin
    [N·m; N]: Wᵇ = Adᵀ_{C_{f,b}} Wᶠ (Müller eq. 120). Loads on frames of the fixed base do nothing."""
    out = np.zeros((model.dof, 6))
    for name, load in loads.items():
        try:
            frame = model.frame(name)
        except KeyError:
            raise MbstateError(f"applied wrench: no frame {name!r} in {model.name}") from None
        wrench = np.asarray(load, dtype=float)
        if wrench.shape != (6,):
            raise MbstateError(f"applied wrench on {name!r}: expected 6 values (moment, force), got shape {wrench.shape}")
        if frame.body >= 0:
            out[frame.body] += lie.adjoint(lie.inverse((frame.rot, frame.pos))).T @ wrench
    return out


def _arguments(model: SpatialModel, q: np.ndarray, qd: np.ndarray, third: np.ndarray, name: str,
               wrench: np.ndarray | None, work: Workspace | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(workspace rows, q, q̇, third, body wrenches) for a kernel: as given when they already are
    float arrays of n entries, no wrench and a workspace of ``model`` (one test, as this is much of
    a call's cost at a few joints), else checked and converted."""
    if (work is not None and work.model is model and wrench is None
            and q.__class__ is qd.__class__ is third.__class__ is _ARRAY and q.dtype is qd.dtype is third.dtype is _FLOAT
            and q.shape == qd.shape == third.shape == model.shape):
        return work.rows, q, qd, third, work.no_wrench
    work = _workspace(model, work)
    if wrench is None:
        load = work.no_wrench
    else:
        load = np.ascontiguousarray(wrench, dtype=float)
        if load.shape != (model.dof, 6):
            raise MbstateError(f"wrench: expected shape ({model.dof}, 6), got {load.shape}")
    return work.rows, _vector(model, "q", q), _vector(model, "qd", qd), _vector(model, name, third), load


def inverse_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> np.ndarray:
    """Q = M q̈ + h(q, q̇) − Σ Jᵀ W (+ damping and Coulomb friction): the joint forces [N·m or N]."""
    rows, q, qd, qdd, load = _arguments(model, q, qd, qdd, "qdd", wrench, work)
    out = np.empty(model.dof)
    rnea_kernel(rows, q, qd, qdd, load, friction, out)
    return out


def joint_wrenches(model: SpatialModel, work: Workspace) -> np.ndarray:
    """(n, 6) the wrench transmitted through each joint onto its body, in the body frame (eq. 67a),
    as left by the last inverse_dynamics or rnea_derivatives call on ``work``."""
    return _workspace(model, work).rows[:, W_F:W_F + 6].copy()


def mass_matrix(model: SpatialModel, q: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """M(q) (n, n), symmetric positive definite [kg·m² or kg]."""
    out = np.empty((model.dof, model.dof))
    crba_kernel(_workspace(model, work).rows, _vector(model, "q", q), out)
    return out


def forward_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> np.ndarray:
    """q̈ with M q̈ + h = Q − friction + Σ Jᵀ W, by ABA."""
    rows, q, qd, tau, load = _arguments(model, q, qd, tau, "tau", wrench, work)
    out = np.empty(model.dof)
    aba_kernel(rows, q, qd, tau, load, friction, out)
    return out


def rnea_derivatives(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(∂Q/∂q, ∂Q/∂q̇, ∂Q/∂q̈ = M) of inverse_dynamics, analytic (derivatives.py), from one compiled
    call into one (3, n, n) block."""
    rows, q, qd, qdd, load = _arguments(model, q, qd, qdd, "qdd", wrench, work)
    out = np.empty((3, model.dof, model.dof))
    rnea_derivatives_kernel(rows, q, qd, qdd, load, friction, out)
    return out[0], out[1], out[2]


class JointWrench:
    """The wrench W_j that joint ``joint`` transmits from its parent onto its child body (the RNEA's
    eq. 67a: the subtree's inertial wrenches minus gravity and applied wrenches; the joint's friction
    and armature act inside it), in a frame S of that body (pose ``rot``, ``pos`` in the body frame),
    as (t; f) about S's origin [N·m; N], and its analytic q-, q̇-, q̈-derivatives
    (derivatives.joint_wrench_kernel). One per user and thread: it owns a workspace and buffers."""

    def __init__(self, model: SpatialModel, joint: int, rot: np.ndarray, pos: np.ndarray) -> None:
        self.model, self.work = model, workspace(model)
        self.row = np.zeros(T_WIDTH + model.dof)
        self.row[T_MOUNT:T_MOUNT + 9], self.row[T_MOUNT + 9:T_MOUNT + 12] = np.asarray(rot).ravel(), pos
        self.row[T_JOINT] = joint
        moves = ancestry(model)  # [i, k]: joint k moves body i
        self.row[T_WIDTH:] = np.where(moves[joint], 0.0, np.where(moves[:, joint], 1.0, -1.0))
        self.tangents = np.zeros((3, model.dof, 6))

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                 wrench: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(W_s (6,), tangents (3, n, 6): row k of tangents[b] is ∂W_s/∂x_k for the block x = q, q̇,
        q̈ b = 0, 1, 2): views of buffers the next call overwrites. ``wrench``: (n, 6) applied body wrenches
        (as inverse_dynamics takes them; None: none), held fixed on their bodies."""
        model = self.model
        load = self.work.no_wrench if wrench is None else np.ascontiguousarray(wrench, dtype=float)
        joint_wrench_kernel(self.work.rows, load, self.row, _vector(model, "q", q),
                            _vector(model, "qd", qd), _vector(model, "qdd", qdd), self.tangents)
        return self.row[T_W:T_W + 6], self.tangents


def coriolis_matrix(model: SpatialModel, q: np.ndarray, qd: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """C(q, q̇) of the Christoffel symbols, C_ij = Σₖ Γ_ijk q̇ₖ with Γ_ijk = ½(∂ₖM_ij + ∂ⱼM_ik − ∂ᵢM_jk).

    The velocity terms are h_v = Σ_jk Γ_ijk q̇ⱼ q̇ₖ with Γ symmetric in j, k, so ∂h_v/∂q̇ = 2C:
    C is half the q̇-derivative of the RNEA without friction (whatever q̈ and gravity). Hence
    C q̇ = h_v and Ṁ − 2C is skew-symmetric (the property the momentum observer needs); the
    extracted Christoffel formula (86) of Müller is not used (the notes found it misprinted).
    """
    return 0.5 * rnea_derivatives(model, q, qd, np.zeros(model.dof), friction=False, work=work)[1]


def mass_matrix_rate(model: SpatialModel, q: np.ndarray, qd: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """Ṁ q̇ (n,) along the motion, Ṁ = Σₖ ∂M/∂qₖ q̇ₖ = C + Cᵀ (C of ``coriolis_matrix``: Ṁ − 2C is
    skew-symmetric) [N·m or N]: the term by which ṗ = M q̈ + Ṁ q̇ of the momentum p = M q̇ differs from
    M q̈ (the momentum observer, estimator.online.filters.momentum_observer)."""
    c = coriolis_matrix(model, q, qd, work)
    return c @ qd + c.T @ qd
