"""``mbstate simulate`` then ``mbstate replay`` on a URDF (configs/estimator/ur5.yaml): the log's header
(joints as coordinates, no constraints, no parameters) accepted, the estimates' CSV in the joints' names,
the angles within a fifth of a count of the exported truth."""

from __future__ import annotations

import numpy as np
from conftest import MECHANISMS, REPO, csv_columns, read_csv

from estimator.cli import main

UR5 = MECHANISMS / "urdf" / "ur5.urdf"
ENCODERS = REPO / "configs" / "sensors" / "ur5_encoders.yaml"
CONFIG = REPO / "configs" / "estimator" / "ur5.yaml"
QUANTUM = 2 * np.pi / 4096


def columns(path, prefix: str, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(t, the ``prefix`` columns of ``names``) of a CSV."""
    return read_csv(path).t, csv_columns(path, prefix, names)


def test_a_simulated_urdf_log_replays_through_the_estimator(tmp_path, capsys) -> None:
    log, out, truth = tmp_path / "ur5.log", tmp_path / "est.csv", tmp_path / "truth.csv"
    assert main(["simulate", str(UR5), "--sensors", str(ENCODERS), "--t-end", "0.4", "--initial",
                 "shoulder_lift_joint=-0.8,elbow_joint=1.2,wrist_1_joint=0.3", "--velocity",
                 "shoulder_pan_joint=0.5,wrist_3_joint=1", "--seed", "2", "--out", str(log)]) == 0
    assert main(["replay", str(log), "--config", str(CONFIG), "--out", str(out), "--quiet"]) == 0
    assert main(["log", "export", str(log), "--records", "truth", "--out", str(truth)]) == 0
    printed = capsys.readouterr()
    assert "replayed: " in printed.out and "dropped 0" in printed.out
    assert "the header records no parameters" in printed.err  # a URDF log's header: the file is the record
    joints = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint")
    t, q = columns(out, "q", joints)
    t_true, q_true = columns(truth, "q", joints)
    index = np.searchsorted(np.round(t_true, 9), np.round(t, 9))
    assert len(t) > 350 and np.allclose(t_true[index], t)
    assert np.sqrt(np.mean((q - q_true[index]) ** 2)) < QUANTUM / 5
