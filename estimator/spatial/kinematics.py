"""Kinematics of a spatial model by the product of exponentials (Müller 2018 App. A, §2): poses,
twists, accelerations and Jacobians of every body and named frame, in two representations.

Body-fixed (eqs. 66a–c, 103): Cᵢ = C_λ Bᵢ exp(ⁱXᵢ qᵢ), Vᵢ = Ad_{C_{i,λ}} V_λ + ⁱXᵢ q̇ᵢ,
V̇ᵢ = Ad_{C_{i,λ}} V̇_λ + ⁱXᵢ q̈ᵢ + [Vᵢ, ⁱXᵢ] q̇ᵢ, Jᵇ_{i,j} = Ad_{Cᵢ⁻¹Cⱼ} ʲXⱼ.
Spatial (eqs. 70b–d, 104): Jˢⱼ = Ad_{Cⱼ} ʲXⱼ (the same column for every body after j),
Vˢᵢ = Vˢ_λ + Jˢᵢ q̇ᵢ, V̇ˢᵢ = V̇ˢ_λ + Jˢᵢ q̈ᵢ + [Vˢᵢ, Jˢᵢ] q̇ᵢ. Hybrid: Vʰ = Ad_R Vᵇ (eq. 99).
Accelerations here are kinematic (no gravity); numpy, but for angular_rates (every step of the online
estimator), the compiled spatial recursion of estimator.spatial.loop_kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.spatial import lie
from estimator.spatial.loop_kernels import L_J, L_WIDTH, motion_kernel
from estimator.spatial.model import SpatialModel
from estimator.spatial.ops import G_WIDTH


@dataclass(frozen=True)
class BodyKinematics:
    """Per body i: rot (n, 3, 3), pos (n, 3) its pose in the world; twist, accel (n, 6) its body-fixed
    twist Vᵇ [rad/s; m/s] and acceleration V̇ᵇ [rad/s²; m/s²]."""
    rot: np.ndarray
    pos: np.ndarray
    twist: np.ndarray
    accel: np.ndarray


def relative(model: SpatialModel, i: int, qi: float) -> tuple[np.ndarray, np.ndarray]:
    """C_{λ(i),i}(qᵢ) = Bᵢ exp(ⁱXᵢ qᵢ) (Müller eq. 91)."""
    place = (model.placement[i, :9].reshape(3, 3), model.placement[i, 9:])
    return lie.compose(place, lie.exp_se3(model.screw[i] * qi))


def body_kinematics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> BodyKinematics:
    """Poses, body-fixed twists and accelerations by the recursions (66a–c)."""
    n = model.dof
    rot, pos, twist, accel = np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        rel = relative(model, i, q[i])
        p = model.parent[i]
        parent = (np.eye(3), np.zeros(3)) if p < 0 else (rot[p], pos[p])
        rot[i], pos[i] = lie.compose(parent, rel)
        carry = lie.adjoint(lie.inverse(rel))
        x = model.screw[i]
        twist[i] = (0.0 if p < 0 else carry @ twist[p]) + x * qd[i]
        accel[i] = (0.0 if p < 0 else carry @ accel[p]) + x * qdd[i] + lie.ad(twist[i]) @ x * qd[i]
    return BodyKinematics(rot, pos, twist, accel)


def ancestry(model: SpatialModel) -> np.ndarray:
    """(n, n) bool: [i, j] when joint j moves body i (j = i or an ancestor of i)."""
    out = np.eye(model.dof, dtype=bool)
    for i in range(model.dof):
        p = model.parent[i]
        if p >= 0:
            out[i] |= out[p]
    return out


def spatial_jacobian(model: SpatialModel, kin: BodyKinematics) -> np.ndarray:
    """(6, n): Jˢⱼ = Ad_{Cⱼ} ʲXⱼ (eq. 104); body i's spatial Jacobian keeps the columns ancestry[i]."""
    return np.stack([lie.adjoint((kin.rot[j], kin.pos[j])) @ model.screw[j] for j in range(model.dof)], axis=1)


def body_jacobian(model: SpatialModel, kin: BodyKinematics, body: int) -> np.ndarray:
    """(6, n): Jᵇ_{i,j} = Ad_{Cᵢ⁻¹Cⱼ} ʲXⱼ for the joints j that move body i, else 0 (eq. 103)."""
    to_body = lie.adjoint(lie.inverse((kin.rot[body], kin.pos[body])))
    return to_body @ spatial_jacobian(model, kin) * ancestry(model)[body]


def frame_jacobian(model: SpatialModel, kin: BodyKinematics, name: str) -> np.ndarray:
    """(6, n): the twist (ω; v) of a named frame in its own axes, Jᶠ = Ad_{C_{f,b}} Jᵇ (eq. 103 carried
    to the frame on body b); zero for a frame on the fixed base. Its transpose maps a wrench (m; f) on the
    frame, in its axes about its origin, to the joint forces Jᶠᵀ W (eq. 120 with ``dynamics.body_wrenches``)."""
    frame = model.frame(name)
    if frame.body < 0:
        return np.zeros((6, model.dof))
    return lie.adjoint(lie.inverse((frame.rot, frame.pos))) @ body_jacobian(model, kin, frame.body)


def spatial_motion(model: SpatialModel, kin: BodyKinematics, qd: np.ndarray,
                   qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 6) spatial twists Vˢ and accelerations V̇ˢ by the recursions (70c, 70d)."""
    jac = spatial_jacobian(model, kin)
    twist, accel = np.zeros((model.dof, 6)), np.zeros((model.dof, 6))
    for i in range(model.dof):
        p = model.parent[i]
        twist[i] = (0.0 if p < 0 else twist[p]) + jac[:, i] * qd[i]
        accel[i] = (0.0 if p < 0 else accel[p]) + jac[:, i] * qdd[i] + lie.ad(twist[i]) @ jac[:, i] * qd[i]
    return twist, accel


def hybrid_twist(kin: BodyKinematics, body: int) -> np.ndarray:
    """Vʰ = Ad_R Vᵇ = (ωˢ; ṙ): world axes, at the body origin (eq. 99)."""
    r = kin.rot[body]
    return np.concatenate((r @ kin.twist[body, :3], r @ kin.twist[body, 3:]))


def frame_pose(model: SpatialModel, kin: BodyKinematics, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of a named frame in the world."""
    frame = model.frame(name)
    if frame.body < 0:
        return frame.rot, frame.pos
    return lie.compose((kin.rot[frame.body], kin.pos[frame.body]), (frame.rot, frame.pos))


def frame_motion(model: SpatialModel, kin: BodyKinematics, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The body-fixed twist and acceleration of a named frame, in its own axes at its origin:
    Ad_{C_{f,b}} of its body's (zero on the fixed base)."""
    frame = model.frame(name)
    if frame.body < 0:
        return np.zeros(6), np.zeros(6)
    carry = lie.adjoint(lie.inverse((frame.rot, frame.pos)))
    return carry @ kin.twist[frame.body], carry @ kin.accel[frame.body]


def classical_acceleration(model: SpatialModel, kin: BodyKinematics, name: str,
                           point: np.ndarray | None = None) -> np.ndarray:
    """r̈ of a point (``point`` in the named frame's axes, default its origin), in world axes:
    R (v̇ + ω × v + ω̇ × p + ω × (ω × p)) from the frame's body-fixed twist (ω; v) and
    acceleration (ω̇; v̇). An accelerometer there reads Rᵀ (r̈ − g)."""
    twist, accel = frame_motion(model, kin, name)
    p = np.zeros(3) if point is None else np.asarray(point, dtype=float)
    w, v, wd, vd = twist[:3], twist[3:], accel[:3], accel[3:]
    local = vd + np.cross(w, v) + np.cross(wd, p) + np.cross(w, np.cross(w, p))
    return frame_pose(model, kin, name)[0] @ local


def angular_rates(model: SpatialModel, q: np.ndarray) -> np.ndarray:
    """(3n, n): ∂ω/∂q̇ of every body's angular velocity in world axes, ωᵢ = Σ_{j moves i} ωⱼ q̇ⱼ, ωⱼ the angular
    rows of the spatial Jacobian column Jˢⱼ = Ad_{Cⱼ} ʲXⱼ (eq. 104; zero for a prismatic joint), body i's three
    rows at 3i; the columns by the compiled motion recursion (estimator.spatial.loop_kernels)."""
    n = model.dof
    rows, state = np.zeros((n, L_WIDTH)), np.zeros((3, n))
    rows[:, :G_WIDTH] = model.packed
    state[0] = q
    motion_kernel(rows, state)
    return (ancestry(model)[:, None, :] * rows[:, L_J:L_J + 3].T[None]).reshape(3 * n, n)
