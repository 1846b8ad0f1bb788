"""The dynamics factors' analytic Jacobians (Xie and Dellaert eqs. 4–7) against central differences
of their numpy errors, at random constants and arguments."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from estimator.spatial import lie
from estimator.spatial_graph.factors import (BodyTerms, JointTerms, LoopJointTerms, accel_error, co_bracket_matrix,
                                             loop_accel_error, loop_torque_error, min_torque_error, planar_error,
                                             torque_error, twist_error, wrench_error)

# Central differences with step h err by O(h²)·|e'''| + O(ε/h)·|e|: the errors are at most quadratic
# (the wrench factor in V) with O(1) entries, so the truncation is exactly zero and h = 1e-6 leaves
# round-off of about 1e-16 · 10 / 1e-6 = 1e-9; 1e-7 is ample and still fails any wrong block.
STEP, TOL = 1e-6, 1e-7


def random_pose(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return lie.exp_se3(rng.normal(size=6))


def joint_terms(rng: np.random.Generator) -> JointTerms:
    return JointTerms(lie.adjoint(random_pose(rng)), rng.normal(size=6), float(rng.uniform(0, 1)),
                      float(rng.normal()))


def body_terms(rng: np.random.Generator, children: int) -> BodyTerms:
    root = rng.normal(size=(3, 3))
    inertia = lie.spatial_inertia(float(rng.uniform(0.5, 2)), rng.normal(size=3), root @ root.T + np.eye(3))
    return BodyTerms(inertia, rng.normal(size=3), rng.normal(size=6),
                     tuple(lie.adjoint(random_pose(rng)) for _ in range(children)))


def check_jacobians(fn, args: list[np.ndarray]) -> None:
    _, analytic = fn(*args, jac=True)
    assert len(analytic) == len(args)
    for k, arg in enumerate(args):
        numeric = np.zeros((len(fn(*args)[0]), len(arg)))
        for j in range(len(arg)):
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[k][j] += STEP
            minus[k][j] -= STEP
            numeric[:, j] = (fn(*plus)[0] - fn(*minus)[0]) / (2 * STEP)
        np.testing.assert_allclose(analytic[k], numeric, atol=TOL, err_msg=f"argument {k}")


@pytest.mark.parametrize("seed", range(3))
def test_twist_factor_jacobians(seed: int) -> None:
    rng = np.random.default_rng(seed)
    check_jacobians(partial(twist_error, joint_terms(rng)), [rng.normal(size=n) for n in (6, 6, 1)])


@pytest.mark.parametrize("seed", range(3))
def test_twist_acceleration_factor_jacobians(seed: int) -> None:
    rng = np.random.default_rng(seed)
    check_jacobians(partial(accel_error, joint_terms(rng)), [rng.normal(size=n) for n in (6, 6, 1, 6, 1)])


@pytest.mark.parametrize("children", [0, 1, 3])
def test_wrench_factor_jacobians_with_child_joints(children: int) -> None:
    rng = np.random.default_rng(children)
    check_jacobians(partial(wrench_error, body_terms(rng, children)),
                    [rng.normal(size=6) for _ in range(3 + children)])


@pytest.mark.parametrize("seed", range(3))
def test_torque_factor_jacobians(seed: int) -> None:
    rng = np.random.default_rng(seed)
    check_jacobians(partial(torque_error, joint_terms(rng)), [rng.normal(size=n) for n in (6, 1, 1)])


def test_co_bracket_matrix_is_the_transposed_bracket_as_a_function_of_the_twist() -> None:
    rng = np.random.default_rng(7)
    twist, h = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(co_bracket_matrix(h) @ twist, lie.ad(twist).T @ h, atol=1e-14)


def test_errors_vanish_on_a_consistent_rigid_body() -> None:
    """One body on one joint at rest in gravity: F = −M (0; Rᵀ g) holds the weight, τ = Xᵀ F."""
    rng = np.random.default_rng(3)
    joint, body = joint_terms(rng), body_terms(rng, 0)
    body = BodyTerms(body.inertia, body.gravity, np.zeros(6), ())
    wrench = -body.inertia @ np.concatenate((np.zeros(3), body.gravity))
    zero = np.zeros(6)
    assert np.allclose(wrench_error(body, wrench, zero, zero)[0], 0.0, atol=1e-14)
    tau = np.array([joint.screw @ wrench + joint.passive])
    assert np.allclose(torque_error(joint, wrench, tau, np.zeros(1))[0], 0.0, atol=1e-14)


@pytest.mark.parametrize("free", [1, 3])
def test_loop_joint_factor_jacobians(free: int) -> None:
    rng = np.random.default_rng(10 + free)
    directions = np.linalg.qr(rng.normal(size=(6, free)))[0]
    loop = LoopJointTerms(lie.adjoint(random_pose(rng)), lie.adjoint(random_pose(rng)), directions)
    check_jacobians(partial(loop_accel_error, loop), [rng.normal(size=6), rng.normal(size=6),
                                                      rng.normal(size=free), rng.normal(size=6), rng.normal(size=6)])
    check_jacobians(partial(loop_torque_error, loop), [rng.normal(size=6)])
    check_jacobians(planar_error, [rng.normal(size=6)])
    check_jacobians(min_torque_error, [rng.normal(size=1)])
