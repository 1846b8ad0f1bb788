"""Spatial kinematics: the body-fixed and spatial recursions agree (Müller 2018 eqs. 66 and 70),
accelerations are the time derivatives of the twists, the classical acceleration is the second
derivative of a point's position, and the numba forward pass equals the numpy one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from estimator.spatial.model import load_spatial
from estimator.spatial.dynamics import workspace
from estimator.spatial.ops import G_GRAVITY, W_A, W_REL, W_V
from estimator.spatial.rnea import forward_pass

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
ROBOTS = ("ur5", "panda", "test_tree")


def state(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n)


@pytest.mark.parametrize("robot", ROBOTS)
def test_body_fixed_and_spatial_representations_agree(robot: str) -> None:
    """Vˢ = Ad_C Vᵇ, V̇ˢ = Ad_C V̇ᵇ (d/dt Ad_C Vᵇ = Ad_C (V̇ᵇ + [Vᵇ, Vᵇ])), Jˢ = Ad_C Jᵇ, V = J q̇,
    and Vʰ = Ad_r⁻¹ Vˢ, from two independent recursions: to 1e-12 (rounding only)."""
    model = load_spatial(URDF / f"{robot}.urdf")
    for seed in range(10):
        q, qd, qdd = state(model.dof, seed)
        body = kin.body_kinematics(model, q, qd, qdd)
        twist, accel = kin.spatial_motion(model, body, qd, qdd)
        ancestry = kin.ancestry(model)
        jac = kin.spatial_jacobian(model, body)
        for i in range(model.dof):
            carry = lie.adjoint((body.rot[i], body.pos[i]))
            np.testing.assert_allclose(carry @ body.twist[i], twist[i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(carry @ body.accel[i], accel[i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(carry @ kin.body_jacobian(model, body, i), jac * ancestry[i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(kin.body_jacobian(model, body, i) @ qd, body.twist[i], rtol=0, atol=1e-12)
            shift = lie.adjoint((np.eye(3), -body.pos[i]))
            np.testing.assert_allclose(kin.hybrid_twist(body, i), shift @ twist[i], rtol=0, atol=1e-12)


@pytest.mark.parametrize("robot", ROBOTS)
def test_accelerations_are_time_derivatives(robot: str) -> None:
    """Along q(t) = q + q̇ t + q̈ t²/2: V̇ᵇ = dVᵇ/dt and the classical acceleration = d²r/dt² of a
    frame's point, by central differences: first derivative with step 1e-5 (truncation h²/6·|jerk|
    ~1e-9, rounding ~1e-11), second with step 1e-4 (truncation ~1e-8, rounding ε|r|/h² ~1e-8)."""
    model = load_spatial(URDF / f"{robot}.urdf")
    q, qd, qdd = state(model.dof, 7)

    def at(t: float) -> kin.BodyKinematics:
        return kin.body_kinematics(model, q + qd * t + 0.5 * qdd * t * t, qd + qdd * t, qdd)

    body = at(0.0)
    np.testing.assert_allclose((at(1e-5).twist - at(-1e-5).twist) / 2e-5, body.accel, rtol=0, atol=1e-8)
    name, point = model.frames[-1].name, np.array([0.1, -0.2, 0.05])

    def where(k: kin.BodyKinematics) -> np.ndarray:
        rot, pos = kin.frame_pose(model, k, name)
        return pos + rot @ point

    second = (where(at(1e-4)) - 2 * where(body) + where(at(-1e-4))) / 1e-8
    np.testing.assert_allclose(second, kin.classical_acceleration(model, body, name, point), rtol=0, atol=1e-6)


@pytest.mark.parametrize("robot", ROBOTS)
def test_numba_forward_pass_equals_numpy_recursion(robot: str) -> None:
    """The kernels' joint transforms (Rodrigues, rows of R) and twists (66b, 66c) against the numpy
    product of exponentials; the kernel's base acceleration carries −g (read from the workspace's
    model rows: zeroed here, as the numpy recursion has no gravity)."""
    model = load_spatial(URDF / f"{robot}.urdf")
    q, qd, qdd = state(model.dof, 3)
    ws = workspace(model).rows
    ws[:, G_GRAVITY:G_GRAVITY + 3] = 0.0
    forward_pass(ws, q, qd, qdd)
    body = kin.body_kinematics(model, q, qd, qdd)
    for i in range(model.dof):
        rot, pos = kin.relative(model, i, q[i])
        np.testing.assert_allclose(ws[i, W_REL:W_REL + 9], rot.ravel(), rtol=0, atol=1e-14)
        np.testing.assert_allclose(ws[i, W_REL + 9:W_REL + 12], pos, rtol=0, atol=1e-14)
    np.testing.assert_allclose(ws[:, W_V:W_V + 6], body.twist, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ws[:, W_A:W_A + 6], body.accel, rtol=0, atol=1e-12)


def test_exp_and_adjoint_identities() -> None:
    """exp of a screw against the matrix exponential of its 4×4 form (scipy), and
    Ad_C ad_X Ad_C⁻¹ = ad_{Ad_C X}."""
    from scipy.linalg import expm

    rng = np.random.default_rng(5)
    for _ in range(5):
        x, y = rng.normal(size=6), rng.normal(size=6)
        hat = np.zeros((4, 4))
        hat[:3, :3], hat[:3, 3] = lie.skew(x[:3]), x[3:]
        ref = expm(hat)
        rot, pos = lie.exp_se3(x)
        np.testing.assert_allclose(rot, ref[:3, :3], atol=1e-13)
        np.testing.assert_allclose(pos, ref[:3, 3], atol=1e-13)
        big = lie.adjoint((rot, pos))
        np.testing.assert_allclose(big @ lie.ad(y) @ np.linalg.inv(big), lie.ad(big @ y), atol=1e-12)
        np.testing.assert_allclose(lie.exp_se3(np.concatenate((np.zeros(3), x[3:])))[1], x[3:], atol=0)
