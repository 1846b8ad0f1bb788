"""Factor-graph inverse dynamics: MSC Adams (four-bar), the classical inverse dynamics (pick-and-place
robot, with its sharp stop-and-return), the driven-step factor's Jacobians, the CLI."""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import numpy as np
import pytest
from conftest import MECHANISMS, REPO, load_script, read_csv, reference_file

from estimator.cli import main
from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics
from estimator.errors import MbstateError
from estimator.factors.constraint_factors import independent_constraint_rows
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.step_bundle import dependent_step_error
from estimator.graph_dynamics.inverse import FGOptions, fg_inverse_dynamics
from estimator.kinematics import solve_acceleration_problem, solve_position_problem, solve_velocity_problem
from estimator.mechanism_file import load_mechanism

ROBOT_FILE = REPO / "configs" / "trajectories" / "pick_and_place.txt"
SCRIPT = REPO / "scripts" / "make_pick_and_place_trajectory.py"
ROBOT_DRIVES = ["theta0", "theta1"]


def trajectory_script():
    """The generator script as a module (its ``motion`` gives the exact drive derivatives)."""
    return load_script("make_pick_and_place_trajectory")


def adams_error(torque: np.ndarray) -> tuple[float, float]:
    """(RMS, max) of the crank torque error against Adams [% of the torque range]."""
    reference = -np.loadtxt(reference_file("InverseDynamics_4bars_MSC.tab"), comments="%")[:, 1]
    span = np.ptp(reference)
    error = torque - reference
    return 100 * np.sqrt(np.mean(error**2)) / span, 100 * np.max(np.abs(error)) / span


@pytest.fixture(scope="module")
def crank():
    samples = load_drive_trajectory(reference_file("fourbars1-with-rel-angle-trajectory.txt"), 1)
    return samples.t, samples.derivatives()


def test_four_bar_matches_msc_adams(crank):
    """Priors on the crank's fitted rates: the graph's blocks are square, so the staged solution is
    its optimum (one Gauss-Newton step confirms it) and equals the classical solution."""
    t, motion = crank
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    result = fg_inverse_dynamics(mech, ["theta0"], t, *motion)
    rms, worst = adams_error(result.trajectory.forces["theta0"])
    print(f"four-bar fg vs Adams: RMS {rms:.4f} %, max {worst:.4f} %, {result.seconds_per_point * len(t):.3f} s")
    assert rms <= 0.02 and result.iterations == 1
    assert result.trajectory.forces["theta0"][0] == pytest.approx(66.0, abs=0.02)
    classical = inverse_dynamics(mech, ["theta0"], t, *motion).trajectory
    np.testing.assert_allclose(result.trajectory.forces["theta0"], classical.forces["theta0"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.trajectory.lam, classical.lam, rtol=0, atol=1e-7)
    np.testing.assert_allclose(result.trajectory.q, classical.q, rtol=0, atol=1e-11)


def test_four_bar_with_trapezoidal_integrators(crank):
    """The paper's graph (no priors on the rates; velocities and accelerations from the sampled
    angles by trapezoidal integrators): second-order finite differences of 8-digit data, measured
    0.011 % RMS against Adams; its alternating null mode makes Cholesky fail, QR solves it."""
    t, motion = crank
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    result = fg_inverse_dynamics(mech, ["theta0"], t, *motion, FGOptions(drive_rates="integrators",
                                                                         factorization="QR"))
    rms, _ = adams_error(result.trajectory.forces["theta0"])
    assert rms <= 0.02
    with pytest.raises(MbstateError, match="factor graph: Indeterminate"):
        fg_inverse_dynamics(mech, ["theta0"], t[:200], *(x[:200] for x in motion),
                            FGOptions(drive_rates="integrators"))


@pytest.mark.parametrize("options", [FGOptions(), FGOptions(ordering="METIS", factorization="QR")])
def test_pick_and_place_matches_classical_through_the_sharp_turn(options):
    """Exact drive derivatives (the script's closed form) for both methods: the torques agree within
    0.5 % of range everywhere, around t = 2.5 s too, where they change steeply."""
    samples = load_drive_trajectory(ROBOT_FILE, 2)
    motion = trajectory_script().motion(samples.t)
    mech = load_mechanism(MECHANISMS / "pick_and_place.yaml")
    graph = fg_inverse_dynamics(mech, ROBOT_DRIVES, samples.t, *motion, options).trajectory
    classical = inverse_dynamics(mech, ROBOT_DRIVES, samples.t, *motion).trajectory
    turn = np.abs(samples.t - 2.5) <= 0.05
    for name in ROBOT_DRIVES:
        reference, torque = classical.forces[name], graph.forces[name]
        span = np.ptp(reference)
        assert np.ptp(reference[turn]) > 0.5 * span  # the steep change is in the reference
        assert np.max(np.abs(torque - reference)) <= 0.005 * span
        np.testing.assert_allclose(torque, reference, rtol=0, atol=1e-9 * span)  # measured ~1e-13
    # the graph's λ has no entry for the one redundant row (zero there; minimum norm in the classical method)
    assert np.sum(np.all(graph.lam == 0.0, axis=0)) == 1


def test_trajectory_file_is_the_scripts_output(tmp_path):
    out = tmp_path / "trajectory.txt"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, capture_output=True, cwd=REPO)
    assert out.read_text() == ROBOT_FILE.read_text()
    samples = load_drive_trajectory(out, 2)
    assert len(samples.t) == 1000 and samples.t[1] == pytest.approx(0.005)
    np.testing.assert_allclose(samples.values[0], [-0.75 * np.pi, -0.25 * np.pi], atol=1e-11)


def test_exact_derivatives_of_the_script():
    """Five-point central differences of the closed form (h = 1e-4 s, away from the turn where
    the rounding δ = 20 ms makes the O(h⁴) error large): agreement within 1e-6."""
    motion = trajectory_script().motion
    t, h = np.array([0.3, 1.2, 2.3, 3.1, 4.4]), 1e-4

    def diff(f, x):
        return (f(x - 2 * h) - 8 * f(x - h) + 8 * f(x + h) - f(x + 2 * h)) / (12 * h)

    np.testing.assert_allclose(diff(lambda x: motion(x)[0], t), motion(t)[1], atol=1e-6)
    np.testing.assert_allclose(diff(lambda x: motion(x)[1], t), motion(t)[2], atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_driven_step_jacobians_with_a_redundant_row_left_out(seed):
    """Central differences (h = 1e-6: truncation and round-off both below 1e-9 relative here) on
    the robot with S = the independent rows (the shared contract test keeps every row)."""
    mech, rng = load_mechanism(MECHANISMS / "pick_and_place.yaml"), np.random.default_rng(seed)
    driven = np.array([mech.index(name) for name in ROBOT_DRIVES])
    q = solve_position_problem(mech, mech.q0, list(driven))
    qd = solve_velocity_problem(mech, q, rng.normal(size=2), list(driven))
    qdd = solve_acceleration_problem(mech, q, qd, rng.normal(size=2), list(driven))
    rows = independent_constraint_rows(mech, q)
    values = [q + 1e-3 * rng.normal(size=mech.n), qd, qdd, rng.normal(size=len(rows)), rng.normal(size=2)]
    step_error = partial(dependent_step_error, mech, rows, actuator_selection(mech, driven))
    error, jacobians = step_error(*values)
    assert error.shape == (3 * len(rows) + mech.n,)
    step = 1e-6
    for i, (x, analytic) in enumerate(zip(values, jacobians)):
        numeric = np.empty_like(analytic)
        for j in range(x.shape[0]):
            plus, minus = [v.copy() for v in values], [v.copy() for v in values]
            plus[i][j] += step
            minus[i][j] -= step
            numeric[:, j] = (step_error(*plus, jac=False)[0] - step_error(*minus, jac=False)[0]) / (2 * step)
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=1e-7 * (1 + np.abs(numeric).max()))


def test_cli_method_fg(tmp_path, capsys):
    trajectory = tmp_path / "crank.txt"
    lines = reference_file("fourbars1-with-rel-angle-trajectory.txt").read_text().splitlines(keepends=True)
    trajectory.write_text("".join(lines[:101]))
    out = tmp_path / "out.csv"
    code = main(["inverse", str(MECHANISMS / "fourbar_crank.yaml"), "--trajectory", str(trajectory),
                 "--drive", "theta0", "--out", str(out), "--method", "fg", "--ordering", "METIS"])
    assert code == 0 and "(fg)" in capsys.readouterr().out
    written = read_csv(out)
    assert written.q.shape == (100, 5) and written.forces["theta0"][0] == pytest.approx(66.0, abs=0.02)


def test_errors_are_mbstate_errors():
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    t = np.array([0.0, 0.1])
    with pytest.raises(MbstateError, match="unknown ordering 'AMD'"):
        FGOptions(ordering="AMD")
    with pytest.raises(MbstateError, match="1 degree of freedom but 2 driven"):
        fg_inverse_dynamics(mech, ["x1", "theta0"], t, np.c_[[1.0, 1.0], [0.0, 0.0]], np.zeros((2, 2)),
                            np.zeros((2, 2)))
    with pytest.raises(MbstateError, match="at the first sample: cannot be assembled"):
        fg_inverse_dynamics(mech, ["x1"], t, np.full((2, 1), 3.0), np.zeros((2, 1)), np.zeros((2, 1)))
