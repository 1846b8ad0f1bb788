"""Classical inverse dynamics against MSC Adams, a closed form and the power balance; CLI."""

from pathlib import Path

import numpy as np
import pytest
from conftest import read_csv, reference_file

from estimator.cli import main
from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics
from estimator.errors import MbstateError
from estimator.forces import kinetic_energy, potential_energy
from estimator.mechanism_file import load_mechanism

FOUR_BAR = reference_file("fourbars1-with-rel-angle.yaml")
CRANK_FILE = reference_file("fourbars1-with-rel-angle-trajectory.txt")
MASS, LENGTH, GRAVITY = 2.0, 1.5, 9.81


def write_pendulum(tmp_path: Path) -> Path:
    """A uniform rod pinned at the origin, its angle an absolute relative coordinate ``theta0``."""
    path = tmp_path / "pendulum.yaml"
    path.write_text(f"""
points:
  - {{x: 0, y: 0, fixed: true}}
  - {{x: {LENGTH}, y: 0}}
planar_bodies:
  - points: [0, 1]
    length: {LENGTH}
    mass: {MASS}
    I0: (1/3)*mass*length^2
    cog: [0.5*length, 0.0]
relative_coordinates:
  - type: RelativeAngleAbsoluteDOF
    points: [0, 1]
""")
    return path


def test_four_bar_matches_msc_adams():
    """Crank torque along the upstream trajectory; Adams reports the reaction (opposite sign)."""
    mech = load_mechanism(FOUR_BAR)
    samples = load_drive_trajectory(CRANK_FILE, 1)
    result = inverse_dynamics(mech, ["theta0"], samples.t, *samples.derivatives())
    adams = np.loadtxt(reference_file("InverseDynamics_4bars_MSC.tab"), comments="%")
    np.testing.assert_array_equal(adams[:, 0], samples.t)
    reference = -adams[:, 1]
    error = result.trajectory.forces["theta0"] - reference
    span = np.ptp(reference)
    rms_percent = 100.0 * np.sqrt(np.mean(error**2)) / span
    print(f"four-bar vs Adams: RMS {rms_percent:.4f} % of the torque range {span:.3f} N·m, "
          f"max {100.0 * np.max(np.abs(error)) / span:.4f} %, {1e3 * result.seconds_per_point:.3f} ms/point")
    assert rms_percent <= 0.02
    assert result.trajectory.forces["theta0"][0] == pytest.approx(66.0, abs=0.02)  # 44.145 static + 21.87 inertial
    # Adams' crank angle column [deg] is the same motion
    np.testing.assert_allclose(np.rad2deg(result.trajectory.q[:, 4]), adams[:, 2], atol=1e-4)


def test_pendulum_torque_closed_form(tmp_path):
    """τ = I0 θ̈ + m g (L/2) cos θ for a rod driven at its pivot (gravity −y)."""
    mech = load_mechanism(write_pendulum(tmp_path))
    t = np.linspace(0.0, 2.0, 201)
    theta, omega, alpha = 0.3 + 0.5 * np.sin(3 * t), 1.5 * np.cos(3 * t), -4.5 * np.sin(3 * t)
    result = inverse_dynamics(mech, ["theta0"], t, theta[:, None], omega[:, None], alpha[:, None])
    inertia = MASS * LENGTH**2 / 3.0
    expected = inertia * alpha + MASS * GRAVITY * 0.5 * LENGTH * np.cos(theta)
    np.testing.assert_allclose(result.trajectory.forces["theta0"], expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(result.trajectory.q[:, :2], LENGTH * np.c_[np.cos(theta), np.sin(theta)], atol=1e-12)


def test_pick_and_place_power_balance():
    """Σ Q_d q̇_d = dT/dt + dV/dt (constraint forces do no work); d(T + V)/dt by the five-point
    central difference at dt = 1 ms, whose O(dt⁴) error is below 1e-7 of the power scale here (the
    three-point difference converges as dt², 1.4e-5 of the scale at this dt)."""
    mech = load_mechanism(reference_file("pick-and-place-robot.yaml"))
    start, amplitude, rate = mech.q0[-2:], np.array([0.25, -0.2]), np.array([np.pi, 2.0])
    t = np.linspace(0.0, 2.0, 2001)
    phase = rate * t[:, None]
    pos = start + amplitude * np.sin(phase)
    vel = amplitude * rate * np.cos(phase)
    acc = -amplitude * rate**2 * np.sin(phase)
    result = inverse_dynamics(mech, ["theta0", "theta1"], t, pos, vel, acc).trajectory
    drive = np.c_[result.forces["theta0"], result.forces["theta1"]]
    assert np.all(np.isfinite(drive)) and np.all(np.isfinite(result.lam))
    power = np.sum(drive * vel, axis=1)
    energy = np.array([kinetic_energy(mech, qd) + potential_energy(mech, q) for q, qd in zip(result.q, result.qd)])
    dt = t[1] - t[0]
    rate_of_energy = (energy[:-4] - 8.0 * energy[1:-3] + 8.0 * energy[3:-1] - energy[4:]) / (12.0 * dt)
    scale = np.max(np.abs(power))
    assert scale > 100.0
    np.testing.assert_allclose(power[2:-2], rate_of_energy, atol=1e-6 * scale)


def test_cli_writes_csv_and_summary(tmp_path, capsys):
    trajectory = tmp_path / "crank.txt"
    trajectory.write_text("".join(CRANK_FILE.read_text().splitlines(keepends=True)[:101]))
    out = tmp_path / "out.csv"
    code = main(["inverse", str(FOUR_BAR), "--trajectory", str(trajectory), "--drive", "theta0", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "100 points" in printed and "ms per point" in printed and "Q.theta0" in printed
    written = read_csv(out)
    assert written.q.shape == (100, 5) and written.lam.shape == (100, 4)
    assert written.forces["theta0"][0] == pytest.approx(66.0, abs=0.02)


@pytest.mark.parametrize(
    ("drive", "text", "problem"),
    [
        ("phi", "0 0\n1 0\n", "unknown coordinate 'phi'"),
        ("theta0", "0 0 0\n1 0 0\n", "expected 2 columns"),
        ("theta0", "0 0\n0 0\n", "time must increase"),
        ("x1", "0 2\n1 2\n", "at t = 0 s: cannot be assembled"),
        ("x1,theta0", "0 0 0\n1 0 0\n", "1 degree of freedom but 2 driven coordinates"),
        ("x1", "0 1.5\n1 1.5\n", "at t = 0 s: the driven coordinates (x1) do not fix the mechanism"),
        ("theta0,theta0", "0 0 0\n1 0 0\n", "repeated"),
    ],
)
def test_cli_errors_are_one_line_with_exit_code_2(tmp_path, capsys, drive, text, problem):
    trajectory = tmp_path / "drive.txt"
    trajectory.write_text(text)
    code = main(["inverse", str(write_pendulum(tmp_path)), "--trajectory", str(trajectory), "--drive", drive,
                 "--out", str(tmp_path / "out.csv")])
    error = capsys.readouterr().err
    assert code == 2 and problem in error and error.count("\n") == 1
    assert error.startswith("mbstate inverse: error:")


def test_cli_missing_trajectory_and_unknown_method(tmp_path, capsys):
    args = ["inverse", str(FOUR_BAR), "--trajectory", str(tmp_path / "absent.txt"), "--drive", "theta0",
            "--out", str(tmp_path / "out.csv")]
    assert main(args) == 2 and "cannot read trajectory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(args + ["--method", "bogus"])
    assert info.value.code == 2 and "invalid choice: 'bogus'" in capsys.readouterr().err


def test_drives_must_fix_the_mechanism():
    """Two coordinates whose values are tied by the constraints cannot both be driven."""
    mech = load_mechanism(FOUR_BAR)
    t = np.array([0.0, 0.1])
    with pytest.raises(MbstateError, match="degree"):
        inverse_dynamics(mech, ["x1", "theta0"], t, np.c_[[1.0, 1.0], [0.0, 0.0]], np.zeros((2, 2)), np.zeros((2, 2)))
