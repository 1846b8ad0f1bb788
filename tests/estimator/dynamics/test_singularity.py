"""Near-singular poses: the five-bar with its couplers aligned against the geometry, and the
one-line warning of `mbstate forward`."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import MECHANISMS, cross, read_csv

from estimator.cli import main
from estimator.constraints import constraint_jacobian, constraint_values
from estimator.dynamics.singularity import NEAR_SINGULAR, near_singularity, singularity_ratios, unactuated_columns
from estimator.mechanism_file import load_mechanism

FIVE_BAR = MECHANISMS / "five_bar.yaml"
HEIGHT = math.sqrt(0.3**2 - 0.25**2)  # where the crank circles (radius 0.3 about (0, 0) and (0.5, 0)) meet


def five_bar_pose(b: tuple[float, float], c: tuple[float, float], d: tuple[float, float]) -> np.ndarray:
    """q = [B, C, D, left, right] of the five-bar (pivots A = (0, 0), E = (0.5, 0))."""
    return np.array([*b, *c, *d, math.atan2(b[1], b[0]), math.atan2(d[1], d[0] - 0.5)])


@pytest.mark.parametrize(("pose", "free_motion"), [
    # couplers folded onto each other (B = D): C turns about B with the cranks locked
    (five_bar_pose((0.25, HEIGHT), (0.25, HEIGHT + 0.5), (0.25, HEIGHT)), (1.0, 0.0)),
    # couplers stretched in line (C between B and D): C moves across the line
    (five_bar_pose((-0.25, HEIGHT), (0.25, HEIGHT), (0.75, HEIGHT)), (0.0, 1.0)),
])
def test_aligned_couplers_are_singular_for_the_cranks(pose, free_motion):
    """With the couplers aligned, moving C perpendicular to them leaves every constraint unchanged
    to first order while the cranks stay put: Φq[:, U] has that null vector and the measure is 0."""
    mech = load_mechanism(FIVE_BAR)
    assert np.abs(constraint_values(mech, pose)).max() < 1e-15
    columns = unactuated_columns(mech)
    motion = np.zeros(len(columns))
    motion[[2, 3]] = free_motion
    np.testing.assert_allclose(constraint_jacobian(mech, pose)[:, columns] @ motion, 0.0, atol=1e-15)
    ratios = singularity_ratios(mech, np.array([mech.q0, pose]))
    assert ratios[0] > 10 * NEAR_SINGULAR and ratios[1] < 1e-12


def test_no_near_singular_pose_gives_none():
    mech = load_mechanism(FIVE_BAR)
    assert near_singularity(mech, np.zeros(1), mech.q0[None]) is None


def test_forward_warns_once_at_the_pose_closest_to_aligned_couplers(tmp_path, capsys):
    """The five-bar released from rest passes its couplers through alignment several times; the
    one warning names the pose closest to singular, which is the sample where the couplers are
    closest to parallel (|sin| of their angle, from the written CSV), near t = 1.04 s."""
    out = tmp_path / "five_bar.csv"
    assert main(["forward", str(FIVE_BAR), "--t-end", "2", "--dt", "0.001", "--out", str(out)]) == 0
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("mbstate forward: warning: near-singular pose at t = ")
    warned = float(re.search(r"at t = ([0-9.]+) s", error).group(1))
    trajectory = read_csv(out)
    b, c, d = trajectory.q[:, 0:2], trajectory.q[:, 2:4], trajectory.q[:, 4:6]
    sine = np.array([abs(cross(u, w)) / (np.linalg.norm(u) * np.linalg.norm(w)) for u, w in zip(c - b, c - d)])
    assert warned == pytest.approx(trajectory.t[np.argmin(sine)], abs=5e-4)
    assert warned == pytest.approx(1.04, abs=0.01)


@pytest.mark.parametrize("name", ["fourbar_crank.yaml", "pendulum.yaml", "fourbar.yaml"])
def test_no_warning_away_from_singular_poses(tmp_path, capsys, name):
    assert main(["forward", str(MECHANISMS / name), "--t-end", "2", "--dt", "0.001",
                 "--out", str(tmp_path / "run.csv")]) == 0
    assert capsys.readouterr().err == ""
