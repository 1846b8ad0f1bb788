"""The dynamics graphs on URDF closed chains from the command line (issue 40, Xie and Dellaert §VII):
``inverse --method fg`` against the classical closed-chain output (q, q̇, q̈ and the drive forces,
‖Δ‖∞ ≤ 1e-10 · max(1, ‖ref‖∞)) under the fill-reducing orderings, the planar factor by
``--planar-loops`` and the rank deficiency without it, ``forward --method fg-dc|fg-ic`` and ``hybrid``
against the KKT accelerations at every written state, ``--explain``, and one line with exit code 2
for the tree orderings and misplaced options."""

import numpy as np
import pytest
from conftest import MECHANISMS, csv_columns, deviation

from estimator.cli import main
from estimator.spatial import closed_dynamics
from estimator.spatial.model import load_spatial

URDF = MECHANISMS / "urdf"
FIVE_BAR = URDF / "five_bar_3d.urdf"
RSSR = URDF / "rssr.urdf"


def five_bar_drives(path) -> list[str]:
    """A short motion of the five-bar's motors from its sidecar's initial pose."""
    model = load_spatial(FIVE_BAR)
    t = np.arange(0.0, 0.1001, 0.005)
    drives = ["left", "right"]
    start = [model.initial[model.joint_names.index(name)] for name in drives]
    np.savetxt(path, np.column_stack((t, start[0] + 0.5 * (1 - np.cos(2 * t)), start[1] + 0.3 * (1 - np.cos(3 * t)))))
    return drives


def one_line_error(capsys, args: list[str], problem: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr()[1]
    assert problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("order", ["COLAMD", "METIS", "NATURAL"])
def test_inverse_fg_of_the_five_bar_matches_the_classical_output(tmp_path, capsys, order: str) -> None:
    model = load_spatial(FIVE_BAR)
    trajectory = tmp_path / "drives.txt"
    drives = five_bar_drives(trajectory)
    common = ["inverse", str(FIVE_BAR), "--trajectory", str(trajectory), "--drive", ",".join(drives)]
    assert main([*common, "--out", str(tmp_path / "classical.csv")]) == 0
    assert main([*common, "--method", "fg", "--ordering", order, "--planar-loops", "C",
                 "--out", str(tmp_path / "fg.csv")]) == 0
    assert f"closed-chain dynamics graph, {order} ordering" in capsys.readouterr()[0]
    for prefix, names in (("q", model.joint_names), ("qd", model.joint_names), ("qdd", model.joint_names),
                          ("Q", drives)):
        ref, got = (csv_columns(tmp_path / name, prefix, names) for name in ("classical.csv", "fg.csv"))
        assert deviation(got, ref) <= 1e-10, prefix


def test_inverse_fg_of_the_delta_matches_the_classical_output(tmp_path, capsys) -> None:
    model = load_spatial(URDF / "delta.urdf")
    drives = ["arm0", "platform_b1", "rod0m", "arm1", "rod1p", "rod1m", "arm2", "rod2p", "rod2m"]
    t = np.arange(0.0, 0.0501, 0.005)
    trajectory = tmp_path / "delta.txt"
    np.savetxt(trajectory, np.column_stack([t] + [model.initial[model.joint_names.index(name)]
                                                  + 0.1 * np.sin(2 * t + k) for k, name in enumerate(drives)]))
    common = ["inverse", str(URDF / "delta.urdf"), "--trajectory", str(trajectory), "--drive", ",".join(drives)]
    assert main([*common, "--out", str(tmp_path / "classical.csv")]) == 0
    assert main([*common, "--method", "fg", "--out", str(tmp_path / "fg.csv")]) == 0
    for prefix, names in (("qdd", model.joint_names), ("Q", drives)):
        ref, got = (csv_columns(tmp_path / name, prefix, names) for name in ("classical.csv", "fg.csv"))
        assert deviation(got, ref) <= 1e-10, prefix


def test_a_planar_loop_without_the_planar_factor_is_one_line(tmp_path, capsys) -> None:
    trajectory = tmp_path / "drives.txt"
    drives = five_bar_drives(trajectory)
    common = ["inverse", str(FIVE_BAR), "--trajectory", str(trajectory), "--drive", ",".join(drives), "--method", "fg",
              "--out", str(tmp_path / "o.csv")]
    one_line_error(capsys, common, "five_bar_3d: the dynamics graph is rank-deficient by 3")
    one_line_error(capsys, [*common, "--planar-loops", "D"], "planar factor: 'D' is not a loop of five_bar_3d (C)")
    one_line_error(capsys, [*common, "--planar-loops", "C", "--ordering", "RNEA"],
                   "ordering RNEA: defined on trees (a closed chain: COLAMD, METIS, NATURAL)")


@pytest.mark.parametrize("method", ["fg-dc", "fg-ic"])
def test_forward_fg_on_a_closed_chain(tmp_path, capsys, method: str) -> None:
    """Every written row's q̈ is the KKT solver's at its state; the motion follows the classical run's
    (RK4's stages are off the loops, where the two formulations' velocity terms differ by O(|Φq q̇|))."""
    model = load_spatial(RSSR)
    common = ["forward", str(RSSR), "--t-end", "0.02", "--dt", "0.002", "--velocity", "crank=3"]
    assert main([*common, "--out", str(tmp_path / "classical.csv")]) == 0
    assert main([*common, "--method", method, "--ordering", "METIS", "--out", str(tmp_path / "fg.csv")]) == 0
    assert "rk4 on the forward-dynamics graph (METIS ordering), projected on the loops" in capsys.readouterr()[0]
    q, qd, qdd = (csv_columns(tmp_path / "fg.csv", prefix, model.joint_names) for prefix in ("q", "qd", "qdd"))
    for row in range(len(q)):
        ref = closed_dynamics.accelerations(model, q[row], qd[row], np.zeros(model.dof))[0]
        assert deviation(qdd[row], ref) <= 1e-10
    assert deviation(q, csv_columns(tmp_path / "classical.csv", "q", model.joint_names)) <= 1e-9


def test_hybrid_on_a_closed_chain_is_the_graph(tmp_path, capsys) -> None:
    """At every row the KKT solver with the crank's written acceleration gives the written q̈ and force."""
    model = load_spatial(RSSR)
    t = np.arange(0.0, 0.0201, 0.005)
    trajectory, out = tmp_path / "crank.txt", tmp_path / "hybrid.csv"
    np.savetxt(trajectory, np.column_stack((t, 0.5 * t ** 2)))
    assert main(["hybrid", str(RSSR), "--trajectory", str(trajectory), "--drive", "crank", "--out", str(out)]) == 0
    assert "closed-chain hybrid dynamics graph, COLAMD ordering" in capsys.readouterr()[0]
    q, qd, qdd = (csv_columns(out, prefix, model.joint_names) for prefix in ("q", "qd", "qdd"))
    force = csv_columns(out, "Q", ["crank"])
    crank = model.joint_names.index("crank")
    for row in range(len(q)):
        ref_qdd, _, ref_force = closed_dynamics.driven_accelerations(model, q[row], qd[row], [crank], qdd[row, [crank]])
        assert deviation(qdd[row], ref_qdd) <= 1e-10 and deviation(force[row], ref_force) <= 1e-10


def test_explain_prints_the_bayes_net(tmp_path, capsys) -> None:
    """UR5 inverse dynamics in the RNEA ordering: the RNEA's passes, 22 edges on a 6R chain."""
    trajectory = tmp_path / "ur5.txt"
    t = np.arange(0.0, 0.0101, 0.005)
    np.savetxt(trajectory, np.column_stack([t] + [0.5 * np.sin(2 * t + k) for k in range(6)]))
    drives = "shoulder_pan_joint,shoulder_lift_joint,elbow_joint,wrist_1_joint,wrist_2_joint,wrist_3_joint"
    assert main(["inverse", str(URDF / "ur5.urdf"), "--trajectory", str(trajectory), "--drive", drives,
                 "--method", "fg", "--ordering", "RNEA", "--explain", "--out", str(tmp_path / "o.csv")]) == 0
    lines = capsys.readouterr()[0].splitlines()
    assert "Bayes net of the RNEA ordering: 18 conditionals, 22 edges (frontal <- parents)" in lines
    assert "  tau[elbow_joint] <- wrench[elbow_joint]" in lines
    assert "  wrench[elbow_joint] <- accel[elbow_joint], wrench[wrist_1_joint]" in lines


@pytest.mark.parametrize("args, problem", [
    (["inverse", str(FIVE_BAR), "--trajectory", "T", "--drive", "left,right", "--planar-loops", "C"],
     "--planar-loops: for the factor-graph method on a URDF closed chain"),
    (["forward", str(URDF / "ur5.urdf"), "--t-end", "1", "--dt", "0.1", "--method", "fg-dc", "--planar-loops", "C"],
     "--planar-loops: for the factor-graph method on a URDF closed chain"),
    (["forward", str(RSSR), "--t-end", "1", "--dt", "0.1", "--explain"],
     "--explain: for the factor-graph method on a URDF file"),
])
def test_misplaced_graph_options_are_one_line(tmp_path, capsys, args: list[str], problem: str) -> None:
    one_line_error(capsys, [*args, "--out", str(tmp_path / "o.csv")], problem)
