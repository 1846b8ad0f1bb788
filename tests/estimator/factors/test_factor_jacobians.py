"""Shared contract test of every factor: analytic Jacobians against central differences, the GTSAM
adapter's linearization against the numpy error function, and the compiled step rows against the
numpy reference forms.

States come from a simulated configuration (position, velocity and acceleration problems solved
with random driver inputs) and are then perturbed off the constraint manifold, as the optimizer's
iterates are; multipliers and actuator forces are random. Seeded throughout.
"""

from __future__ import annotations

from functools import cache

import gtsam
import numpy as np
import pytest
import yaml
from conftest import reference_file
from factor_catalog import ONLINE_BIAS, FactorSpec, factor_catalog, friction_coordinates
from reference_forms import (acceleration_constraint_error, inverse_dynamics_error, position_constraint_error,
                             velocity_constraint_error)

from estimator import kinematics
from estimator.dynamics.step_rows import constraint_rows, step_rows
from estimator.errors import MbstateError
from estimator.factors.adapter import gtsam_factor
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.dynamics_factors import actuator_selection
from estimator.lengths import body_length_terms
from estimator.mass import body_mass_terms
from estimator.mechanism_file import build_mechanism
from estimator.model import Mechanism

DT = 0.005
# Force elements and actuators added to the reference files so that ∂Q/∂q, ∂Q/∂q̇ and E are exercised.
EXTRAS = {
    "fourbars1-with-rel-angle.yaml": {
        "forces": [{"type": "spring", "points": [1, 3], "k": 50.0, "c": 3.0},
                   {"type": "damper", "points": [0, 2], "c": 2.0},
                   {"type": "torsional_spring", "coordinate": "theta0", "k": 5.0, "c": 0.5},
                   {"type": "torque", "body": 1, "value": 2.0}],
        "actuators": [{"coordinate": "theta0"}],
        "drivers": ["theta0"],
    },
    "pick-and-place-robot.yaml": {
        "forces": [{"type": "spring", "points": [5, 0], "k": 20.0, "c": 1.0},
                   {"type": "torque", "body": 3, "value": -1.5}],
        "actuators": [{"coordinate": "theta0"}, {"coordinate": "theta1"}],
        "drivers": ["theta0", "theta1"],
    },
}
FACTORS = ("prior", "trapezoidal", "position_constraint", "velocity_constraint", "acceleration_constraint",
           "multiplier_dynamics", "forward_dynamics", "reduced_dynamics", "adams_moulton3", "adams_moulton4_z",
           "dependent_step", "independent_step", "inverse_dynamics", "driven_step", "online_dynamics_rows",
           "online_dynamics_rows_gravity", "online_dynamics_rows_masses", "online_dynamics_rows_lengths",
           "online_dynamics_rows_friction",
           "online_kinematic_rows", "online_kinematic_rows_lengths")
# Central differences with step h have truncation error O(h^2 |e'''|) and round-off O(eps |e| / h); at
# h = 1e-6 both stay below 1e-9 relative for these smooth, O(1)-scaled functions (observed <= 3e-9).
# The tolerance 1e-7 * (1 + max|J|) keeps a margin of 30 while any wrong or missing term (O(1)) fails.
STEP, TOLERANCE = 1e-6, 1e-7


@cache
def mechanism(file: str) -> Mechanism:
    document = yaml.safe_load(reference_file(file).read_text())
    extras = EXTRAS[file]
    document["forces"], document["actuators"] = extras["forces"], extras["actuators"]
    return build_mechanism(document, file)


@cache
def assembled(file: str) -> np.ndarray:
    mech = mechanism(file)
    drivers = [mech.index(c) for c in EXTRAS[file]["drivers"]]
    return kinematics.solve_position_problem(mech, mech.q0, drivers)


def states(file: str, seed: int) -> dict[str, np.ndarray]:
    """Variables of two consecutive steps: a consistent state plus perturbations."""
    mech, rng = mechanism(file), np.random.default_rng(seed)
    drivers = [mech.index(c) for c in EXTRAS[file]["drivers"]]
    q = kinematics.solve_position_problem(mech, assembled(file) + 0.05 * rng.normal(size=mech.n), drivers)
    qd = kinematics.solve_velocity_problem(mech, q, rng.normal(size=len(drivers)), drivers)
    qdd = kinematics.solve_acceleration_problem(mech, q, qd, rng.normal(size=len(drivers)), drivers)
    dof, size = kinematics.degrees_of_freedom(mech, q), {"l": mech.m, "f": len(mech.actuators)}
    values = {"q": q + 1e-3 * rng.normal(size=mech.n), "v": qd + 1e-2 * rng.normal(size=mech.n),
              "a": qdd + 1e-2 * rng.normal(size=mech.n), "l": rng.normal(size=mech.m),
              "f": rng.normal(size=size["f"]), "zdd": rng.normal(size=dof)}
    values["x"] = np.concatenate((values["q"], values["v"], values["a"], values["f"], rng.normal(size=ONLINE_BIAS),
                                  values["l"]))
    values["xg"] = np.concatenate((values["q"], values["v"], values["a"], values["f"], rng.normal(size=1),
                                   rng.normal(size=ONLINE_BIAS), values["l"]))
    masses = len(body_mass_terms(mech).names)
    values["xgm"] = np.concatenate((values["q"], values["v"], values["a"], values["f"], rng.normal(size=1 + masses),
                                    rng.normal(size=ONLINE_BIAS), values["l"]))
    lengths = len(body_length_terms(mech, range(mech.m)).names)
    values["xgml"] = np.concatenate((values["q"], values["v"], values["a"], values["f"],
                                     rng.normal(size=1 + masses), 0.05 * rng.normal(size=lengths),
                                     rng.normal(size=ONLINE_BIAS), values["l"]))
    values["xgmlc"] = np.concatenate((values["q"], values["v"], values["a"], values["f"],
                                      rng.normal(size=1 + masses), 0.05 * rng.normal(size=lengths),
                                      rng.normal(size=len(friction_coordinates(mech.n))), rng.normal(size=ONLINE_BIAS),
                                      values["l"]))
    values["xl"] = np.concatenate((values["q"], values["v"], values["a"], values["f"], 0.05 * rng.normal(size=lengths),
                                   rng.normal(size=ONLINE_BIAS), values["l"]))
    for kind in list(values):
        values[kind + "+"] = values[kind] + 1e-2 * rng.normal(size=values[kind].shape)
        values[kind + "-"] = values[kind] - 1e-2 * rng.normal(size=values[kind].shape)
        values[kind + "--"] = values[kind + "-"] - 1e-2 * rng.normal(size=values[kind].shape)
    return values


def spec_named(file: str, name: str) -> FactorSpec:
    return next(s for s in factor_catalog(mechanism(file), assembled(file), DT) if s.name == name)


def central_differences(spec: FactorSpec, values: list[np.ndarray], step: float) -> list[np.ndarray]:
    columns: list[list[np.ndarray]] = [[] for _ in values]
    for i, x in enumerate(values):
        for j in range(x.shape[0]):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[i][j] += step
            minus[i][j] -= step
            columns[i].append((spec.fn(*plus, jac=False)[0] - spec.fn(*minus, jac=False)[0]) / (2.0 * step))
    return [np.array(c).T for c in columns]


def test_catalog_lists_every_factor() -> None:
    for file in EXTRAS:
        assert tuple(s.name for s in factor_catalog(mechanism(file), assembled(file), DT)) == FACTORS


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", FACTORS)
@pytest.mark.parametrize("file", list(EXTRAS))
def test_jacobians_match_central_differences(file: str, name: str, seed: int) -> None:
    spec, state = spec_named(file, name), states(file, seed)
    values = [state[v] for v in spec.variables]
    error, jacobians = spec.fn(*values)
    np.testing.assert_allclose(spec.fn(*values, jac=False)[0], error, rtol=0, atol=1e-12)
    assert len(jacobians) == len(values)
    for variable, analytic, numeric in zip(spec.variables, jacobians, central_differences(spec, values, STEP)):
        assert analytic.shape == (error.shape[0], state[variable].shape[0])
        scale = 1.0 + np.abs(numeric).max()
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * scale, err_msg=f"d e / d {variable}")


@pytest.mark.parametrize("name", FACTORS)
@pytest.mark.parametrize("file", list(EXTRAS))
def test_gtsam_linearization_matches_error_function(file: str, name: str) -> None:
    spec, state = spec_named(file, name), states(file, 2)
    values = [state[v] for v in spec.variables]
    error, jacobians = spec.fn(*values)
    keys = spec.keys(7)
    graph_values = gtsam.Values()
    for key, value in zip(keys, values):
        graph_values.insert(key, value)
    factor = gtsam_factor(gtsam.noiseModel.Unit.Create(error.shape[0]), keys, spec.fn)
    whitened, rhs = factor.linearize(graph_values).jacobian()
    # Unit noise: whitening is the identity and GTSAM stores b = -e; plain copies, hence 1e-12.
    np.testing.assert_allclose(whitened, np.hstack(jacobians), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rhs, -error, rtol=0, atol=1e-12)
    assert factor.error(graph_values) == pytest.approx(0.5 * error @ error, rel=1e-12)


def test_inverse_dynamics_needs_actuated_coordinates() -> None:
    pendulum = build_mechanism(yaml.safe_load(reference_file("pendulum1.yaml").read_text()), "pendulum1.yaml")
    with pytest.raises(MbstateError, match="actuated coordinates"):
        actuator_selection(pendulum)
    assert actuator_selection(pendulum, [1]).tolist() == [[0.0], [1.0]]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("file", list(EXTRAS))
def test_compiled_step_rows_match_the_numpy_reference_forms(file: str, seed: int) -> None:
    """Second formulation: the rows of estimator.dynamics.step_rows (compiled, row by row over an
    independent subset S of the constraint rows; the pick-and-place robot has redundant rows) against
    the numpy reference forms over all rows, restricted to S. The same sums in another order: equal
    to round-off."""
    mech, state = mechanism(file), states(file, seed)
    rows = independent_constraint_rows(mech, assembled(file))
    selection = actuator_selection(mech)
    q, qd, qdd, f = state["q"], state["v"], state["a"], state["f"]
    lam = np.zeros(mech.m)
    lam[rows] = state["l"][rows]
    n, size = mech.n, len(rows)
    position, [p_q] = position_constraint_error(mech, q)
    velocity, [v_q, v_qd] = velocity_constraint_error(mech, q, qd)
    acceleration, [a_q, a_qd, a_qdd] = acceleration_constraint_error(mech, q, qd, qdd)
    dynamics, [d_q, d_qd, d_qdd, d_lam, d_f] = inverse_dynamics_error(mech, selection, q, qd, qdd, lam, f)
    zeros = np.zeros((size, n))
    constraint = np.concatenate((position[rows], velocity[rows], acceleration[rows]))
    d_constraint = np.block([[p_q[rows], zeros, zeros], [v_q[rows], v_qd[rows], zeros],
                             [a_q[rows], a_qd[rows], a_qdd[rows]]])
    error, jacobian = constraint_rows(mech.arrays, rows, q, qd, qdd, True)
    np.testing.assert_allclose(error, constraint, rtol=0, atol=1e-12 * (1 + np.abs(constraint).max()))
    np.testing.assert_allclose(jacobian, d_constraint, rtol=0, atol=1e-12 * (1 + np.abs(d_constraint).max()))
    expected = np.concatenate((constraint[:2 * size], dynamics, constraint[2 * size:]))
    d_expected = np.zeros((3 * size + n, 3 * n + size + selection.shape[1]))
    d_expected[:2 * size, :3 * n] = d_constraint[:2 * size]
    d_expected[2 * size:2 * size + n] = np.hstack((d_q, d_qd, d_qdd, d_lam[:, rows], d_f))
    d_expected[2 * size + n:, :3 * n] = d_constraint[2 * size:]
    error, jacobian = step_rows(mech.arrays, rows, selection, q, qd, qdd, lam[rows], f, True)
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-12 * (1 + np.abs(expected).max()))
    np.testing.assert_allclose(jacobian, d_expected, rtol=0, atol=1e-12 * (1 + np.abs(d_expected).max()))
