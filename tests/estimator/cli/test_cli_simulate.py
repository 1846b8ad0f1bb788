"""``mbstate simulate``: forward and inverse modes end to end and the one-line errors. The command is
registered on a fresh parser (the lead wires it into mbstate)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from conftest import MECHANISMS, REPO, reference_file

from estimator.cli import ArgumentParser
from estimator.cli.simulate import register
from estimator.errors import MbstateError
from estimator.logfile import read_log
from sensors.base import wrap_angle

FOURBAR = str(MECHANISMS / "fourbar_crank.yaml")
SENSORS = str(REPO / "configs" / "sensors" / "fourbar.yaml")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="mbstate")
    register(parser.add_subparsers(dest="command", parser_class=ArgumentParser))
    return parser.parse_args(["simulate", *argv])


def run(argv: list[str]) -> int:
    args = parse(argv)
    return args.run(args)


def test_forward_mode_writes_truth_and_every_sensor(tmp_path, capsys) -> None:
    out = tmp_path / "fourbar.log"
    assert run([FOURBAR, "--sensors", SENSORS, "--t-end", "0.2", "--forces", "motor=50", "--seed", "4",
                "--out", str(out)]) == 0
    log = read_log(out)
    assert log.header["actuators"] == ["motor"] and log.header["simulation"]["dt"] == 0.001
    assert log.header["sensors"]["sensors"]["crank_encoder"]["counts"] == 4096
    assert len(log.truth) == 201 and all(record["f"] == [50.0] for record in log.truth)
    counts = {name: sum(r["sensor"] == name for r in log.readings) for name in log.header["sensors"]["sensors"]}
    assert counts == {"coupler_gyro": 201, "crank_encoder": 201, "coupler_accelerometer": 101, "rocker_load_cell": 21}
    assert "rocker_load_cell (load_cell, 100 Hz): 21 readings" in capsys.readouterr().out
    theta = np.array([record["q"][4] for record in log.truth])
    encoder = np.array([r["value"] for r in log.readings if r["sensor"] == "crank_encoder"])
    assert np.max(np.abs(wrap_angle(encoder - theta))) <= np.pi / 4096 + 1e-12  # half a count, no noise set
    # records are in time order; readings keep their (jittered) stamps
    stamps = [r["t"] for r in log.readings]
    assert stamps == sorted(stamps)
    again = tmp_path / "again.log"
    run([FOURBAR, "--sensors", SENSORS, "--t-end", "0.2", "--forces", "motor=50", "--seed", "4", "--out", str(again)])
    assert read_log(again).readings == log.readings


def test_inverse_mode_follows_the_crank_trajectory(tmp_path) -> None:
    trajectory = reference_file("fourbars1-with-rel-angle-trajectory.txt")
    out = tmp_path / "inverse.log"
    assert run([FOURBAR, "--sensors", SENSORS, "--t-end", "0.5", "--drive", "theta0", "--trajectory",
                str(trajectory), "--out", str(out)]) == 0
    log = read_log(out)
    t = np.array([record["t"] for record in log.truth])
    theta = np.array([record["q"][4] for record in log.truth])
    assert t[1] - t[0] == pytest.approx(0.001) and t[-1] == pytest.approx(0.5)
    # θ = 1.2 (1 − cos 2t): file rounded to 8 digits, fitted and resampled: 1e-6 rad leaves a margin
    np.testing.assert_allclose(theta, 1.2 * (1 - np.cos(2 * t)), atol=1e-6)
    motor = np.array([record["f"][0] for record in log.truth])
    assert motor[0] == pytest.approx(66.0, abs=0.1)  # static 44.145 + inertial 21.87 N·m (hand check)


@pytest.mark.parametrize("argv,match", [
    (["--drive", "theta0"], "--drive and --trajectory go together"),
    (["--forces", "brake=1"], "--forces: unknown actuator 'brake'"),
    (["--drive", "theta0", "--trajectory", "x.txt", "--forces", "motor=1"], "are for forward dynamics"),
    (["--initial", "phi=1"], "--initial: unknown coordinate 'phi'"),
])
def test_bad_options_are_one_line_errors(tmp_path, argv: list[str], match: str) -> None:
    with pytest.raises(MbstateError, match=match):
        run([FOURBAR, "--sensors", SENSORS, "--t-end", "0.1", "--out", str(tmp_path / "x.log"), *argv])


def test_bad_sensor_file_is_a_one_line_error(tmp_path, write_yaml) -> None:
    sensors = write_yaml("sensors:\n  g: {kind: gyroscope, body: wheel, rate: 10}\n", "sensors.yaml")
    with pytest.raises(MbstateError, match=r"sensors.g.body: unknown body 'wheel'"):
        run([FOURBAR, "--sensors", str(sensors), "--t-end", "0.1", "--out", str(tmp_path / "x.log")])


def test_argument_errors_exit_with_code_2() -> None:
    with pytest.raises(SystemExit) as exc:
        parse([FOURBAR, "--sensors", SENSORS, "--t-end", "-1", "--out", "x.log"])
    assert exc.value.code == 2
