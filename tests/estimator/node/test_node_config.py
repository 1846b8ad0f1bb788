"""Node configuration: the commented example loads, defaults, every wrong key fails at load with the
file and the key named, and the demo's packaged copies match the repository's configurations."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest
from conftest import MECHANISMS, REPO

from estimator.demo.cases import CASES
from estimator.errors import MbstateError
from estimator.node.config import LogParams, NodeParams, load_node_config
from estimator.online.config import EstimatorConfig

EXAMPLE = REPO / "configs" / "estimator" / "fourbar.yaml"
SENSORS = REPO / "configs" / "sensors" / "fourbar.yaml"


def test_the_commented_example_loads() -> None:
    config = load_node_config(EXAMPLE)
    assert config.mechanism_path.resolve() == (MECHANISMS / "fourbar_crank.yaml").resolve()
    assert config.sensors_path.resolve() == SENSORS.resolve()
    assert config.mech.coordinate_names == ("x1", "y1", "x2", "y2", "theta0")
    assert config.estimator.unknown_forces == ("motor",) and config.estimator.latency_budget_ms == 1.0
    assert config.node.sub == "tcp://127.0.0.1:5555" and config.node.control == "tcp://127.0.0.1:5557"
    assert config.node.log.path == "logs/fourbar-{start}.mbslog" and config.node.log.record_estimates


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "node.yaml"
    path.write_text(f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\nsensors: {SENSORS}\n{body}", encoding="utf-8")
    return path


def test_every_node_key_is_optional(tmp_path) -> None:
    config = load_node_config(write(tmp_path, ""))
    assert config.node == NodeParams() and config.node.log == LogParams()
    assert config.estimator.rate == 1000.0  # the estimator's own defaults


def test_log_rotation_keys(tmp_path) -> None:
    config = load_node_config(write(tmp_path, "node: {log: {rotate_mb: 50, rotate_minutes: null}}\n"))
    assert config.node.log.rotate_mb == 50.0 and config.node.log.rotate_minutes is None


def test_log_path_start_placeholder() -> None:
    params = LogParams(path="logs/run-{start}.mbslog")
    when = datetime.datetime(2025, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    assert params.resolved_path(when) == Path("logs/run-20250304T050607Z.mbslog")
    assert LogParams().resolved_path(when) is None


@pytest.mark.parametrize("body,match", [
    ("node: {queue: 0}", r"node\.queue: must be a whole number in \[1, 10000000\], got 0"),
    ("node: {queue: 100000000000000000000}", r"node\.queue: must be a whole number in \[1, 10000000\], got 1000"),
    ("node: {max_message_bytes: 1.0e+20}", r"node\.max_message_bytes: must be a whole number in \[64, 1073741824\], "
                                           r"got 1e\+20$"),
    ("node: {max_future_s: 1.0e+20}", r"node\.max_future_s: must be at most 86400, got 1e\+20$"),
    ("estimator: {lag: 1.0e+20}", r"estimator\.lag: must be at most 1e\+09, got 1e\+20$"),
    ("estimator: {lag: 1000000}", r"estimator\.lag: must be at most 100000, got 1000000$"),
    ("estimator: {rate: 1.0e+300}", r"estimator\.rate: must be at most 1e\+09, got 1e\+300$"),
    ("node: {drain: 2.5}", r"node\.drain: must be a whole number in \[1, 10000000\], got 2\.5"),
    ("node: {max_message_bytes: 10}", r"node\.max_message_bytes: must be a whole number in \[64, "),
    ("node: {max_future_s: -1}", r"node\.max_future_s: must be a positive number"),
    ("node: {status_period_s: fast}", r"node\.status_period_s: must be a finite number"),
    ("node: {sub: 'localhost:5555'}", r"node\.sub: must be a ZeroMQ endpoint"),
    ("node: {pub: 'tcp://127.0.0.1:5555'}", r"node\.pub: must differ from node\.sub \(both tcp://127\.0\.0\.1:5555\)"),
    ("node: {plot: 'tcp://127.0.0.1:5556'}", r"node\.plot: must differ from node\.pub \(both tcp://127\.0\.0\.1:5556\)"),
    ("node: {queu: 10}", r"node: unknown key queu"),
    ("node: {log: {path: ''}}", r"node\.log\.path: must be a file name or null"),
    ("node: {log: {flush_records: -3}}", r"node\.log\.flush_records: must be a whole number in \[1, 1000000\]"),
    ("node: {log: {record_estimates: yes please}}", r"node\.log\.record_estimates: must be true or false"),
    ("node: {log: {every: 1}}", r"node\.log: unknown key every"),
    ("node: {log: {rotate_mb: 0}}", r"node\.log\.rotate_mb: must be a positive number"),
    ("node: {log: {rotate_minutes: soon}}", r"node\.log\.rotate_minutes: must be a finite number"),
    ("node: [1, 2]", r"node: expected a map, got list"),
    ("estimator: {rate: -5}", r"estimator\.rate: must be a positive number"),
    ("estimator: {unknown_forces: [brake]}", r"estimator\.unknown_forces: unknown actuator 'brake'"),
    ("estimator: {lagg: 3}", r"estimator: unknown key lagg"),
    ("nodes: {}", r"\(top\): unknown key nodes"),
])
def test_a_wrong_configuration_fails_at_load_naming_file_and_key(tmp_path, body, match) -> None:
    with pytest.raises(MbstateError, match=f"^{tmp_path / 'node.yaml'}: {match}"):
        load_node_config(write(tmp_path, body + "\n"))


def test_missing_files_are_named(tmp_path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text("mechanism: nowhere.yaml\nsensors: x.yaml\n", encoding="utf-8")
    with pytest.raises(MbstateError, match=r"\(top\)\.mechanism: file not found: .*nowhere\.yaml"):
        load_node_config(path)
    with pytest.raises(MbstateError, match=r"absent\.yaml: cannot read"):
        load_node_config(tmp_path / "absent.yaml")
    path.write_text("sensors: x.yaml\n", encoding="utf-8")
    with pytest.raises(MbstateError, match=r"\(top\)\.mechanism: required text"):
        load_node_config(path)


def test_the_demo_ships_copies_of_the_repository_configurations() -> None:
    data = REPO / "estimator" / "data"
    originals = {"fourbar": {"mechanism": MECHANISMS / "fourbar_crank.yaml", "sensors": SENSORS, "estimator": EXAMPLE},
                 "panda": {"mechanism": MECHANISMS / "urdf" / "panda.urdf",
                           "sensors": REPO / "configs" / "sensors" / "panda_encoders.yaml",
                           "estimator": REPO / "configs" / "estimator" / "panda.yaml"},
                 "delta": {"mechanism": MECHANISMS / "urdf" / "delta.urdf", "sidecar": MECHANISMS / "urdf" / "delta.yaml",
                           "sensors": REPO / "configs" / "sensors" / "delta_platform_imu.yaml",
                           "estimator": REPO / "configs" / "estimator" / "delta.yaml"}}
    assert set(CASES) == set(originals)
    for case, files in originals.items():
        for key, name in CASES[case].files.items():
            assert (data / name).read_text(encoding="utf-8") == files[key].read_text(encoding="utf-8"), (
                f"estimator/data/{name} differs from {files[key].relative_to(REPO)}: copy it over")


def test_example_estimator_section_shows_the_defaults() -> None:
    """The fully commented example lists every estimator key with its default (house style): only
    ``unknown_forces`` differs, so the file cannot drift from estimator/online/config.py."""
    example = load_node_config(REPO / "configs" / "estimator" / "fourbar.yaml").estimator
    defaults = EstimatorConfig()
    differing = {f.name for f in dataclasses.fields(EstimatorConfig)
                 if getattr(example, f.name) != getattr(defaults, f.name)}
    assert differing == {"unknown_forces"}
