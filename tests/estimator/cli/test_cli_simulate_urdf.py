"""``mbstate simulate`` on a URDF: joint encoders (sensors.joint_encoder) on the UR5, the truth (exported
by ``mbstate log export``) against Pinocchio's ABA and RNEA row by row (bound 1e-9 · max(1, ‖ref‖∞),
as test_cli_urdf_dynamics), the readings against the truth within half a count, and one line with
exit code 2 for a 3D sensor kind. Closed chains (issue 38): the truth against the closed-chain
dynamics run directly and the planar five-bar, λ in the log, one line for no mobility or bad drives."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import MECHANISMS, REPO, csv_columns

from estimator.cli import main
from estimator.drive_trajectory import hermite_resample, load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics as planar_inverse
from estimator.logfile import read_log
from estimator.mechanism_file import load_mechanism
from estimator.spatial import closed_dynamics
from estimator.spatial.loops import loop_terms, row_names
from estimator.spatial.model import load_spatial
from replay.simulation import TRUTH_STEP

pin = pytest.importorskip("pinocchio")

URDF = MECHANISMS / "urdf"
UR5 = URDF / "ur5.urdf"
RSSR = URDF / "rssr.urdf"
FIVE_BAR_3D = URDF / "five_bar_3d.urdf"
ENCODERS = REPO / "configs" / "sensors" / "ur5_encoders.yaml"
HALF_COUNT = np.pi / 4096  # the encoders' 4096 counts per revolution, no noise: rounding only


def truth_csv(log, out, names: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    """q, q̇, q̈ and Q (rows, joints) of the log's truth, by ``mbstate log export``."""
    assert main(["log", "export", str(log), "--records", "truth", "--out", str(out)]) == 0
    return tuple(csv_columns(out, prefix, names) for prefix in ("q", "qd", "qdd", "Q"))


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


def test_a_closed_chains_forward_truth_is_its_kkt_motion(tmp_path, capsys) -> None:
    """The RSSR (a closed chain) with an encoder on its crank: the exported truth is
    closed_dynamics.simulate's run from the same start (the CSV's 17 digits), λ in ``lambda.<k>``, the
    loop closed (1e-12 m), the readings within half a count of the truth."""
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text("sensors:\n  crank_encoder: {kind: encoder, joint: crank, rate: 1000, counts: 4096}\n")
    log, csv = tmp_path / "rssr.log", tmp_path / "truth.csv"
    assert main(["simulate", str(RSSR), "--sensors", str(sensors), "--t-end", "0.05", "--velocity", "crank=3",
                 "--forces", "crank_motor=0.1", "--out", str(log)]) == 0
    assert "crank_encoder (encoder, 1000 Hz): 51 readings" in capsys.readouterr().out
    model, recorded = load_spatial(RSSR), read_log(log)
    assert recorded.header["constraints"] == list(row_names(model))
    assert recorded.header["simulation"]["motion"] == ("forward dynamics (rk6 on the KKT accelerations, projected "
                                                       "on the loops)")
    assert main(["log", "export", str(log), "--records", "truth", "--out", str(csv)]) == 0
    crank = model.joint_names.index("crank")
    q0, qd0 = closed_dynamics.start_state(model, np.zeros(model.dof), [], 3.0 * np.eye(model.dof)[crank], [crank])
    direct = closed_dynamics.simulate(model, q0, qd0, TRUTH_STEP, 200, tau=model.actuation() @ [0.1])
    for prefix, ref in (("q", direct.q), ("qd", direct.qd), ("lambda", direct.lam)):
        names = model.joint_names if prefix != "lambda" else range(3)
        np.testing.assert_allclose(csv_columns(csv, prefix, names), ref[::4], rtol=1e-15, atol=1e-15)
    assert np.all(csv_columns(csv, "Q", ["crank"]) == 0.1)
    assert max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in zip(direct.q, direct.qd)) <= 1e-12
    readings = np.array([r["value"] for r in recorded.readings])
    assert len(readings) == 51 and np.max(np.abs(readings - direct.q[::4, crank])) <= HALF_COUNT + 1e-12


def test_a_closed_chains_driven_truth_carries_motor_torques_and_reactions(tmp_path, capsys) -> None:
    """The five-bar as a 3D loop driven on configs/trajectories/five_bar.txt with
    configs/sensors/five_bar_3d_encoders.yaml: the motors' torques are the planar five-bar's inverse
    dynamics (1e-9 N·m), λ closed_dynamics.inverse's (1e-12), and ``mbstate log info`` reads it back."""
    log, csv = tmp_path / "five_bar_3d.log", tmp_path / "truth.csv"
    trajectory = REPO / "configs" / "trajectories" / "five_bar.txt"
    sensors = REPO / "configs" / "sensors" / "five_bar_3d_encoders.yaml"
    assert main(["simulate", str(FIVE_BAR_3D), "--sensors", str(sensors),
                 "--t-end", "0.1", "--drive", "left,right", "--trajectory", str(trajectory), "--out", str(log)]) == 0
    assert main(["log", "info", str(log)]) == 0
    assert "records: reading 303, truth 101" in capsys.readouterr().out
    assert main(["log", "export", str(log), "--records", "truth", "--out", str(csv)]) == 0
    model = load_spatial(FIVE_BAR_3D)
    samples = load_drive_trajectory(trajectory, 2)
    times = samples.t[0] + 1e-3 * np.arange(101)
    planar = planar_inverse(load_mechanism(MECHANISMS / "five_bar.yaml"), ["left", "right"], times,
                            *hermite_resample(samples.t, *samples.derivatives(), times)).trajectory
    torques = csv_columns(csv, "Q", ["left", "right"])
    reference = np.column_stack([planar.forces["left"], planar.forces["right"]])
    assert np.max(np.abs(torques - reference)) <= 1e-9 * max(1.0, np.max(np.abs(reference)))
    driven = [model.joint_names.index("left"), model.joint_names.index("right")]
    direct = closed_dynamics.inverse(model, driven, times, *hermite_resample(samples.t, *samples.derivatives(),
                                                                             times)).trajectory
    np.testing.assert_allclose(csv_columns(csv, "lambda", range(5)), direct.lam, rtol=0, atol=1e-12)


@pytest.mark.parametrize("chain, motion, problem", [
    ("locked", [], "five_bar_3d: the loops leave no mobility"),
    ("five_bar_3d", ["--drive", "left"], "five_bar_3d has 2 degrees of freedom but 1 driven joint was given"),
    ("five_bar_3d", ["--drive", "left,elbow"], "--drive: 'elbow' is not a movable joint of five_bar_3d"),
])
def test_a_closed_chain_without_mobility_or_with_bad_drives_is_one_line(tmp_path, capsys, chain, motion,
                                                                          problem) -> None:
    """No log is written: the mobility and the drives are checked before the first chunk."""
    path = FIVE_BAR_3D
    if chain == "locked":
        shutil.copy(FIVE_BAR_3D, tmp_path / "locked.urdf")
        sidecar = (URDF / "five_bar_3d.yaml").read_text().replace(
            "loops:\n", "  - {name: E, link: base, xyz: [0.5, 0, 0]}\nloops:\n"
                         "  - {name: A, type: weld, frames: [left_link, base]}\n"
                         "  - {name: E, type: weld, frames: [right_link, E]}\n")
        (tmp_path / "locked.yaml").write_text(sidecar.replace("initial: {left: 1.74532925199, right: 1.3962634016",
                                                              "initial: {left: 0.1, right: 0.1"))
        path = tmp_path / "locked.urdf"
    sensors = tmp_path / "sensors.yaml"
    sensors.write_text("sensors:\n  left: {kind: encoder, joint: left, rate: 100, counts: 4096}\n")
    trajectory = tmp_path / "motion.txt"
    trajectory.write_text("".join(f"{t} " + " ".join(["1.7"] * (motion[1].count(",") + 1 if motion else 1)) + "\n"
                                  for t in (0.0, 0.5, 1.0)))
    log = tmp_path / "x.log"
    code = main(["simulate", str(path), "--sensors", str(sensors), "--t-end", "0.1", "--out", str(log), *motion,
                 *(["--trajectory", str(trajectory)] if motion else [])])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and problem in err and len(err.strip().splitlines()) == 1 and not log.exists()
