"""``mbstate simulate`` on a URDF: joint encoders (sensors.joint_encoder) on the UR5, the truth (exported
by ``mbstate log export``) against Pinocchio's ABA and RNEA row by row (bound 1e-9 · max(1, ‖ref‖∞),
as test_cli_urdf_dynamics), the readings against the truth within half a count, and one line with
exit code 2 for a 3D sensor kind."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.cli import main
from estimator.logfile import read_log
from estimator.spatial.model import load_spatial

pin = pytest.importorskip("pinocchio")

UR5 = MECHANISMS / "urdf" / "ur5.urdf"
ENCODERS = REPO / "configs" / "sensors" / "ur5_encoders.yaml"
HALF_COUNT = np.pi / 4096  # the encoders' 4096 counts per revolution, no noise: rounding only


def truth_csv(log, out, names: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    """q, q̇, q̈ and Q (rows, joints) of the log's truth, by ``mbstate log export``."""
    assert main(["log", "export", str(log), "--records", "truth", "--out", str(out)]) == 0
    with open(out) as stream:
        header = stream.readline().strip().split(",")
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    return tuple(data[:, [header.index(f"{prefix}.{name}") for name in names]] for prefix in ("q", "qd", "qdd", "Q"))


def test_forward_truth_and_encoder_readings(tmp_path, capsys) -> None:
    log = tmp_path / "ur5.log"
    code = main(["simulate", str(UR5), "--sensors", str(ENCODERS), "--t-end", "0.2", "--initial",
                 "shoulder_lift_joint=0.5", "--velocity", "elbow_joint=1", "--forces", "elbow_joint=5",
                 "--seed", "3", "--out", str(log)])
    printed = capsys.readouterr().out
    assert code == 0 and "elbow_encoder (encoder, 1000 Hz): 201 readings" in printed
    model = load_spatial(UR5)
    recorded = read_log(log)
    assert recorded.header["coordinates"] == list(model.joint_names) and recorded.header["constraints"] == []
    assert recorded.header["simulation"]["motion"] == "forward dynamics (rk4 on ABA)"
    q, qd, qdd, forces = truth_csv(log, tmp_path / "truth.csv", model.joint_names)
    assert len(q) == 201 and q[0, 1] == 0.5 and qd[0, 2] == 1.0
    assert np.all(forces[:, 2] == 5.0) and np.all(forces[:, [0, 1, 3, 4, 5]] == 0.0)
    pm = pin.buildModelFromUrdf(str(UR5))
    pd = pm.createData()
    tau = np.zeros(6)
    tau[2] = 5.0
    for row in range(0, len(q), 20):
        ref = pin.aba(pm, pd, q[row], qd[row], tau)
        assert np.max(np.abs(qdd[row] - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))
    for j, name in enumerate(model.joint_names):  # multi-turn readings at the truth's samples (dt = 1 ms)
        readings = np.array([r["value"] for r in recorded.readings if r["sensor"] == name[:-5] + "encoder"])
        assert len(readings) == 201 and np.max(np.abs(readings - q[:, j])) <= HALF_COUNT + 1e-12


def test_driven_truth_is_rnea(tmp_path) -> None:
    model = load_spatial(UR5)
    t = np.arange(0, 0.5001, 0.005)
    trajectory = tmp_path / "ur5.txt"
    np.savetxt(trajectory, np.column_stack([t] + [0.5 * np.sin(2 * t + k) for k in range(6)]))
    log = tmp_path / "ur5.log"
    assert main(["simulate", str(UR5), "--sensors", str(ENCODERS), "--t-end", "0.3", "--drive",
                 ",".join(reversed(model.joint_names)), "--trajectory", str(trajectory), "--out", str(log)]) == 0
    q, qd, qdd, forces = truth_csv(log, tmp_path / "truth.csv", model.joint_names)
    assert len(q) == 301
    np.testing.assert_allclose(q[:, 0], 0.5 * np.sin(2 * np.arange(301) * 1e-3 + 5), atol=1e-6)  # reversed columns
    pm = pin.buildModelFromUrdf(str(UR5))
    pd = pm.createData()
    for row in range(0, len(q), 10):
        ref = pin.rnea(pm, pd, q[row], qd[row], qdd[row])
        assert np.max(np.abs(forces[row] - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("sensor, problem", [
    ("{kind: gyroscope, body: wrist_3_link, rate: 100, noise: {density: 1.0e-4}}",
     "sensors.tool.body: a sensor of a URDF is mounted by link: (or frame:) and xyz/rpy"),
    ("{kind: load_cell, link: wrist_3_link, rate: 100, noise: {density: 1.0e-4}}",
     "sensors.tool.kind: must be one of encoder, gyroscope, accelerometer, joint_torque, force_torque, got "
     "'load_cell'"),
    ("{kind: encoder, body: upper_arm_link, rate: 100, counts: 1024}",
     "sensors.tool.body: an encoder of a URDF names its joint (joint: NAME), not a body or point"),
    ("{kind: encoder, joint: knee, rate: 100, counts: 1024}", "sensors.tool.joint: 'knee' is not a movable joint"),
])
def test_what_a_urdf_sensor_file_cannot_hold_is_one_line(tmp_path, capsys, sensor, problem) -> None:
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text("sensors:\n  elbow: {kind: encoder, joint: elbow_joint, rate: 100, counts: 1024}\n"
                       f"  tool: {sensor}\n")
    assert main(["simulate", str(UR5), "--sensors", str(sensors), "--t-end", "0.1",
                 "--out", str(tmp_path / "x.log")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("driven", [False, True])
def test_a_closed_chain_is_refused_before_any_log_is_written(tmp_path, capsys, driven) -> None:
    """The truths are a tree's (ABA, RNEA): a chain with loops would be simulated with its loops open."""
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text("sensors:\n  crank: {kind: encoder, joint: crank, rate: 100, counts: 4096}\n")
    joints = load_spatial(REPO / "configs" / "mechanisms" / "urdf" / "rssr.urdf").joint_names
    trajectory = tmp_path / "motion.txt"
    trajectory.write_text("".join(f"{t} " + " ".join(["0.1"] * len(joints)) + "\n" for t in (0.0, 0.5, 1.0)))
    motion = ["--drive", ",".join(joints), "--trajectory", str(trajectory)] if driven else []
    log = tmp_path / "x.log"
    assert main(["simulate", str(REPO / "configs" / "mechanisms" / "urdf" / "rssr.urdf"), "--sensors", str(sensors),
                 "--t-end", "0.1", "--out", str(log), *motion]) == 2
    out, err = capsys.readouterr()
    assert "rssr: a closed chain (loops in its sidecar) is not simulated with sensors yet" in err
    assert len(err.strip().splitlines()) == 1 and not log.exists()
