"""``mbstate lab`` on a URDF arm (replay.lab): the scenario's truth with a payload and its model with the
link masses off, the keys a URDF takes and refuses, and a short run of the smoother with the payload
state beside the null-jerk filter, the errorEKF refusing the URDF as its cell's one-line error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import REPO
from estimator.errors import MbstateError
from estimator.model_protocol import start_configuration
from replay.lab.cells import run_cell
from replay.lab.report import markdown_table, rows, true_model_error
from replay.lab.suite import load_suite

SUITE = REPO / "tests" / "data" / "lab" / "panda_payload.yaml"


def test_the_truth_carries_the_payload_and_the_model_the_mass_error() -> None:
    suite = load_suite(SUITE)
    payload = suite.scenarios["payload"]
    truth, model = payload.truth_mechanism(), payload.model_mechanism()
    assert truth.total_mass == pytest.approx(model.total_mass + 0.1471044)
    assert start_configuration(truth)[1] == pytest.approx(-0.785)
    assert payload.start_velocity(truth)[[0, 1, 6]] == pytest.approx([0.5, -0.3, 1.0])
    assert true_model_error(payload, "payload.mass") == 0.1471044
    assert true_model_error(payload, "payload.com.z") == 0.15
    heavy = suite.scenarios["heavy_links"]
    truth, model = heavy.truth_mechanism(), heavy.model_mechanism()
    np.testing.assert_allclose(model.mass, 1.1 * truth.mass)
    np.testing.assert_allclose(model.inertia, 1.1 * truth.inertia)
    assert start_configuration(model)[1] == pytest.approx(start_configuration(truth)[1] + 0.01)


@pytest.mark.parametrize("old, new, message", (
    ("link: panda_link7, mass", "link: gripper, mass", "truth.payload.link: no link 'gripper' in panda"),
    ("mass: 0.1471044", "mass: -1", "truth.payload.mass: must be"),
    ("initial_velocity: {panda_joint1", "initial_velocity: {elbow", "initial_velocity: unknown coordinate 'elbow'"),
    ("mass_factor: 1.1", "mass_factor: 0", "model.mass_factor: must be"),
    ("{mass_factor: 1.1,", "{gravity: [0, -9], mass_factor: 1.1,", "model.gravity: a planar mechanism file's key"),
    ("smoother: {payload: panda_link7}", "smoother: {payload: panda_link9}", "payload: no link 'panda_link9'"),
))
def test_bad_keys_are_one_line_naming_them(tmp_path: Path, old: str, new: str, message: str) -> None:
    bad = tmp_path / "suite.yaml"
    bad.write_text(SUITE.read_text().replace("../../../configs", str(REPO / "configs")).replace(old, new, 1))
    with pytest.raises(MbstateError, match=message):
        load_suite(bad)


def test_the_smoother_with_the_payload_state_against_the_null_jerk_filter() -> None:
    """1 s of the free Panda with encoders and link IMUs: the smoother's q̇ and q̈ at least twice as good as the
    per-joint null-jerk filter's, its payload mass within 15 % from 0.5 s on (measured: −11 % to −1 %, the ten
    parameters still settling in a second of this gentler start; the issue's figure, 10 s and two seeds, is
    configs/lab/panda_payload.yaml's, docs/lab.md); the errorEKF's cell is its one-line refusal."""
    suite = load_suite(SUITE)
    results = {cell.estimator: run_cell(SUITE, cell) for cell in suite.cells(scenarios=["payload"])}
    smoother, null_jerk, ekf = results["smoother"], results["null_jerk"], results["error_ekf"]
    assert smoother.error is None and null_jerk.error is None and smoother.steps >= 950
    assert ekf.error is not None and "planar mechanism files" in ekf.error and "\n" not in ekf.error
    for quantity in ("qd", "qdd"):
        for name, rmse in smoother.rmse[quantity].items():
            assert rmse <= 0.5 * null_jerk.rmse[quantity][name], (quantity, name)
    assert smoother.payload_error < 0.15 and null_jerk.payload_error is None
    assert set(smoother.series.model) == {"payload.mass", "payload.com.x", "payload.com.y", "payload.com.z"}
    table = markdown_table(suite, rows(suite, list(results.values())))
    assert "payload m error ≥0.5 s" in table.splitlines()[0]
