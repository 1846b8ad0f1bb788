"""What a log records about its mechanism and sensors, and replay's check of it against the
configuration: one line and exit code 2 for a log of another mechanism or other sensors, a note for
other parameters, a warning for a log that records nothing to compare; the node's own check of its
sensor file against its mechanism."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import pytest
from conftest import MECHANISMS, REPO, cli_exit_code
from node_harness import SENSORS, encoder

from estimator.logfile import LogWriter
from estimator.node.config import load_node_config
from estimator.node.recorded_for import model_parameters, setup_header

CONFIG = REPO / "configs" / "estimator" / "fourbar.yaml"


def fourbar_header() -> dict:
    """The header the node writes for configs/estimator/fourbar.yaml (what it is recorded for)."""
    config = load_node_config(CONFIG)
    return setup_header(config.mech, config.sensors, config.mechanism_path, config.sensors_path)


def replayed(tmp_path, capsys, header: dict, readings: list[dict]) -> tuple[int, str]:
    """``mbstate replay`` of a log with ``header`` and ``readings`` against the four-bar configuration:
    (exit code, stderr)."""
    log = tmp_path / "run.log"
    with LogWriter(log, header) as writer:
        for reading in readings:
            writer.reading(reading)
    capsys.readouterr()
    code = cli_exit_code(["replay", str(log), "--config", str(CONFIG), "--out", str(tmp_path / "est.csv"), "--quiet"])
    return code, capsys.readouterr().err


def test_the_model_parameters_are_the_file_s_values() -> None:
    """configs/mechanisms/fourbar_crank.yaml: coupler 2 kg, 2 m, I0 = m L²/3; rocker √13 m from (1, 2)
    to the fixed pivot B (4, 0); gravity along −y; no springs or loads."""
    config = load_node_config(CONFIG)
    parameters = model_parameters(config.mech)
    assert parameters["gravity"] == [0.0, -9.81]
    assert parameters["mass of coupler"] == [2.0] and parameters["length of coupler"] == [2.0]
    assert parameters["inertia of coupler"] == pytest.approx([2.0 * 2.0**2 / 3.0])
    assert parameters["length of rocker"] == pytest.approx([math.sqrt(13.0)])
    rocker = parameters["constraint rocker: distance 2-3"]
    assert rocker[0] == pytest.approx(13.0) and rocker[-2:] == [4.0, 0.0]  # squared length; B's x, y
    assert parameters["constant forces"] == [0.0] * 5 and parameters["springs"] == []


def without(key: str) -> Callable[[dict], None]:
    return lambda header: header.pop(key)


def setting(path: tuple, value) -> Callable[[dict], None]:
    def edit(header: dict) -> None:
        entry = header
        for key in path[:-1]:
            entry = entry[key]
        entry[path[-1]] = value
    return edit


LENGTHS = "crank: distance 0-1, coupler: distance 1-2, rocker: distance 2-3"


@pytest.mark.parametrize("edit, code, line", [
    (setting(("constraints",), LENGTHS.split(", ")), 2,
     f"mbstate replay: error: {{log}}: recorded for mechanism fourbar_crank.yaml with constraints {LENGTHS}; "
     f"the config's mechanism fourbar_crank.yaml has {LENGTHS}, theta0: angle"),
    (setting(("sensors", "sensors", "crank_encoder", "kind"), "gyroscope"), 2,
     "mbstate replay: error: {log}: recorded with sensors crank_encoder (gyroscope); the config's sensors are "
     "crank_encoder (encoder)"),
    (setting(("sensors", "sensors", "coupler_accelerometer", "position"), [0.9, 0.05]), 0,
     "note: the settings of sensor(s) coupler_accelerometer differ from the log's: estimating with an imperfect "
     "sensor model"),
    (lambda header: header["sensors"]["sensors"].pop("rocker_load_cell"), 0,
     "note: sensors only in the log (their readings are unknown to the configuration): none; only in the "
     "configuration (never read): rocker_load_cell"),
    (without("parameters"), 0,
     "warning: {log}: the header records no parameters: not compared with the configuration"),
    (lambda header: header.clear(), 0,
     "warning: {log}: the header records no coordinates, constraints, sensors, parameters: not compared with the "
     "configuration"),
])
def test_replay_checks_the_log_s_mechanism_and_sensors(tmp_path, capsys, edit, code, line) -> None:
    header = copy.deepcopy(fourbar_header())
    edit(header)
    assert replayed(tmp_path, capsys, header, [encoder(0.001 * k, k) for k in range(3)]) == (
        code, line.format(log=tmp_path / "run.log") + "\n")


def test_the_same_header_passes_without_a_line(tmp_path, capsys) -> None:
    assert replayed(tmp_path, capsys, fourbar_header(), [encoder(0.001 * k, k) for k in range(3)]) == (0, "")


def test_a_model_with_other_parameters_is_named_in_one_note(tmp_path, capsys) -> None:
    """Coupler 2.5 kg instead of 2 (its inertia follows: I0 = m L²/3) and weaker gravity."""
    header = fourbar_header()
    header["parameters"].update({"mass of coupler": [2.5], "inertia of coupler": [2.5 * 4 / 3], "gravity": [0, -9.7]})
    assert replayed(tmp_path, capsys, header, [encoder(0.001, 1)]) == (
        0, "note: the model's parameters differ from the log's (gravity, mass of coupler, inertia of coupler): "
           "estimating with an imperfect model\n")


def test_a_log_of_another_mechanism_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    """A simulated log of the four-bar without the crank angle coordinate (configs/mechanisms/fourbar.yaml,
    the same sensor ids) against the configuration of the four-bar with it."""
    log = tmp_path / "fourbar.log"
    assert cli_exit_code(["simulate", str(MECHANISMS / "fourbar.yaml"), "--sensors", str(SENSORS), "--t-end", "0.02",
                          "--out", str(log)]) == 0
    capsys.readouterr()
    assert cli_exit_code(["replay", str(log), "--config", str(CONFIG), "--out", str(tmp_path / "e.csv")]) == 2
    assert capsys.readouterr().err == (
        f"mbstate replay: error: {log}: recorded for mechanism fourbar.yaml with coordinates x1, y1, x2, y2; "
        f"the config's mechanism fourbar_crank.yaml has x1, y1, x2, y2, theta0\n")
    assert not (tmp_path / "e.csv").exists()


def test_a_log_whose_readings_are_all_of_other_sensors_is_an_error(tmp_path, capsys) -> None:
    """A header that says nothing (its warning first: the readings are checked as they stream past) and
    readings of sensors the configuration does not have: no header-only CSV, one error line and exit 2."""
    readings = [{"sensor": "motor1_encoder", "t": 0.001 * k, "seq": k, "value": 0.1} for k in range(3)]
    assert replayed(tmp_path, capsys, {}, [*readings, {"sensor": ["not", "a", "name"]}]) == (
        2, f"warning: {tmp_path / 'run.log'}: the header records no coordinates, constraints, sensors, parameters: "
           f"not compared with the configuration\n"
           f"mbstate replay: error: {tmp_path / 'run.log'}: none of its 4 readings is from a sensor of the "
           f"configuration (the log's: motor1_encoder; the configuration's: coupler_gyro, crank_encoder, "
           f"coupler_accelerometer, rocker_load_cell)\n")
    assert not (tmp_path / "est.csv").exists()


def test_the_node_checks_its_sensor_file_against_its_mechanism(write_yaml, capsys) -> None:
    """mbstate run: a sensor file of another mechanism (its bodies unknown) stops the node before any
    socket opens, with one line and exit code 2."""
    config = write_yaml(f"mechanism: {MECHANISMS / 'fourbar_crank.yaml'}\n"
                        f"sensors: {REPO / 'configs' / 'sensors' / 'pick_and_place.yaml'}\n", "node.yaml")
    assert cli_exit_code(["run", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"mbstate run: error: {REPO / 'configs' / 'sensors' / 'pick_and_place.yaml'}: sensors.motor1_encoder.body: "
        f"unknown body 'left_crank' (known: crank, coupler, rocker)\n")
