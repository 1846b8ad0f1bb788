"""Static equilibrium and its stability: closed forms, a virtual-work check, Jacobians, CLI."""

import math

import numpy as np
import pytest
import yaml

from conftest import MECHANISMS, angle_between, cli_exit_code, cross, reference_file
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


def test_double_pendulum_held_shoulder_stays_on_the_files_branch(capsys):
    """Shoulder held at 0.5 rad from the horizontal drawing (elbow 0): the lower rod ends vertical
    and the elbow coordinate is the rods' relative angle on the file's turn (within π of 0), not a
    half or whole turn off; the holding torque is that of both weights, (m1/2 + m2) g L1 cos 0.5."""
    mech = load_mechanism(MECHANISMS / "double_pendulum.yaml")
    elbow = mech.index("elbow")
    result = solve_statics(mech, {"shoulder": 0.5})
    upper, lower = result.q[0:2], result.q[2:4] - result.q[0:2]
    assert result.q[elbow] == pytest.approx(angle_between(upper, lower), abs=1e-12)
    assert abs(result.q[elbow] - mech.q0[elbow]) < math.pi
    assert lower[0] == pytest.approx(0.0, abs=1e-10)  # vertical: the only equilibria of the free rod
    assert result.stable == (lower[1] < 0)  # hanging is the stable one
    free = np.array([name != "shoulder" for name in mech.coordinate_names])
    assert np.max(np.abs(equilibrium_residual(mech, result.q, result.lam, free))) < 1e-9
    assert result.held_forces["shoulder"] == pytest.approx((0.5 + 0.8) * GRAVITY * math.cos(0.5), rel=1e-12)
    assert main(["statics", str(MECHANISMS / "double_pendulum.yaml"), "--hold", "shoulder=0.5"]) == 0
    assert f"elbow = {result.q[elbow]:.10g}" in capsys.readouterr().out


def test_start_with_singular_stiffness_is_damped():
    """The double pendulum drawn horizontal: the potential's second derivative along the motion is
    zero there, so the plain Newton step is undefined; the damped steps descend to the hanging pose."""
    mech = load_mechanism(MECHANISMS / "double_pendulum.yaml")
    result = solve_statics(mech)
    assert result.stable
    np.testing.assert_allclose(result.q, [0.0, -1.0, 0.0, -1.8, -math.pi / 2, 0.0], atol=1e-10)


def test_crank_four_bar_equilibrium_stays_on_the_files_branch():
    """Nothing held: the crank angle ends within π of the file's (it used to come out 2π off), the
    crank pin where the angle says, the rocker on the file's assembly branch, and the potential is
    stationary along the mechanism's motion there (central difference of V, h = 1e-5)."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    theta = mech.index("theta0")
    result = solve_statics(mech)
    angle = result.q[theta]
    assert abs(angle - mech.q0[theta]) < math.pi
    np.testing.assert_allclose(result.q[:2], [math.cos(angle), math.sin(angle)], atol=1e-12)

    def branch(q):
        return np.sign(cross(q[2:4] - q[0:2], np.array([4.0, 0.0]) - q[2:4]))

    assert branch(result.q) == branch(mech.q0)

    def energy(a: float) -> float:
        q = result.q.copy()
        q[theta] = a
        return potential_energy(mech, solve_position_problem(mech, q, held=[theta]))

    h = 1e-5
    assert (energy(angle + h) - energy(angle - h)) / (2 * h) == pytest.approx(0.0, abs=1e-6)
    assert solve_statics(mech, {"theta0": angle}).held_forces["theta0"] == pytest.approx(0.0, abs=1e-8)


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
