"""The factors of the dynamics graph (Xie and Dellaert, eqs. 4–7), as numpy error functions with
analytic Jacobians in the adapter's form ``fn(*values, jac=...) -> (error, [∂e/∂value, ...])``.

Body-fixed twists in each body's frame (the model's frames; Müller 2018 §4.1). ``carry`` is
Ad_{C_{i,λ}}, which takes a twist of the parent λ into body i's frame, and its transpose takes a
wrench of body i into the parent's frame (Müller eq. 120). The inertia is about the body origin, so
it need not be at the centre of mass (Müller eq. 40): the gravity wrench is Mᵢ (0; Rᵢᵀ g).

A loop joint (§VII) closes a loop between frame A on body a and frame B on body b: its wrench F_L,
in B's axes, acts on b and its reaction on a; its free directions S (6, k) in B's axes (a revolute's
z rotation, a ball's three rotations, none for a weld) carry no force, and a planar factor removes the
out-of-plane components of F_L that a planar loop leaves undetermined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.spatial import lie


@dataclass(frozen=True)
class JointTerms:
    """Joint i's constants: carry (6, 6) Ad_{C_{i,λ}(qᵢ)}, screw (6,) ⁱXᵢ, armature [kg·m² or kg] and
    passive (damping and Coulomb friction at the known q̇ᵢ) [N·m or N]."""
    carry: np.ndarray
    screw: np.ndarray
    armature: float
    passive: float


@dataclass(frozen=True)
class BodyTerms:
    """Body i's constants: inertia (6, 6) Mᵢ about its origin, gravity (3,) Rᵢᵀ g in its axes,
    applied (6,) the applied wrench, couplings: for each further wrench W on the body, the P (6, 6)
    with Pᵀ W its share of (6): Ad_{C_{c,i}} for a child joint c, ±Ad of a loop joint's frame."""
    inertia: np.ndarray
    gravity: np.ndarray
    applied: np.ndarray
    couplings: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class LoopJointTerms:
    """A loop joint's constants: to_child (6, 6) Ad_{C_{B,b}} and to_parent Ad_{C_{B,a}} (B's axes at
    A's origin, which B's coincides with on an assembled chain; unused for the fixed base), free (6, k)
    its free directions in B's axes."""
    to_child: np.ndarray
    to_parent: np.ndarray
    free: np.ndarray


def co_bracket_matrix(h: np.ndarray) -> np.ndarray:
    """The matrix of V ↦ ad_Vᵀ h: [[h̃₁, h̃₂], [h̃₂, 0]] for h = (h₁; h₂)."""
    out = np.zeros((6, 6))
    out[:3, :3] = lie.skew(h[:3])
    out[:3, 3:] = out[3:, :3] = lie.skew(h[3:])
    return out


def twist_error(joint: JointTerms, twist: np.ndarray, parent: np.ndarray, qd: np.ndarray,
                jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (4): Vᵢ − Ad_{C_{i,λ}} V_λ − ⁱXᵢ q̇ᵢ, on (Vᵢ, V_λ, q̇ᵢ (1,))."""
    error = twist - joint.carry @ parent - joint.screw * qd[0]
    if not jac:
        return error, None
    return error, [np.eye(6), -joint.carry, -joint.screw[:, None]]


def accel_error(joint: JointTerms, accel: np.ndarray, parent: np.ndarray, qdd: np.ndarray, twist: np.ndarray,
                qd: np.ndarray, jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (5): V̇ᵢ − Ad_{C_{i,λ}} V̇_λ − ⁱXᵢ q̈ᵢ − ad_{Vᵢ} ⁱXᵢ q̇ᵢ, on (V̇ᵢ, V̇_λ, q̈ᵢ, Vᵢ, q̇ᵢ)
    (the last two known in the linear graphs; ad_V X = −ad_X V gives ∂/∂Vᵢ)."""
    bracket = lie.ad(twist) @ joint.screw
    error = accel - joint.carry @ parent - joint.screw * qdd[0] - bracket * qd[0]
    if not jac:
        return error, None
    return error, [np.eye(6), -joint.carry, -joint.screw[:, None], lie.ad(joint.screw) * qd[0], -bracket[:, None]]


def wrench_error(body: BodyTerms, wrench: np.ndarray, accel: np.ndarray, twist: np.ndarray, *others: np.ndarray,
                 jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (6) with gravity, a tree's child joints and loop joints: Mᵢ (V̇ᵢ − (0; Rᵢᵀ g)) − ad_{Vᵢ}ᵀ Mᵢ Vᵢ
    − Wᵢᵃᵖᵖ + Σ Pᵀ W − Fᵢ, on (Fᵢ, V̇ᵢ, Vᵢ, W …) with the couplings P; the signs of Müller's (67a)."""
    m = body.inertia
    momentum = m @ twist
    weight = np.concatenate((np.zeros(3), body.gravity))
    error = m @ (accel - weight) - lie.ad(twist).T @ momentum - body.applied - wrench
    for coupling, other in zip(body.couplings, others, strict=True):
        error = error + coupling.T @ other
    if not jac:
        return error, None
    d_twist = -(lie.ad(twist).T @ m + co_bracket_matrix(momentum))
    return error, [-np.eye(6), m, d_twist, *(coupling.T for coupling in body.couplings)]


def torque_error(joint: JointTerms, wrench: np.ndarray, tau: np.ndarray, qdd: np.ndarray,
                 jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (7) with the joint's armature and passive forces (Müller 67b as the classical RNEA):
    ⁱXᵢᵀ Fᵢ + I_a q̈ᵢ + passive − τᵢ, on (Fᵢ, τᵢ (1,), q̈ᵢ (1,))."""
    error = np.array([joint.screw @ wrench + joint.armature * qdd[0] + joint.passive - tau[0]])
    if not jac:
        return error, None
    return error, [joint.screw[None, :], -np.ones((1, 1)), np.full((1, 1), joint.armature)]


def loop_accel_error(loop: LoopJointTerms, child: np.ndarray, parent: np.ndarray, qdd: np.ndarray,
                     child_twist: np.ndarray, parent_twist: np.ndarray,
                     jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (5) of a loop joint in B's axes: Ad_{C_{B,b}} V̇_b − Ad_{C_{B,a}} V̇_a − S q̈_L − ad_{V_B} S q̇_L,
    on (V̇_b, V̇_a, q̈_L (k,), V_b, V_a), with V_B = Ad_{C_{B,b}} V_b and q̇_L = Sᵀ (V_B − Ad_{C_{B,a}} V_a)
    (S orthonormal)."""
    free = loop.free
    twist = loop.to_child @ child_twist
    rate = free @ (free.T @ (twist - loop.to_parent @ parent_twist))
    error = loop.to_child @ child - loop.to_parent @ parent - free @ qdd - lie.ad(twist) @ rate
    if not jac:
        return error, None
    project = lie.ad(twist) @ free @ free.T
    return error, [loop.to_child, -loop.to_parent, -free, (lie.ad(rate) - project) @ loop.to_child,
                   project @ loop.to_parent]


def loop_torque_error(loop: LoopJointTerms, wrench: np.ndarray,
                      jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Eq. (7) of an unactuated loop joint: Sᵀ F_L, on (F_L,)."""
    return loop.free.T @ wrench, [loop.free.T] if jac else None


PLANAR_ROWS = np.eye(6)[[0, 1, 5]]  # (t_x, t_y, f_z): the out-of-plane components for a plane normal to z


def planar_error(wrench: np.ndarray, jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """The planar factor (§VII) on a loop wrench in B's axes, the loop's plane normal to B's z axis:
    (t_x, t_y, f_z), on (F_L,)."""
    return PLANAR_ROWS @ wrench, [PLANAR_ROWS] if jac else None


def min_torque_error(tau: np.ndarray, jac: bool = False) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """A minimum-torque factor (§VII): τᵢ itself, on (τᵢ,); with the dynamics as hard constraints, the
    least-squares solution is the minimum-norm actuation."""
    return tau.copy(), [np.eye(len(tau))] if jac else None
