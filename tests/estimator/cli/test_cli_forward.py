"""`mbstate forward` and `mbstate bench` through the CLI: output file, summary and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MECHANISMS, cli_exit_code, read_csv
from estimator.cli import main
from estimator.constraints import constraint_values
from estimator.mechanism_file import load_mechanism


@pytest.mark.parametrize("method", ["ali3", "lagrange", "rmatrix"])
def test_forward_writes_the_csv(tmp_path, capsys, method):
    out = tmp_path / "sub" / "run.csv"
    code = main(["forward", str(MECHANISMS / "fourbar_crank.yaml"), "--t-end", "0.05", "--dt", "0.001",
                 "--method", method, "--initial", "theta0=0.3", "--velocity", "theta0=1.5", "--out", str(out)])
    assert code == 0
    assert "written" in capsys.readouterr().out
    trajectory = read_csv(out)
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    assert trajectory.coordinate_names == mech.coordinate_names
    assert trajectory.q.shape == (51, mech.n) and trajectory.lam.shape == (51, mech.m)
    assert trajectory.q[0, 4] == pytest.approx(0.3) and trajectory.qd[0, 4] == pytest.approx(1.5)
    assert max(np.max(np.abs(constraint_values(mech, q))) for q in trajectory.q) < 1e-9


def test_gravity_override_changes_the_motion(tmp_path):
    runs = {}
    for gravity in ("0,-9.81", "0,0"):
        out = tmp_path / f"g{gravity}.csv"
        assert main(["forward", str(MECHANISMS / "pendulum.yaml"), "--t-end", "0.1", "--dt", "0.001",
                     "--gravity", gravity, "--out", str(out)]) == 0
        runs[gravity] = read_csv(out)
    assert np.allclose(runs["0,0"].q, runs["0,0"].q[0])  # at rest without gravity
    assert not np.allclose(runs["0,-9.81"].q, runs["0,-9.81"].q[0])


@pytest.mark.parametrize("args, message", [
    (["--t-end", "-1", "--dt", "0.001"], "--t-end: expected a positive number"),
    (["--t-end", "1", "--dt", "abc"], "--dt: expected a number"),
    (["--t-end", "1", "--dt", "0.001", "--method", "euler"], "--method: invalid choice"),
    (["--t-end", "1", "--dt", "0.001", "--gravity", "1,2,3"], "--gravity: expected two finite numbers"),
    (["--t-end", "1", "--dt", "0.001", "--initial", "theta0"], "--initial: expected NAME=VALUE"),
    (["--t-end", "1", "--dt", "0.001", "--initial", "nope=1"], "--initial: unknown coordinate 'nope'"),
    (["--t-end", "1", "--dt", "0.001", "--velocity", "nope=1"], "--velocity: unknown coordinate 'nope'"),
    (["--t-end", "1e9", "--dt", "1e-9"], "is 1e+18 steps, more than the 10,000,000 a forward run holds in memory"),
    (["--t-end", "1", "--dt", "0.001", "--initial", "theta0=1e300"],
     "--initial: expected a finite VALUE within ±1e+09"),
    (["--t-end", "2", "--dt", "0.2"], "the ali3 integration diverged: the state is not finite from t = 1.2 s on"),
    (["--t-end", "1", "--dt", "0.001", "--velocity", "theta0=1e4", "--method", "fg-ic"],
     "the smoother failed twice in a row, at step 3: Indeterminate linear system"),  # GTSAM's text on one line
])
def test_forward_argument_errors(tmp_path, capsys, args, message):
    assert cli_exit_code(["forward", str(MECHANISMS / "fourbar_crank.yaml"), *args, "--out", str(tmp_path / "x.csv")]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1


def test_forward_missing_file(tmp_path, capsys):
    code = main(["forward", str(tmp_path / "none.yaml"), "--t-end", "1", "--dt", "0.1", "--out", str(tmp_path / "x.csv")])
    assert code == 2
    assert "cannot read file" in capsys.readouterr().err


@pytest.mark.parametrize("path", sorted(MECHANISMS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_mechanism_simulates(tmp_path, path):
    """configs/mechanisms: each file loads, assembles and runs 0.1 s of forward dynamics."""
    out = tmp_path / "run.csv"
    assert main(["forward", str(path), "--t-end", "0.1", "--dt", "0.001", "--out", str(out)]) == 0
    trajectory = read_csv(out)
    assert np.all(np.isfinite(trajectory.q)) and len(trajectory.t) == 101
