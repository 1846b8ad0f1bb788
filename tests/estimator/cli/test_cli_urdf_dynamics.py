"""``mbstate forward`` and ``mbstate inverse`` on URDF files: each CSV row against Pinocchio's ABA or
RNEA at that row's state (issue 37's bound 1e-9 · max(1, ‖ref‖∞)), joint names as coordinate names,
and one line with exit code 2 for what a URDF cannot take."""

import numpy as np
import pytest
from conftest import MECHANISMS

from estimator.cli import main
from estimator.spatial.model import load_spatial

pin = pytest.importorskip("pinocchio")

PANDA = MECHANISMS / "urdf" / "panda.urdf"
UR5 = MECHANISMS / "urdf" / "ur5.urdf"


def columns(path, prefix: str, names: tuple[str, ...]) -> np.ndarray:
    with open(path) as stream:
        header = stream.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, [header.index(f"{prefix}.{name}") for name in names]]


def test_forward_rows_against_pinocchio_aba(tmp_path, capsys) -> None:
    out = tmp_path / "panda.csv"
    code = main(["forward", str(PANDA), "--t-end", "0.2", "--dt", "0.001", "--initial", "panda_joint2=0.5",
                 "--velocity", "panda_joint1=1", "--out", str(out)])
    assert code == 0 and "written" in capsys.readouterr()[0]
    model = load_spatial(PANDA)
    q, qd, qdd = (columns(out, prefix, model.joint_names) for prefix in ("q", "qd", "qdd"))
    assert q[0].tolist() == [0.0, 0.5, 0, 0, 0, 0, 0] and qd[0].tolist() == [1.0, 0, 0, 0, 0, 0, 0]
    pm = pin.buildModelFromUrdf(str(PANDA))
    pd = pm.createData()
    for row in range(0, len(q), 10):  # Pinocchio's ABA has no joint damping: it enters as a joint force
        ref = pin.aba(pm, pd, q[row], qd[row], -model.damping * qd[row])
        assert np.max(np.abs(qdd[row] - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))


def test_inverse_rows_against_pinocchio_rnea(tmp_path, capsys) -> None:
    model = load_spatial(UR5)
    t = np.arange(0, 1.0001, 0.005)
    trajectory = tmp_path / "ur5.txt"
    np.savetxt(trajectory, np.column_stack([t] + [0.5 * np.sin(2 * t + k) for k in range(6)]))
    out = tmp_path / "ur5.csv"
    drives = list(reversed(model.joint_names))  # any order: the columns follow --drive
    code = main(["inverse", str(UR5), "--trajectory", str(trajectory), "--drive", ",".join(drives), "--out", str(out)])
    assert code == 0 and "Q.elbow_joint" in capsys.readouterr()[0]
    q, qd, qdd, tau = (columns(out, prefix, model.joint_names) for prefix in ("q", "qd", "qdd", "Q"))
    np.testing.assert_allclose(q[:, model.joint_names.index("wrist_3_joint")], 0.5 * np.sin(2 * t), atol=1e-6)
    pm = pin.buildModelFromUrdf(str(UR5))
    pd = pm.createData()
    for row in range(len(t)):
        ref = pin.rnea(pm, pd, q[row], qd[row], qdd[row])
        assert np.max(np.abs(tau[row] - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("args, problem", [
    (["inverse", str(UR5), "--trajectory", "T", "--drive", "elbow_joint", "--out", "o.csv"],
     "--drive: a URDF's driven joints must be every movable joint once"),
    (["forward", str(UR5), "--t-end", "1", "--dt", "0.01", "--initial", "knee=1", "--out", "o.csv"],
     "--initial: 'knee' is not a movable joint of ur5"),
    (["forward", str(UR5), "--t-end", "1", "--dt", "0.01", "--method", "lagrange", "--out", "o.csv"],
     "--method: not available for a URDF file"),
])  # closed chains with --method fg: test_cli_spatial_graph_loops.py
def test_what_a_urdf_cannot_take_is_one_line(capsys, args, problem) -> None:
    assert main(args) == 2
    err = capsys.readouterr()[1]
    assert problem in err and len(err.strip().splitlines()) == 1
