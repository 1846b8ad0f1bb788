"""The model protocol's members that the online estimator asks (estimator.model_protocol): the planar
model answers with its own functions, bit for bit; a spatial tree answers without constraints, its
bodies' angular rates against the body-fixed recursion and central differences; a closed chain answers
with its loop closures (against central differences and its closed-chain dynamics), and the online
estimator takes it through them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.constraints import constraint_derivatives
from estimator.constraints import constraint_jacobian as planar_jacobian
from estimator.dynamics.forward import multipliers as planar_multipliers
from estimator.kinematics import (BodyAxes, independent_constraint_rows, motion_tangent, solve_position_problem,
                                  suggested_independent, tangent_basis)
from estimator.mass import body_mass_terms
from estimator.mechanism_file import load_mechanism
from estimator.model_protocol import (actuators, assemble, constraint_count, constraint_jacobian, constraints,
                                      coordinate_lengths, independent_coordinates, independent_rows, model_errors,
                                      multipliers, start_configuration, tangent_metric, total_mass, velocity_term)
from estimator.spatial.kinematics import angular_rates, body_kinematics
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.spatial.assembly import velocities as closed_velocities
from estimator.spatial.closed_dynamics import accelerations as closed_accelerations
from estimator.spatial.closed_dynamics import simulate as closed_simulate
from estimator.spatial.model import PRISMATIC, load_spatial
from replay.clocks import FixedClock
from sensors.config import build_sensors
from sensors.virtual import Truth, simulate_readings

URDF = REPO / "configs" / "mechanisms" / "urdf"


def test_the_planar_model_answers_the_estimators_members_with_its_own_functions() -> None:
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    rng = np.random.default_rng(5)
    q = solve_position_problem(mech, mech.q0)
    qd, qdd = rng.normal(size=mech.n), rng.normal(size=mech.n)
    assert actuators(mech) == tuple((a.name, a.coordinate) for a in mech.actuators)
    assert start_configuration(mech) is mech.q0 and constraint_count(mech) == mech.m
    phi, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    for mine, theirs in zip(constraints(mech, q), (phi, phi_q)):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(constraint_jacobian(mech, q), planar_jacobian(mech, q))
    np.testing.assert_array_equal(velocity_term(mech, q, qd), -phi_qq @ qd @ qd)
    np.testing.assert_array_equal(multipliers(mech, q, qd, qdd), planar_multipliers(mech, q, qd, qdd))
    np.testing.assert_array_equal(assemble(mech, mech.q0, [4]), solve_position_problem(mech, mech.q0, [4]))
    rows = independent_rows(mech, q)
    np.testing.assert_array_equal(rows, independent_constraint_rows(mech, q))
    assert independent_coordinates(mech, q, len(rows)) == suggested_independent(mech, q, len(rows))
    basis = tangent_basis(planar_jacobian(mech, q)[rows])
    np.testing.assert_array_equal(tangent_metric(mech)(q, basis), motion_tangent(mech, BodyAxes.of(mech), q, basis))
    lengths = np.ones(mech.n)
    lengths[mech.point_coordinates] = BodyAxes.of(mech).length
    np.testing.assert_array_equal(coordinate_lengths(mech), lengths)
    assert total_mass(mech) == sum(body.mass for body in mech.bodies)
    gravity, masses, lengths_terms = model_errors(mech, rows)
    assert gravity == bool(np.any(mech.gravity)) and masses.names == body_mass_terms(mech).names
    assert lengths_terms is not None


@pytest.mark.parametrize("robot", ["ur5", "test_tree"])
def test_a_tree_answers_without_constraints(robot: str) -> None:
    model = load_spatial(URDF / f"{robot}.urdf")
    n = model.n
    q, qd, qdd = np.random.default_rng(2).uniform(-1, 1, (3, n))
    assert actuators(model) == tuple((name, int(j)) for name, j in zip(model.actuator_names, model.actuated))
    np.testing.assert_array_equal(start_configuration(model), model.initial)
    assert constraint_count(model) == 0
    phi, phi_q = constraints(model, q)
    assert phi.shape == (0,) and phi_q.shape == (0, n) and constraint_jacobian(model, q).shape == (0, n)
    assert velocity_term(model, q, qd).shape == (0,) and multipliers(model, q, qd, qdd).shape == (0,)
    np.testing.assert_array_equal(assemble(model, q, [0]), q)
    assert independent_rows(model, q).shape == (0,) and independent_coordinates(model, q, 0) == list(range(n))
    gravity, masses, lengths = model_errors(model, ())
    assert not gravity and lengths is None and masses.names == tuple(model.link_names[i] for i in masses.links)
    assert set(masses.links) == set(np.flatnonzero(model.mass > 0.0))
    assert total_mass(model) == model.total_mass
    lengths = coordinate_lengths(model)
    assert np.all(lengths[model.kind != PRISMATIC] == 1.0) and np.all(lengths[model.kind == PRISMATIC] > 0.0)


def world_angular_velocities(model, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """(n, 3): each body's ω in world axes, R ωᵇ from the body-fixed recursion (66b): the second formulation."""
    kin = body_kinematics(model, q, qd, np.zeros(model.n))
    return np.einsum("bij,bj->bi", kin.rot, kin.twist[:, :3])


@pytest.mark.parametrize("robot", ["ur5", "test_tree", "panda", "delta"])
def test_the_angular_rates_are_the_body_fixed_twists_angular_velocities(robot: str) -> None:
    """W q̇ = R ωᵇ of every body (1e-12: two exact recursions, rounding only), and W = ∂ω/∂q̇ against
    central differences (ω is linear in q̇: the differences are exact to rounding, 1e-9)."""
    model = load_spatial(URDF / f"{robot}.urdf")
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, qd = rng.uniform(-np.pi, np.pi, model.n), rng.uniform(-2, 2, model.n)
        rates = angular_rates(model, q)
        np.testing.assert_allclose(rates @ qd, world_angular_velocities(model, q, qd).ravel(), atol=1e-12)
        step = 1e-3
        numeric = np.column_stack([(world_angular_velocities(model, q, qd + step * e)
                                    - world_angular_velocities(model, q, qd - step * e)).ravel() / (2 * step)
                                   for e in np.eye(model.n)])
        np.testing.assert_allclose(rates, numeric, atol=1e-9)


def test_the_tangent_metric_makes_the_bodies_angular_velocities_orthonormal() -> None:
    """UR5 (revolute joints): (W T)ᵀ W T = I, Σ_b |ω_b|² = |v|² for q̇ = T v; the test tree, whose prismatic
    joints turn nothing: T is still regular (those directions measured by their rate over the mean length)."""
    model = load_spatial(URDF / "ur5.urdf")
    q = np.random.default_rng(8).uniform(-np.pi, np.pi, model.n)
    turning = angular_rates(model, q) @ tangent_metric(model)(q, np.eye(model.n))
    np.testing.assert_allclose(turning.T @ turning, np.eye(model.n), atol=1e-10)
    tree = load_spatial(URDF / "test_tree.urdf")
    assert np.any(tree.kind == PRISMATIC)
    tangent = tangent_metric(tree)(np.zeros(tree.n), np.eye(tree.n))
    assert np.all(np.isfinite(tangent)) and np.linalg.matrix_rank(tangent) == tree.n


def test_a_closed_chain_answers_with_its_loop_closures() -> None:
    """The RSSR four-bar: Φ at the assembled pose is zero, Φq is Φ's central difference (step 1e-6, error
    O(h²) ~ 1e-12 against Φ's second derivatives of order 1), γ = −Φ̇q q̇ makes Φq q̈ = γ hold along the
    closed-chain KKT accelerations, λ balances Φqᵀλ = −RNEA(q, q̇, q̈) at those accelerations (no drive),
    the independent rows span Φq, the independent joints fix the others."""
    model = load_spatial(URDF / "rssr.urdf")
    q = assemble(model, start_configuration(model))
    phi, jac = constraints(model, q)
    assert constraint_count(model) == len(phi) and np.max(np.abs(phi)) < 1e-10
    h, eye = 1e-6, np.eye(model.n)
    numeric = np.column_stack([(constraints(model, q + h * e)[0] - constraints(model, q - h * e)[0]) / (2 * h)
                               for e in eye])
    np.testing.assert_allclose(jac, numeric, atol=1e-8)
    np.testing.assert_array_equal(constraint_jacobian(model, q), jac)
    qd = closed_velocities(model, q, np.array([1.3]), [int(model.actuated[0])])
    qdd, lam = closed_accelerations(model, q, qd, np.zeros(model.n))
    np.testing.assert_allclose(jac @ qdd, velocity_term(model, q, qd), atol=1e-9)
    np.testing.assert_allclose(jac.T @ multipliers(model, q, qd, qdd), jac.T @ lam, atol=1e-8)
    rows = independent_rows(model, q)
    assert np.linalg.matrix_rank(jac[rows]) == np.linalg.matrix_rank(jac) == len(rows)
    free = independent_coordinates(model, q, len(rows))
    dependent = [k for k in range(model.n) if k not in free]
    assert len(free) == model.n - len(rows) and np.linalg.matrix_rank(jac[rows][:, dependent]) == len(rows)


def test_the_online_estimator_takes_a_closed_chain() -> None:
    """The planar five-bar written as a 3D loop (five_bar_3d.urdf, revolute closure: 5 rows of rank 2),
    released at rest, read by encoders of 2^14 counts on its two cranks: the same estimator as on the
    planar files estimates all four joints, the cranks within a fifth of the quantum as the accuracy
    matrix's bar, the elbows (fixed by the loop) within the quantum."""
    model = load_spatial(URDF / "five_bar_3d.urdf")
    q0 = assemble(model, start_configuration(model))
    truth = Truth.from_trajectory(model, closed_simulate(model, q0, np.zeros(model.n), 1e-3, 400))
    document = {"sensors": {f"{joint}_encoder": {"kind": "encoder", "joint": joint, "counts": 16384, "rate": 1000}
                            for joint in ("left", "right")}}
    sensors = build_sensors(document, model, "test")
    estimator = OnlineEstimator(model, sensors, EstimatorConfig(rate=1000.0), FixedClock())
    errors = []
    for reading in simulate_readings(sensors.sensors, truth, 3):
        estimator.add(reading)
        errors += [estimate.q - truth.q[int(round(estimate.t * 1000))] for estimate in estimator.advance(reading.t)]
    rmse = np.sqrt(np.mean(np.square(errors), axis=0))
    quantum = 2 * np.pi / 16384
    assert len(errors) > 300 and estimator.counters["reinitializations"] == 0
    cranks = [model.joint_names.index(name) for name in ("left", "right")]
    assert np.all(rmse[cranks] < quantum / 5) and np.all(rmse < quantum)
