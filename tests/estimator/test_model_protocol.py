"""The one model protocol (estimator.model_protocol): the planar model answers with its own kernels, the
spatial tree with the RNEA, its analytic derivatives, the CRBA and the ABA; the spatial step rows against
central differences and against their own identities."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.dynamics import lagrange
from estimator.dynamics import step_rows as planar_rows
from estimator.forces import generalized_forces as planar_forces
from estimator.kinematics import solve_position_problem
from estimator.mechanism_file import load_mechanism
from estimator.model_protocol import constraint_rows, free_accelerations, generalized_forces, mass_matrix, step_rows
from estimator.spatial.dynamics import inverse_dynamics
from estimator.spatial.dynamics import mass_matrix as crba
from estimator.spatial.model import load_spatial

URDF = REPO / "configs" / "mechanisms" / "urdf"


def test_the_planar_model_answers_with_its_own_kernels() -> None:
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    rng = np.random.default_rng(3)
    q = solve_position_problem(mech, mech.q0)
    qd, qdd, f = rng.normal(size=mech.n), rng.normal(size=mech.n), rng.normal(size=1)
    rows, selection, lam = np.arange(mech.m - 1), np.eye(mech.n)[:, [4]], rng.normal(size=mech.m - 1)
    for mine, theirs in zip(step_rows(mech, rows, selection, q, qd, qdd, lam, f, True),
                            planar_rows.step_rows(mech.arrays, rows, selection, q, qd, qdd, lam, f, True)):
        np.testing.assert_array_equal(mine, theirs)
    for mine, theirs in zip(constraint_rows(mech, rows, q, qd, qdd, True),
                            planar_rows.constraint_rows(mech.arrays, rows, q, qd, qdd, True)):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(mass_matrix(mech, q), mech.arrays.mass)
    np.testing.assert_array_equal(generalized_forces(mech, q, qd), planar_forces(mech, q, qd))
    for mine, theirs in zip(free_accelerations(mech, q, qd), lagrange.accelerations(mech.arrays, q, qd, 0.0, 0.0)):
        np.testing.assert_array_equal(mine, theirs)


def spatial_state(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)  # q̇ away from 0: the Coulomb friction is smooth there
    return rng.uniform(-2, 2, n), rng.uniform(0.5, 2, n) * rng.choice([-1, 1], n), rng.uniform(-5, 5, n)


@pytest.mark.parametrize("robot", ["test_tree", "ur5"])
def test_the_spatial_step_rows_are_the_rnea_less_the_unknown_forces_with_their_jacobian(robot: str) -> None:
    """d = RNEA(q, q̇, q̈) − E F and ∂d/∂[q, q̇, q̈, λ (none), F] against central differences."""
    model = load_spatial(URDF / f"{robot}.urdf")
    n = model.dof
    q, qd, qdd = spatial_state(n, 7)
    selection, f = np.eye(n)[:, [0, n - 1]], np.array([1.5, -0.7])
    rows, lam = np.zeros(0, int), np.zeros(0)
    error, jacobian = step_rows(model, rows, selection, q, qd, qdd, lam, f, True)
    np.testing.assert_allclose(error, inverse_dynamics(model, q, qd, qdd) - selection @ f, atol=1e-12)
    assert jacobian.shape == (n, 3 * n + 2)
    x = np.concatenate((q, qd, qdd, f))

    def rows_at(x: np.ndarray) -> np.ndarray:
        return step_rows(model, rows, selection, x[:n], x[n:2 * n], x[2 * n:3 * n], lam, x[3 * n:], False)[0]

    step = 1e-6
    numeric = np.column_stack([(rows_at(x + step * e) - rows_at(x - step * e)) / (2 * step) for e in np.eye(len(x))])
    np.testing.assert_allclose(jacobian, numeric, atol=1e-6 * max(1.0, np.abs(numeric).max()))
    assert step_rows(model, rows, selection, q, qd, qdd, lam, f, False)[1].shape == (0, 3 * n + 2)


def test_the_spatial_free_motion_balances_its_own_step_rows() -> None:
    """q̈ of free_accelerations zeroes d with no unknown forces; M q̈ = Q; M is the CRBA's; a tree has no
    loop rows and refuses to be asked for some."""
    model = load_spatial(URDF / "test_tree.urdf")
    n = model.n
    assert model.coordinate_names == model.joint_names and n == model.dof == len(model.joint_names)
    q, qd, _ = spatial_state(n, 11)
    qdd, lam = free_accelerations(model, q, qd)
    none = np.zeros((n, 0))
    assert lam.shape == (0,)
    np.testing.assert_allclose(step_rows(model, np.zeros(0, int), none, q, qd, qdd, lam, np.zeros(0), False)[0], 0.0,
                               atol=1e-10)
    np.testing.assert_allclose(mass_matrix(model, q) @ qdd, generalized_forces(model, q, qd), atol=1e-10)
    np.testing.assert_array_equal(mass_matrix(model, q), crba(model, q))
    error, jacobian = constraint_rows(model, np.zeros(0, int), q, qd, qdd, True)
    assert error.shape == (0,) and jacobian.shape == (0, 3 * n)
    with pytest.raises(ValueError, match="has 0 loop rows, asked for rows \\[0, 1\\]"):
        constraint_rows(model, np.arange(2), q, qd, qdd, True)


def test_anything_else_is_not_a_model() -> None:
    with pytest.raises(TypeError, match="not a mechanism model: dict"):
        mass_matrix({}, np.zeros(1))
