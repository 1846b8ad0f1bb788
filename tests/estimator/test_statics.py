"""Static equilibrium and its stability: closed forms, a virtual-work check, Jacobians, CLI."""

import math

import numpy as np
import pytest
import yaml

from conftest import cli_exit_code, reference_file
from estimator.cli import main
from estimator.dynamics.inverse import inverse_dynamics
from estimator.dynamics.statics import (HELD, STABLE, UNSTABLE, EquilibriumError, equilibrium_jacobian,
                                        equilibrium_residual, solve_statics)
from estimator.errors import MbstateError
from estimator.forces import potential_energy
from estimator.kinematics import solve_position_problem
from estimator.mechanism_file import build_mechanism, load_mechanism

FOUR_BAR = reference_file("fourbars1-with-rel-angle.yaml")
MASS, LENGTH, GRAVITY = 3.0, 2.0, 9.81
WEIGHT_MOMENT = MASS * GRAVITY * LENGTH / 2  # m g L/2 [N·m]


def pendulum(angle: float, forces: list | None = None) -> dict:
    """A uniform rod pinned at the origin, drawn at ``angle``; its angle is coordinate ``theta0``."""
    return {
        "points": [{"x": 0, "y": 0, "fixed": True}, {"x": LENGTH * math.cos(angle), "y": LENGTH * math.sin(angle)}],
        "planar_bodies": [{"points": [0, 1], "length": LENGTH, "mass": MASS, "I0": "(1/3)*mass*length^2",
                           "cog": ["0.5*length", 0.0]}],
        "relative_coordinates": [{"type": "RelativeAngleAbsoluteDOF", "points": [0, 1]}],
        "forces": forces or [],
    }


def tangent_eigenvalue(second_derivative: float) -> float:
    """The reduced-stiffness eigenvalue of a pendulum: along the unit tangent of the constraint
    manifold, q'(θ) = (−L sin θ, L cos θ, 1) of norm √(L² + 1), it is V''(θ) / (L² + 1)."""
    return second_derivative / (LENGTH**2 + 1.0)


def test_torsional_spring_equilibrium_closed_form():
    """k θ = −m g (L/2) cos θ (rest angle 0), solved here by a scalar Newton."""
    stiffness = 40.0
    mech = build_mechanism(pendulum(0.3, [{"type": "torsional_spring", "coordinate": "theta0", "k": stiffness}]))
    theta = 0.0
    for _ in range(50):
        theta -= (stiffness * theta + WEIGHT_MOMENT * math.cos(theta)) / (stiffness - WEIGHT_MOMENT * math.sin(theta))
    result = solve_statics(mech)  # stops at |residual| <= 1e-10 · max|Q|: θ to ~1e-10
    assert result.q[2] == pytest.approx(theta, abs=1e-10)
    np.testing.assert_allclose(result.q[:2], LENGTH * np.array([math.cos(theta), math.sin(theta)]), atol=1e-10)
    assert result.stable and result.verdict == STABLE
    expected = tangent_eigenvalue(stiffness - WEIGHT_MOMENT * math.sin(theta))
    np.testing.assert_allclose(result.eigenvalues, [expected], rtol=1e-10)


def test_hanging_pendulum_is_stable():
    result = solve_statics(build_mechanism(pendulum(-1.2)))
    np.testing.assert_allclose(result.q, [0.0, -LENGTH, -math.pi / 2], atol=1e-12)
    assert result.stable and result.verdict == STABLE
    np.testing.assert_allclose(result.eigenvalues, [tangent_eigenvalue(WEIGHT_MOMENT)], rtol=1e-10)


def test_inverted_pendulum_is_not_a_minimum():
    result = solve_statics(build_mechanism(pendulum(math.pi / 2)))
    np.testing.assert_allclose(result.q, [0.0, LENGTH, math.pi / 2], atol=1e-12)
    assert not result.stable and result.verdict == UNSTABLE
    np.testing.assert_allclose(result.eigenvalues, [tangent_eigenvalue(-WEIGHT_MOMENT)], rtol=1e-10)


def test_holding_torque_is_the_slope_of_the_potential():
    """Virtual work: the torque holding the four-bar crank at θ is dV/dθ along the assembled
    configurations (central difference, h = 1e-5: O(h²) error ~1e-9 N·m); the inverse dynamics at
    rest must give the same torque."""
    mech = load_mechanism(FOUR_BAR)
    theta, h = 0.7, 1e-5
    result = solve_statics(mech, {"theta0": theta})
    assert result.verdict == HELD and result.iterations == 0 and result.eigenvalues.size == 0

    def energy(angle: float) -> float:
        q = np.array(result.q)
        q[4] = angle
        return potential_energy(mech, solve_position_problem(mech, q, held=[4]))

    slope = (energy(theta + h) - energy(theta - h)) / (2 * h)
    assert result.held_forces["theta0"] == pytest.approx(slope, abs=1e-6)
    at_rest = inverse_dynamics(mech, ["theta0"], np.zeros(1), [[theta]], [[0.0]], [[0.0]]).trajectory
    assert result.held_forces["theta0"] == pytest.approx(at_rest.forces["theta0"][0], rel=1e-12)
    np.testing.assert_allclose(result.lam, at_rest.lam[0], rtol=1e-10)
    assert solve_statics(mech, {"theta0": 0.0}).held_forces["theta0"] == pytest.approx(44.145, abs=1e-9)


def test_equilibrium_jacobian_central_differences():
    """Analytic ∂r/∂(q_free, λ) against central differences (h = 1e-6) at a seeded random state off
    equilibrium of a four-bar with linear and torsional springs; the residual is smooth with
    entries ~1e2, so truncation (~h²) and round-off (~1e-16·1e2/h) stay below 1e-7."""
    document = yaml.safe_load(FOUR_BAR.read_text())
    document["forces"] = [{"type": "spring", "points": [1, 3], "k": 150.0, "c": 3.0, "length": 2.5},
                          {"type": "torsional_spring", "coordinate": "theta0", "k": 20.0, "angle": 0.4}]
    mech = build_mechanism(document)
    rng = np.random.default_rng(3)
    q = mech.q0 + rng.normal(scale=0.1, size=mech.n)
    lam = rng.normal(scale=10.0, size=mech.m)
    free = np.array([True, True, True, True, False])
    analytic = equilibrium_jacobian(mech, q, lam, free)
    x0, h = np.concatenate((q[free], lam)), 1e-6

    def residual(x):
        qx = q.copy()
        qx[free] = x[:4]
        return equilibrium_residual(mech, qx, x[4:], free)

    numeric = np.column_stack([(residual(x0 + h * e) - residual(x0 - h * e)) / (2 * h) for e in np.eye(len(x0))])
    np.testing.assert_allclose(analytic, numeric, atol=1e-7 * np.max(np.abs(analytic)))


def test_redundant_robot_equilibrium():
    """The pick-and-place robot (21 constraint rows, rank 20) hangs in a stable equilibrium."""
    mech = load_mechanism(reference_file("pick-and-place-robot.yaml"))
    result = solve_statics(mech)
    assert result.stable and len(result.eigenvalues) == 2
    free = np.ones(mech.n, dtype=bool)
    assert np.max(np.abs(equilibrium_residual(mech, result.q, result.lam, free))) < 1e-9


def test_no_equilibrium_raises():
    """A torque larger than the largest gravity moment leaves no equilibrium."""
    mech = build_mechanism(pendulum(0.2, [{"type": "coordinate_force", "coordinate": "theta0",
                                           "value": 3 * WEIGHT_MOMENT}]))
    with pytest.raises(EquilibriumError, match="static equilibrium not found"):
        solve_statics(mech)


def test_cli_prints_verdict_and_writes_csv(tmp_path, capsys):
    out = tmp_path / "eq.csv"
    assert main(["statics", str(FOUR_BAR), "--hold", "theta0=0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Q.theta0 = 44.145" in printed and f"stability: {HELD}" in printed and "multipliers:" in printed
    assert out.read_text().startswith("t,q.x1,")
    assert main(["statics", str(reference_file("pick-and-place-robot.yaml"))]) == 0
    assert f"stability: {STABLE}, smallest reduced-stiffness eigenvalue" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("hold", "problem"),
    [
        ("theta0", "--hold: expected NAME=VALUE, got 'theta0'"),
        ("theta0=abc", "--hold: expected NAME=VALUE, got 'theta0=abc'"),
        ("phi=1", "unknown coordinate 'phi'"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(capsys, hold, problem):
    assert cli_exit_code(["statics", str(FOUR_BAR), "--hold", hold]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mbstate statics: error:") and problem in error and error.count("\n") == 1


def test_cli_non_convergence(tmp_path, capsys):
    path = tmp_path / "pushed.yaml"
    path.write_text(yaml.safe_dump(pendulum(0.2, [{"type": "coordinate_force", "coordinate": "theta0",
                                                   "value": 3 * WEIGHT_MOMENT}])))
    assert main(["statics", str(path)]) == 2
    assert "static equilibrium not found" in capsys.readouterr().err


def test_impossible_hold_is_a_user_error():
    with pytest.raises(MbstateError, match="cannot be assembled"):
        solve_statics(load_mechanism(FOUR_BAR), {"x1": 5.0})
