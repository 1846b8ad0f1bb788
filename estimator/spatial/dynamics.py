"""Dynamics of a spatial model: the numba kernels behind plain functions of (model, q, q̇, …).

M(q) q̈ + h(q, q̇) = Q + Σ Jᵀ W: inverse dynamics (RNEA), the mass matrix (CRBA), forward
dynamics (ABA), the Coriolis matrix and the analytic derivatives of inverse dynamics. Each takes an
optional Workspace (``workspace(model)``) so that a loop calling it allocates nothing but its result;
applied wrenches are (n, 6) body wrenches (``body_wrenches`` builds them from named frames).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.aba import aba_kernel
from estimator.spatial.crba import crba_kernel
from estimator.spatial.derivatives import D_WIDTH, rnea_derivatives_kernel, rnea_derivatives_mass_kernel
from estimator.spatial.model import SpatialModel
from estimator.spatial.ops import W_F, W_WIDTH
from estimator.spatial.rnea import rnea_kernel


@dataclass(frozen=True)
class Workspace:
    """Preallocated arrays the kernels fill (Pinocchio's Data): rows per body, the derivatives'
    world-frame rows, the no-load wrench array and the joint forces of a call that returns only their
    derivatives."""
    rows: np.ndarray
    world: np.ndarray
    no_wrench: np.ndarray
    tau: np.ndarray


def workspace(model: SpatialModel) -> Workspace:
    """A workspace for ``model``'s kernels; one per thread (the kernels write into it)."""
    n = model.dof
    return Workspace(np.zeros((n, W_WIDTH)), np.zeros((n, D_WIDTH)), np.zeros((n, 6)), np.zeros(n))


_FLOAT = np.dtype(np.float64)


def _vector(model: SpatialModel, name: str, value: np.ndarray) -> np.ndarray:
    """``value`` as a float array of n entries (as given when it already is one)."""
    if value.__class__ is np.ndarray and value.dtype is _FLOAT and value.shape == model.shape:
        return value
    out = np.ascontiguousarray(value, dtype=float)
    if out.shape != (model.dof,):
        raise MbstateError(f"{name}: expected {model.dof} values, got shape {out.shape}")
    return out


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


def _state(model: SpatialModel, q: np.ndarray, qd: np.ndarray, third: np.ndarray,
           name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, third) as float arrays of n entries: as given when they already are (one test, as
    this is much of a call's cost at a few joints)."""
    shape = model.shape
    if (q.__class__ is qd.__class__ is third.__class__ is np.ndarray and q.dtype is qd.dtype is third.dtype is _FLOAT
            and q.shape == shape and qd.shape == shape and third.shape == shape):
        return q, qd, third
    return _vector(model, "q", q), _vector(model, "qd", qd), _vector(model, name, third)


def _wrenches(model: SpatialModel, wrench: np.ndarray) -> np.ndarray:
    out = np.ascontiguousarray(wrench, dtype=float)
    if out.shape != (model.dof, 6):
        raise MbstateError(f"wrench: expected shape ({model.dof}, 6), got {out.shape}")
    return out


def _recursion(kernel: Callable, model: SpatialModel, q: np.ndarray, qd: np.ndarray, third: np.ndarray,
               name: str, wrench: np.ndarray | None, friction: bool, work: Workspace | None) -> np.ndarray:
    """A kernel of (q, q̇, q̈ or Q, body wrenches) returning n values: RNEA or ABA."""
    if work is None:
        work = workspace(model)
    out = np.empty(model.dof)
    kernel(model.ints, model.geo, model.gravity, *_state(model, q, qd, third, name),
           work.no_wrench if wrench is None else _wrenches(model, wrench), friction, work.rows, out)
    return out


def inverse_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> np.ndarray:
    """Q = M q̈ + h(q, q̇) − Σ Jᵀ W (+ damping and Coulomb friction): the joint forces [N·m or N]."""
    return _recursion(rnea_kernel, model, q, qd, qdd, "qdd", wrench, friction, work)


def joint_wrenches(model: SpatialModel, work: Workspace) -> np.ndarray:
    """(n, 6) the wrench transmitted through each joint onto its body, in the body frame (eq. 67a),
    as left by the last inverse_dynamics or rnea_derivatives call on ``work``."""
    return work.rows[:, W_F:W_F + 6].copy()


def mass_matrix(model: SpatialModel, q: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """M(q) (n, n), symmetric positive definite [kg·m² or kg]."""
    if work is None:
        work = workspace(model)
    out = np.empty((model.dof, model.dof))
    crba_kernel(model.ints, model.geo, _vector(model, "q", q), work.rows, out)
    return out


def forward_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> np.ndarray:
    """q̈ with M q̈ + h = Q − friction + Σ Jᵀ W, by ABA."""
    return _recursion(aba_kernel, model, q, qd, tau, "tau", wrench, friction, work)


def rnea_derivatives(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     wrench: np.ndarray | None = None, friction: bool = True,
                     work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(∂Q/∂q, ∂Q/∂q̇, ∂Q/∂q̈ = M) of inverse_dynamics, analytic (derivatives.py)."""
    if work is None:
        work = workspace(model)
    out = np.empty((3, model.dof, model.dof))  # one allocation for the three
    rnea_derivatives_mass_kernel(model.ints, model.geo, model.gravity, *_state(model, q, qd, qdd, "qdd"),
                                 work.no_wrench if wrench is None else _wrenches(model, wrench), friction,
                                 work.rows, work.world, work.tau, out)
    return out[0], out[1], out[2]


def _tangents(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray | None,
              friction: bool, work: Workspace) -> tuple[np.ndarray, np.ndarray]:
    n = model.dof
    dq, dqd = np.empty((n, n)), np.empty((n, n))
    rnea_derivatives_kernel(model.ints, model.geo, model.gravity, *_state(model, q, qd, qdd, "qdd"),
                            work.no_wrench if wrench is None else _wrenches(model, wrench), friction,
                            work.rows, work.world, work.tau, dq, dqd)
    return dq, dqd


def coriolis_matrix(model: SpatialModel, q: np.ndarray, qd: np.ndarray, work: Workspace | None = None) -> np.ndarray:
    """C(q, q̇) of the Christoffel symbols, C_ij = Σₖ Γ_ijk q̇ₖ with Γ_ijk = ½(∂ₖM_ij + ∂ⱼM_ik − ∂ᵢM_jk).

    The velocity terms are h_v = Σ_jk Γ_ijk q̇ⱼ q̇ₖ with Γ symmetric in j, k, so ∂h_v/∂q̇ = 2C:
    C is half the q̇-derivative of the RNEA without friction (whatever q̈ and gravity). Hence
    C q̇ = h_v and Ṁ − 2C is skew-symmetric (the property the momentum observer needs); the
    extracted Christoffel formula (86) of Müller is not used (the notes found it misprinted).
    """
    return 0.5 * _tangents(model, q, qd, np.zeros(model.dof), None, False, workspace(model) if work is None else work)[1]
