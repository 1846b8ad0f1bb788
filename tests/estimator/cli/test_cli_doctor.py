"""``mbstate doctor``: findings from injected probe results (no real probe of the machine), the exit code,
and the node configuration's disk and sockets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO

from estimator.cli import doctor, main
from estimator.cli.doctor_probes import Probes, TimeSync
from estimator.node.config import load_node_config

FOURBAR = REPO / "configs" / "estimator" / "fourbar.yaml"

# A tuned machine: every probe as the node wants it.
TUNED = Probes(governors=lambda: {"cpu0": "performance", "cpu1": "performance"}, isolated_cpus=lambda: "1",
               cpu_count=lambda: 2, blas_threads=lambda: [("libopenblas.so", 1)],
               clock_source=lambda: ("tsc", ("tsc", "hpet")), time_sync=lambda: TimeSync(True, 20.0),
               stall_gaps=lambda seconds: np.array([6e-5, 8e-5]), free_bytes=lambda path: 10**12)


def levels(findings: list[doctor.Finding]) -> dict[str, str]:
    return {f.check: f.level for f in findings}


def test_a_tuned_machine_is_all_ok() -> None:
    assert set(levels(doctor.findings(TUNED, None, 10.0)).values()) == {"ok"}


@pytest.mark.parametrize(("change", "check", "level"), [
    ({"governors": lambda: {"cpu0": "powersave", "cpu1": "performance"}}, "governor", "change"),
    ({"governors": lambda: {}}, "governor", "ok"),  # a VM: the host sets the clock speed
    ({"isolated_cpus": lambda: ""}, "isolated cores", "change"),
    ({"blas_threads": lambda: [("libopenblas.so", 1), ("libscipy_openblas.so", 2)]}, "BLAS threads", "breaks"),
    ({"clock_source": lambda: ("hpet", ("hpet", "acpi_pm"))}, "clock source", "change"),
    ({"time_sync": lambda: TimeSync(False)}, "time sync", "change"),
    ({"time_sync": lambda: TimeSync(None)}, "time sync", "change"),
    ({"stall_gaps": lambda seconds: np.array([6e-4])}, "stalls", "change"),  # half the budget: no margin
    ({"stall_gaps": lambda seconds: np.array([6e-5, 1.2e-3])}, "stalls", "breaks"),
])
def test_each_finding_from_its_probe(change: dict, check: str, level: str) -> None:
    found = levels(doctor.findings(dataclasses.replace(TUNED, **change), None, 10.0))
    assert found[check] == level
    assert [c for c, lv in found.items() if lv != "ok" and c != check] == []


def test_the_stall_probe_runs_for_the_given_seconds_and_is_binned() -> None:
    asked = []
    probes = dataclasses.replace(TUNED, stall_gaps=lambda seconds: asked.append(seconds) or np.array([7e-5, 3e-3]))
    stalls = doctor.stalls(probes, 2.5, budget_ms=1.0)
    assert asked == [2.5]
    assert "0.05-0.1 ms: 1" in stalls.found and "2-5 ms: 1" in stalls.found and "longest 3 ms" in stalls.found
    assert dict(doctor.stall_histogram(np.array([5e-5, 9.9e-5, 1e-3, 0.1]))) == {
        "0.05-0.1": 2, "0.1-0.25": 0, "0.25-0.5": 0, "0.5-1": 0, "1-2": 1, "2-5": 0, ">=5": 1}


def test_the_budget_is_the_configurations() -> None:
    probes = dataclasses.replace(TUNED, stall_gaps=lambda seconds: np.array([1.5e-3]))
    assert doctor.stalls(probes, 1.0, budget_ms=1.0).level == "breaks"
    assert doctor.stalls(probes, 1.0, budget_ms=2.0).level == "change"


def test_disk_says_how_long_the_recording_fits() -> None:
    config = load_node_config(FOURBAR)
    rate = doctor.recording_bytes_per_second(config)
    assert 2e5 < rate < 2e6  # 2,600 readings and 1,000 estimates a second of 60-300 bytes each
    day = 24 * 3600 * rate
    assert doctor.disk(dataclasses.replace(TUNED, free_bytes=lambda path: int(2 * day)), config).level == "ok"
    short = doctor.disk(dataclasses.replace(TUNED, free_bytes=lambda path: int(day / 24)), config)
    assert short.level == "change" and "1 h of recording" in short.found
    off = dataclasses.replace(config, node=dataclasses.replace(config.node, log=dataclasses.replace(
        config.node.log, path=None)))
    assert doctor.disk(TUNED, off).found.startswith("recording off")


def write_config(tmp_path: Path, node: str) -> Path:
    path = tmp_path / "node.yaml"
    path.write_text(f"mechanism: {REPO}/configs/mechanisms/fourbar_crank.yaml\n"
                    f"sensors: {REPO}/configs/sensors/fourbar.yaml\n"
                    "estimator: {unknown_forces: [motor], latency_budget_ms: 2.0}\n" + node)
    return path


def test_sockets_beyond_loopback_without_curve_are_a_change(tmp_path: Path) -> None:
    config = load_node_config(write_config(tmp_path, "node: {sub: 'tcp://0.0.0.0:5555', pub: 'ipc:///tmp/x'}\n"))
    found = {f.check: f for f in doctor.sockets(config)}
    assert (found["socket sub"].level, found["socket pub"].level, found["socket control"].level) == ("change", "ok", "ok")
    assert "network, CURVE off" in found["socket sub"].found and "node.curve" in found["socket sub"].advice
    assert "local" in found["socket pub"].found and "loopback" in found["socket control"].found


def test_sockets_beyond_loopback_with_curve_are_ok(tmp_path: Path) -> None:
    assert main(["keys", "node", "--dir", str(tmp_path / "keys")]) == 0
    assert main(["keys", "viewer", "--dir", str(tmp_path / "keys" / "clients")]) == 0
    config = load_node_config(write_config(tmp_path, "node: {sub: 'tcp://*:5555', curve: {secret_key: "
                                                     "keys/node.key_secret, clients: keys/clients}}\n"))
    assert [f.level for f in doctor.sockets(config)] == ["ok", "ok", "ok"]
    assert "network, CURVE on" in doctor.sockets(config)[0].found


@pytest.mark.parametrize(("probes", "code"), [
    (TUNED, 0), (dataclasses.replace(TUNED, stall_gaps=lambda seconds: np.array([2e-3])), 1)])
def test_the_command_prints_its_findings_and_exits_1_on_a_breaking_one(
        probes: Probes, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(doctor, "Probes", lambda: probes)
    assert main(["doctor", "--config", str(write_config(tmp_path, "")), "--probe-seconds", "0.5"]) == code
    out = capsys.readouterr().out
    assert "latency budget 2 ms" in out and "socket control" in out and "disk" in out
    verdict = out.strip().splitlines()[-1]
    if code:
        assert verdict.startswith("verdict: 1 finding(s) break the 2 ms budget: stalls: 1 pause(s) of 2 ms")
    else:
        assert verdict == "verdict: fit for the 2 ms budget"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["doctor", "--config", str(tmp_path / "missing.yaml")]) == 2
    with pytest.raises(SystemExit) as exit_:
        main(["doctor", "--probe-seconds", "0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("mbstate doctor: error:") for line in err)
