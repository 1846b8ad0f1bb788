"""``inverse --method fg``, ``forward --method fg-dc|fg-ic`` and ``hybrid`` on URDF trees by the spatial
dynamics graphs (issue 40): each CSV row against the classical recursions at that row's state
(‖Δ‖∞ ≤ 1e-10 · max(1, ‖ref‖∞)), ``--ordering`` with the tree orderings, and one line with exit
code 2 for a bad ordering or a planar loop without its planar factor (closed chains:
test_cli_spatial_graph_loops.py)."""

import numpy as np
import pytest
from conftest import MECHANISMS, csv_columns

from estimator.cli import main
from estimator.spatial.dynamics import inverse_dynamics
from estimator.spatial.model import load_spatial

UR5 = MECHANISMS / "urdf" / "ur5.urdf"
PANDA = MECHANISMS / "urdf" / "panda.urdf"
PLANAR = MECHANISMS / "pendulum.yaml"


def bound(ref: np.ndarray) -> float:
    return 1e-10 * max(1.0, float(np.max(np.abs(ref))))


def write_trajectory(path, columns_: int) -> None:
    t = np.arange(0.0, 0.1001, 0.005)
    np.savetxt(path, np.column_stack([t] + [0.5 * np.sin(2 * t + k) for k in range(columns_)]))


@pytest.mark.parametrize("order", ["RNEA", "CRBA", "METIS"])
def test_inverse_fg_rows_match_the_rnea(tmp_path, capsys, order: str) -> None:
    model = load_spatial(UR5)
    trajectory, out = tmp_path / "ur5.txt", tmp_path / "ur5.csv"
    write_trajectory(trajectory, model.dof)
    code = main(["inverse", str(UR5), "--trajectory", str(trajectory), "--drive", ",".join(model.joint_names),
                 "--method", "fg", "--ordering", order, "--out", str(out)])
    assert code == 0 and f"{order} ordering" in capsys.readouterr()[0]
    q, qd, qdd, tau = (csv_columns(out, prefix, model.joint_names) for prefix in ("q", "qd", "qdd", "Q"))
    for row in range(len(q)):
        ref = inverse_dynamics(model, q[row], qd[row], qdd[row])
        assert np.max(np.abs(tau[row] - ref)) <= bound(ref)


@pytest.mark.parametrize("method", ["fg-dc", "fg-ic"])
def test_forward_fg_follows_rk4_on_aba(tmp_path, capsys, method: str) -> None:
    """The same RK4 on the graph's q̈ as on ABA's: the runs agree to round-off."""
    model = load_spatial(PANDA)
    common = ["forward", str(PANDA), "--t-end", "0.05", "--dt", "0.005", "--initial", "panda_joint2=0.5",
              "--velocity", "panda_joint1=1"]
    assert main([*common, "--out", str(tmp_path / "aba.csv")]) == 0
    assert main([*common, "--method", method, "--ordering", "ABA", "--out", str(tmp_path / "fg.csv")]) == 0
    assert "forward-dynamics graph (ABA ordering)" in capsys.readouterr()[0]
    for prefix in ("q", "qd", "qdd"):
        ref, got = (csv_columns(tmp_path / name, prefix, model.joint_names) for name in ("aba.csv", "fg.csv"))
        assert np.max(np.abs(got - ref)) <= bound(ref)


def test_hybrid_on_a_tree_drives_some_joints_and_leaves_the_others_free(tmp_path, capsys) -> None:
    """At every row the RNEA of the written state gives the written drive forces and zero on the free joints."""
    model = load_spatial(UR5)
    trajectory, out = tmp_path / "two.txt", tmp_path / "hybrid.csv"
    write_trajectory(trajectory, 2)
    code = main(["hybrid", str(UR5), "--trajectory", str(trajectory), "--drive", "elbow_joint,shoulder_pan_joint",
                 "--initial", "wrist_1_joint=0.4", "--velocity", "wrist_2_joint=1", "--ordering", "ABA",
                 "--out", str(out)])
    assert code == 0 and "hybrid dynamics graph, ABA ordering" in capsys.readouterr()[0]
    q, qd, qdd = (csv_columns(out, prefix, model.joint_names) for prefix in ("q", "qd", "qdd"))
    forces = csv_columns(out, "Q", ["elbow_joint", "shoulder_pan_joint"])
    assert q[0, 3] == 0.4 and qd[0, 4] == 1.0
    driven = [model.joint_names.index("elbow_joint"), model.joint_names.index("shoulder_pan_joint")]
    free = [i for i in range(model.dof) if i not in driven]
    for row in range(len(q)):
        ref = inverse_dynamics(model, q[row], qd[row], qdd[row])
        assert np.max(np.abs(ref[free])) <= bound(ref) and np.max(np.abs(ref[driven] - forces[row])) <= bound(ref)


@pytest.mark.parametrize("args, problem", [
    (["forward", str(UR5), "--t-end", "1", "--dt", "0.01", "--ordering", "RNEA", "--out", "o.csv"],
     "--ordering: for a URDF with --method fg-dc or fg-ic"),
    (["forward", str(MECHANISMS / "urdf" / "five_bar_3d.urdf"), "--t-end", "1", "--dt", "0.01", "--method", "fg-dc",
      "--out", "o.csv"], "five_bar_3d: the dynamics graph is rank-deficient by 3"),
])
def test_bad_orderings_and_closed_chains_are_one_line(capsys, args, problem) -> None:
    assert main(args) == 2
    err = capsys.readouterr()[1]
    assert problem in err and len(err.strip().splitlines()) == 1


def test_a_tree_ordering_on_a_planar_file_is_one_line(tmp_path, capsys) -> None:
    trajectory = tmp_path / "theta.txt"
    write_trajectory(trajectory, 1)
    assert main(["inverse", str(PLANAR), "--trajectory", str(trajectory), "--drive", "theta", "--method", "fg",
                 "--ordering", "ABA", "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr()[1]
    assert "--ordering ABA: for URDF trees only (a planar mechanism: COLAMD, METIS, NATURAL)" in err
    assert len(err.strip().splitlines()) == 1


def test_an_unknown_ordering_name_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["inverse", str(UR5), "--trajectory", "T", "--drive", "elbow_joint", "--method", "fg",
              "--ordering", "rnea", "--out", "o.csv"])
    err = capsys.readouterr()[1]
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "--ordering: invalid choice: 'rnea' (choose from 'RNEA', 'CRBA', 'ABA', 'COLAMD', 'METIS', 'NATURAL')" in err
