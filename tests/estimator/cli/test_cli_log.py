"""``mbstate log info|export``, and the command line's answer to damaged logs: one line with the byte
offset and exit 2 (replay and info), a crash's cut last record a warning."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, cli_exit_code, read_csv

from estimator.cli.log import _write_states
from estimator.timeseries import CsvWriter


MECHANISM = REPO / "configs/mechanisms/fourbar_crank.yaml"
SENSORS = REPO / "configs/sensors/fourbar.yaml"
CONFIG = REPO / "configs/estimator/fourbar.yaml"


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    log = tmp_path_factory.mktemp("sim") / "sim.mbslog"
    assert cli_exit_code(["simulate", str(MECHANISM), "--sensors", str(SENSORS), "--t-end", "0.1",
                          "--forces", "motor=20", "--out", str(log)]) == 0
    return log


def test_info(simulated, capsys) -> None:
    capsys.readouterr()
    assert cli_exit_code(["log", "info", str(simulated)]) == 0
    out = capsys.readouterr().out
    assert "format version 3" in out and "records: reading 264, truth 101" in out
    line = next(line for line in out.splitlines() if "coupler_accelerometer" in line)
    assert line.startswith("  coupler_accelerometer: 51 readings, t = ") and float(line.split()[-2]) == pytest.approx(500, 1e-3)
    assert "integrity: every record's checksum verified; every file closed" in out


def test_export_truth_and_readings(simulated, tmp_path, capsys) -> None:
    out = tmp_path / "truth.csv"
    assert cli_exit_code(["log", "export", str(simulated), "--records", "truth", "--out", str(out)]) == 0
    truth = read_csv(out)
    assert truth.coordinate_names == ("x1", "y1", "x2", "y2", "theta0") and len(truth.t) == 101
    assert list(truth.forces) == ["theta0"] and np.allclose(truth.forces["theta0"], 20.0)
    assert truth.lam.shape == (101, 4)
    readings = tmp_path / "acc.csv"
    assert cli_exit_code(["log", "export", str(simulated), "--records", "readings", "--sensor",
                          "coupler_accelerometer", "--out", str(readings)]) == 0
    lines = readings.read_text().splitlines()
    assert lines[0] == "t,seq,value.0,value.1" and len(lines) == 52 and lines[1].split(",")[1] == "0"
    capsys.readouterr()
    assert cli_exit_code(["log", "export", str(simulated), "--records", "readings", "--out", str(readings)]) == 2
    assert "--sensor ID goes with --records readings" in capsys.readouterr().err


def flipped(data: bytes, bit: int) -> bytes:
    damaged = bytearray(data)
    damaged[bit // 8] ^= 1 << bit % 8
    return bytes(damaged)


def one_error_line(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mbstate {command}: error: ")
    return err


def test_fifty_flipped_bits_are_each_one_line_with_the_offset_and_exit_2(simulated, tmp_path, capsys) -> None:
    data = simulated.read_bytes()
    damaged = tmp_path / "damaged.mbslog"
    rng = np.random.default_rng(50)
    detected = 0
    for bit in rng.choice(8 * len(data), size=50, replace=False):
        damaged.write_bytes(flipped(data, int(bit)))
        capsys.readouterr()
        code = cli_exit_code(["log", "info", str(damaged)])
        detected += code == 2 and "at byte" in one_error_line(capsys, "log")
    assert detected >= 49


def test_replay_of_damaged_logs(simulated, tmp_path, capsys) -> None:
    data = simulated.read_bytes()
    damaged = tmp_path / "damaged.mbslog"
    replay = ["replay", str(damaged), "--config", str(CONFIG), "--out", str(tmp_path / "est.csv"), "--quiet"]
    for bit in np.random.default_rng(5).choice(8 * len(data), size=3, replace=False):
        damaged.write_bytes(flipped(data, int(bit)))
        capsys.readouterr()
        assert cli_exit_code(replay) == 2 and "at byte" in one_error_line(capsys, "replay")
    damaged.write_bytes(data[:len(data) // 2] + data[len(data) // 2 + 100:])  # bytes missing in the middle
    capsys.readouterr()
    assert cli_exit_code(replay) == 2 and "corrupt record at byte" in one_error_line(capsys, "replay")
    damaged.write_bytes(data[:-30])  # a crash: the end record and the last reading cut
    capsys.readouterr()
    assert cli_exit_code(replay) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "ends in a cut record" in err and "has no end record" in err


def test_estimate_records_with_external_wrenches_export_their_columns(tmp_path) -> None:
    """An estimate record's ``wrenches`` (estimator ``wrenches``) are the columns W.<frame>.<axis>, after λ."""
    records = [{"t": 1e-3 * k, "q": [0.1, 0.2], "qd": [0.0, 0.0], "qdd": [0.0, 0.0], "lam": [],
                "wrenches": {"tool": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0 + k]}} for k in range(3)]
    out = tmp_path / "estimates.csv"
    with CsvWriter(out) as writer:
        assert _write_states(writer, {"coordinates": ["a", "b"]}, records) == 3
    lines = out.read_text().splitlines()
    assert lines[0] == "t,q.a,q.b,qd.a,qd.b,qdd.a,qdd.b,W.tool.mx,W.tool.my,W.tool.mz,W.tool.fx,W.tool.fy,W.tool.fz"
    assert [float(v) for v in lines[3].split(",")[-6:]] == [1.0, 2.0, 3.0, 4.0, 5.0, 8.0]
