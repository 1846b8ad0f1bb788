"""``mbstate lab`` (replay.lab): the suite file, the scores against a known error, and a small suite on
a two-worker Dask LocalCluster through the report."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from conftest import REPO, cli_exit_code
from estimator.errors import MbstateError
from estimator.forces import generalized_forces
from replay.lab import runner
from replay.lab.cells import run_cell, scores
from replay.lab.report import markdown_table, rows, true_model_error, write_report
from replay.lab.runner import run_cells
from replay.lab.suite import Cell, load_suite
from sensors.virtual import Truth

TINY = REPO / "tests" / "data" / "lab" / "tiny.yaml"
SHIPPED = sorted((REPO / "configs" / "lab").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_suites_load_with_their_models(path: Path) -> None:
    suite = load_suite(path)
    assert suite.cells()
    for scenario in suite.scenarios.values():
        truth, model = scenario.truth_mechanism(), scenario.model_mechanism()
        for name, offset in scenario.offset.items():
            i = truth.coordinate_names.index(name)
            assert model.q0[i] == pytest.approx(truth.q0[i] + offset)
        if scenario.gravity is not None:
            assert tuple(model.gravity) == scenario.gravity


def test_model_errors_reach_the_estimators_mechanism() -> None:
    scenario = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml").scenarios["all_errors"]
    truth, model = scenario.truth_mechanism(), scenario.model_mechanism()
    assert [b.mass for b in model.bodies] == pytest.approx([2.2, 7.2, 5.5])
    assert [b.length for b in model.bodies] == pytest.approx([2.02, 7.92, 5.05])
    assert [b.mass for b in truth.bodies] == pytest.approx([2.0, 8.0, 5.0])
    assert truth.q0[4] == pytest.approx(np.pi / 3)
    assert model.q0[4] == pytest.approx(np.pi / 3 + np.pi / 16)


def test_suite_errors_name_the_key(tmp_path: Path) -> None:
    text = TINY.read_text().replace("../../../configs", str(REPO / "configs"))
    bad = tmp_path / "suite.yaml"
    bad.write_text(text.replace("gravity: [0.0, -8.81]", "gravity: [0.0, -8.81], parameters: {spring: 1}"))
    with pytest.raises(MbstateError, match="model.parameters.spring: not a parameter"):
        load_suite(bad).scenarios["gravity_error"].model_mechanism()
    bad.write_text(text.replace("scored: [crank]", "scored: [rocker]"))
    with pytest.raises(MbstateError, match="unknown coordinate 'rocker'"):
        load_suite(bad)
    for friction, message in (("{rocker: 1.0}", "truth.friction: unknown coordinate 'rocker'"),
                              ("{crank: -1.0}", "truth.friction.crank: must be at least 0")):
        bad.write_text(text.replace("scored: [crank]", f"scored: [crank]\n    truth: {{friction: {friction}}}", 1))
        with pytest.raises(MbstateError, match=message):
            load_suite(bad)
    bad.write_text(text.replace("kind: error_ekf", "kind: dekf"))
    with pytest.raises(MbstateError, match="estimators.error_ekf.*kind"):
        load_suite(bad)
    bad.write_text(text.replace("duration: 1.0", "duration: 1.0e+9"))
    with pytest.raises(MbstateError, match="duration: must be at most 600"):
        load_suite(bad)
    bad.write_text(re.sub(r"mechanism: \S+", f"mechanism: {REPO / 'configs/mechanisms/urdf/ur5.urdf'}", text))
    with pytest.raises(MbstateError, match="model.gravity: a planar mechanism file's key, not a URDF's"):
        load_suite(bad)
    bad.write_text(text.replace("scored: [crank]", "scored: [crank]\n    truth: {payload: {link: crank, mass: 1, "
                                                    "com: [0, 0, 0]}}", 1))
    with pytest.raises(MbstateError, match="truth.payload: a URDF's key, not a planar mechanism file's"):
        load_suite(bad)


def test_scores_of_a_known_error() -> None:
    """Estimates = truth + 0.1 on q until t = 1, exact after: RMSE √(share) 0.1 whole, 0 after."""
    scenario = load_suite(TINY).scenarios["gravity_error"]
    mech = scenario.truth_mechanism()
    t = np.linspace(0.0, 2.0, 201)
    q = np.tile(mech.q0, (len(t), 1))
    q[:, 4] += 0.3 * t
    truth = Truth(t, q, np.full_like(q, 0.3), np.zeros_like(q), np.zeros((len(t), mech.m)), np.zeros((len(t), 0)))
    estimates = [SimpleNamespace(t=tk, q=qk + np.where(tk < 1.0, 0.1, 0.0), qd=np.full(mech.n, 0.3),
                                 qdd=np.zeros(mech.n), forces={}, sigma=None, model={})
                 for tk, qk in zip(t[::2], q[::2])]
    whole, after, series = scores(scenario, truth, estimates, {"crank"}, 1.0, (), [])
    share = np.mean(t[::2] < 1.0)
    assert whole["q"]["crank"] == pytest.approx(0.1 * np.sqrt(share))
    assert after["q"]["crank"] == pytest.approx(0.0, abs=1e-12)
    assert whole["qd"]["crank"] == pytest.approx(0.0, abs=1e-12) and series.sigma is None


def test_a_suite_on_a_two_worker_local_cluster(tmp_path: Path) -> None:
    suite = load_suite(TINY)
    cells = suite.cells()
    results = run_cells(suite.source, cells, workers=2, progress=False)
    assert [r.cell for r in results] == cells
    assert all(r.error is None and r.steps >= 190 for r in results)
    assert all(r.series is not None for r in results if r.cell.seed == 1)
    assert all(r.series is None for r in results if r.cell.seed == 2)
    ekf = [r for r in results if r.cell.estimator == "error_ekf"]
    assert all(r.rmse_after["q"]["crank"] < r.rmse["q"]["crank"] for r in ekf)  # the start error shrinks
    table = rows(suite, results)
    assert [(row.estimator, row.seeds) for row in table] == [("smoother", 2), ("error_ekf", 2)]
    assert "| gravity_error | coupler_gyro | error_ekf | crank |" in markdown_table(suite, table)
    page = write_report(suite, results, table, tmp_path / "report", "header")
    assert {p.name for p in page.parent.glob("*.png")} == {"track_gravity_error_coupler_gyro.png",
                                                           "rmse_gravity_error.png", "gravity_gravity_error.png",
                                                           "masses_gravity_error.png", "lengths_gravity_error.png",
                                                           "friction_gravity_error.png"}
    smoother = next(r for r in results if r.cell.estimator == "smoother" and r.series is not None)
    assert set(smoother.series.model) == {"gravity_error", "mass_error.crank", "mass_error.coupler",
                                          "mass_error.rocker", "length_error.crank", "length_error.coupler",
                                          "length_error.rocker", "friction.crank"}
    assert all(len(values) == len(smoother.series.t) for values in smoother.series.model.values())
    assert "error_ekf" in page.read_text()


def test_the_scenarios_own_model_errors() -> None:
    """g = 9.81/8.81 − 1; μ_b: masses 2, 8, 5 kg against the model's 2.2, 7.2, 5.5, as shares of 15 and 14.9 kg."""
    scenario = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml").scenarios["mass_error"]
    assert true_model_error(scenario, "gravity_error") == pytest.approx(9.81 / 8.81 - 1.0)
    for body, true, model in (("crank", 2.0, 2.2), ("coupler", 8.0, 7.2), ("rocker", 5.0, 5.5)):
        expected = (true / 15.0) / (model / 14.9) - 1.0
        assert true_model_error(scenario, f"mass_error.{body}") == pytest.approx(expected)


def test_the_scenarios_own_length_errors() -> None:
    """ℓ_b: bars 2, 8, 5 m against the model's 2.02, 7.92, 5.05."""
    scenario = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml").scenarios["all_errors"]
    for body, true, model in (("crank", 2.0, 2.02), ("coupler", 8.0, 7.92), ("rocker", 5.0, 5.05)):
        assert true_model_error(scenario, f"length_error.{body}") == pytest.approx(true / model - 1.0)


def test_the_scenarios_own_friction() -> None:
    """c: the truth's damper of 1 N·m·s/rad on the crank, which the model's file lacks; Q = −c q̇ there."""
    scenario = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml").scenarios["friction_error"]
    assert true_model_error(scenario, "friction.crank") == 1.0
    truth, frictionless = (s.truth_mechanism() for s in (scenario, dataclasses.replace(scenario, friction={})))
    qd = np.arange(1.0, 6.0)
    assert generalized_forces(truth, truth.q0, qd) - generalized_forces(frictionless, truth.q0, qd) == pytest.approx(
        [0.0, 0.0, 0.0, 0.0, -5.0])


def test_a_suite_changed_under_the_workers_is_an_error_naming_it(tmp_path: Path) -> None:
    """A worker reads the suite file again; a scenario, set or estimator gone from it is a one-line error."""
    changed = tmp_path / "suite.yaml"
    changed.write_text(TINY.read_text().replace("../../../configs", str(REPO / "configs")))
    for cell, named in ((Cell("all_errors", "coupler_gyro", "smoother", 1), "scenario 'all_errors'"),
                        (Cell("gravity_error", "crank_encoder", "smoother", 1), "sensor set 'crank_encoder'"),
                        (Cell("gravity_error", "coupler_gyro", "ukf", 1), "estimator 'ukf'")):
        with pytest.raises(MbstateError, match=f"no {named} any more .the file changed while the lab ran"):
            run_cell(changed, cell)


def test_cli_errors_are_one_line_and_exit_2(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 0.5)
    assert cli_exit_code(["lab", str(tmp_path / "missing.yaml")]) == 2
    assert cli_exit_code(["lab", str(TINY), "--estimator", "dekf"]) == 2
    assert cli_exit_code(["lab", str(TINY), "--workers", "0"]) == 2
    assert cli_exit_code(["lab", str(TINY), "--duration", "1e9"]) == 2
    assert cli_exit_code(["lab", str(TINY), "--scheduler", "localhost"]) == 2  # no port
    assert cli_exit_code(["lab", str(TINY), "--scheduler", "tcp://127.0.0.1:9"]) == 2  # nothing listens
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 6 and "unknown estimator 'dekf'" in lines[1] and "--workers" in lines[2]
    assert "--duration: at most 600 s" in lines[3]
    assert all("--scheduler" in line and "cannot connect" in line for line in lines[4:])


def test_a_trusted_model_whose_one_error_is_a_state_follows_the_crank_through_its_slow_turn() -> None:
    """The literature's four-bar, gravity 8.81 against 9.81, a coupler gyroscope: the crank creeps near its
    highest pose over 3–4.7 s, where every soft part of smoother_gravity (process noise, g's walk, the rest
    known to 0.02 rad/s, the model rows' σ) acts as process noise and leaves the newest step over the
    issue's bar of 2.7e-4 rad from 2 s on; with none of them (smoother_tight) it stays under it, nearer the
    causal reference (scripts/causal_reference.py). An experiment, not a default: docs/lab.md."""
    suite = REPO / "configs" / "lab" / "fourbar_benchmark.yaml"
    after = {name: run_cell(suite, Cell("gravity_error", "coupler_gyro", name, 1), duration=6.0,
                            keep_series=False).rmse_after["q"]["crank"]
             for name in ("smoother_gravity", "smoother_tight")}
    assert after["smoother_tight"] < 2.7e-4 < after["smoother_gravity"]


def test_states_for_every_error_keep_the_coupler_gyroscope_under_its_bar_with_a_relinearized_2_s_window(
        tmp_path: Path) -> None:
    """gravity_error (masses and lengths right), the coupler gyroscope, seed 2, from 2 s on: smoother_tight_lengths
    (rows tight; g, masses and lengths as states; a 2 s window, lag 400, every step its update moved linearized
    again) stays under the issue's bar of 2.73e-4 rad (2.51e-4 when measured); linearizing again only the
    window's newest and oldest steps (relinearize_threshold null) leaves 3.54e-4, and a 1 s window (lag 200)
    lets the masses drift some 3 % apart late in the run, 1.05e-3. docs/lab.md."""
    suite = REPO / "configs" / "lab" / "fourbar_benchmark.yaml"
    document = yaml.safe_load(suite.read_text())
    for scenario in document["scenarios"].values():  # the copy's paths, absolute
        scenario["mechanism"] = str((suite.parent / scenario["mechanism"]).resolve())
        scenario["sensors"] = {name: str((suite.parent / path).resolve()) for name, path in scenario["sensors"].items()}
    row = document["estimators"]["smoother_tight_lengths"]
    document["estimators"]["ends_only"] = {**row, "relinearize_threshold": None}
    document["estimators"]["one_second"] = {**row, "lag": 200}
    copy = tmp_path / "suite.yaml"
    copy.write_text(yaml.safe_dump(document))
    after = {name: run_cell(copy, Cell("gravity_error", "coupler_gyro", name, 2),
                            keep_series=False).rmse_after["q"]["crank"]
             for name in ("smoother_tight_lengths", "ends_only", "one_second")}
    assert after["smoother_tight_lengths"] < 3.0e-4 < min(after["ends_only"], after["one_second"])


def test_the_default_model_error_states_keep_the_crank_the_model_alone_loses() -> None:
    """all_errors (gravity, masses and lengths off), the coupler gyroscope alone, seed 1, 4 s: without the
    model-error states (`smoother_no_states`) the estimate takes the mirror branch near the linkage's highest
    pose from 1.7 s on, as both filters do, where the defaults (`smoother`: the gravity, mass, length and
    friction states) keep the crank. docs/lab.md."""
    suite = REPO / "configs" / "lab" / "fourbar_benchmark.yaml"
    after = {name: run_cell(suite, Cell("all_errors", "coupler_gyro", name, 1), duration=4.0,
                            keep_series=False).rmse_after["q"]["crank"]
             for name in ("smoother", "smoother_no_states")}
    assert after["smoother"] < 1e-2 and after["smoother_no_states"] > 0.5
