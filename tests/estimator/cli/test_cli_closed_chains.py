"""The commands on URDF closed chains (issue 38): ``check`` prints the loops' rank, degrees of freedom,
residuals and independent joints; ``forward``, ``inverse``, ``statics`` and ``hybrid`` run them; a
chain without mobility and bad arguments are one line with exit code 2."""

import json
import shutil

import numpy as np
from conftest import MECHANISMS, csv_columns

from estimator.cli import main
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import load_spatial

URDF = MECHANISMS / "urdf"


def test_check_reports_rank_mobility_and_independent_joints(capsys) -> None:
    code = main(["check", str(URDF / "five_bar_3d.urdf"), "--json"])
    info = json.loads(capsys.readouterr()[0])
    assert code == 0
    assert (info["n"], info["m"], info["rank"], info["redundant"], info["degrees_of_freedom"]) == (4, 5, 2, 3, 2)
    assert info["independent_joints"] == ["left", "right"]
    assert max(abs(c["residual"]) for c in info["constraints"]) <= 1e-12
    code = main(["check", str(URDF / "rssr.urdf")])
    lines = capsys.readouterr()[0].splitlines()
    assert code == 0
    assert "rank of the constraint Jacobian: 3 (0 redundant rows)" in lines and "degrees of freedom: 2" in lines
    assert "suggested independent joints: crank, coupler" in lines


def locked_five_bar(tmp_path):
    """The five-bar with both cranks welded to the ground: no mobility."""
    shutil.copy(URDF / "five_bar_3d.urdf", tmp_path / "locked.urdf")
    (tmp_path / "locked.yaml").write_text(
        "gravity: [0, -9.81, 0]\n"
        "frames:\n  - {name: left_tip, link: left_elbow_link, xyz: [0.5, 0, 0]}\n"
        "  - {name: right_tip, link: right_elbow_link, xyz: [0.5, 0, 0]}\n"
        "  - {name: E, link: base, xyz: [0.5, 0, 0]}\n"
        "loops:\n  - {name: C, type: revolute, frames: [left_tip, right_tip]}\n"
        "  - {name: A, type: weld, frames: [left_link, base]}\n  - {name: E, type: weld, frames: [right_link, E]}\n"
        "initial: {left: 0.1, right: 0.1, left_elbow: 1.0, right_elbow: 2.0}\n")
    return tmp_path / "locked.urdf"


def test_no_mobility_is_reported_and_forward_refuses_it(tmp_path, capsys) -> None:
    path = locked_five_bar(tmp_path)
    assert main(["check", str(path)]) == 0
    assert "degrees of freedom: 0 (no mobility: a structure)" in capsys.readouterr()[0].splitlines()
    code = main(["forward", str(path), "--t-end", "0.01", "--dt", "0.001", "--out", str(tmp_path / "x.csv")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the loops leave no mobility" in err


def test_forward_keeps_the_loop_closed(tmp_path, capsys) -> None:
    out = tmp_path / "rssr.csv"
    code = main(["forward", str(URDF / "rssr.urdf"), "--t-end", "0.2", "--dt", "0.001", "--velocity", "crank=3",
                 "--out", str(out)])
    assert code == 0 and "max |Φ| = " in capsys.readouterr()[0]
    model = load_spatial(URDF / "rssr.urdf")
    q, qd = csv_columns(out, "q", model.joint_names), csv_columns(out, "qd", model.joint_names)
    assert abs(qd[0, model.joint_names.index("crank")] - 3.0) <= 1e-9  # the start, projected
    assert max(np.max(np.abs(loop_terms(model, x, v).phi)) for x, v in zip(q, qd)) <= 1e-12


def test_inverse_of_the_delta_with_reactions(tmp_path, capsys) -> None:
    model = load_spatial(URDF / "delta.urdf")
    drives = ["arm0", "platform_b1", "rod0m", "arm1", "rod1p", "rod1m", "arm2", "rod2p", "rod2m"]
    t = np.arange(0.0, 0.5001, 0.005)
    trajectory = tmp_path / "delta.txt"
    np.savetxt(trajectory, np.column_stack([t] + [model.initial[model.joint_names.index(name)]
                                                  + 0.1 * np.sin(2 * t + k) for k, name in enumerate(drives)]))
    out = tmp_path / "delta.csv"
    code = main(["inverse", str(URDF / "delta.urdf"), "--trajectory", str(trajectory), "--drive", ",".join(drives),
                 "--out", str(out)])
    text = capsys.readouterr()[0]
    assert code == 0 and "lambda columns: 0: ball_0m.x" in text and "loop ball_2m: reaction up to" in text
    assert csv_columns(out, "Q", drives).shape == (len(t), 9) and csv_columns(out, "lambda", range(15)).shape == (len(t), 15)
    np.savetxt(trajectory, np.column_stack((t, np.zeros((len(t), 3)))))
    code = main(["inverse", str(URDF / "delta.urdf"), "--trajectory", str(trajectory), "--drive", "arm0,arm1,arm2",
                 "--out", str(out)])
    err = capsys.readouterr()[1]
    assert code == 2 and "delta has 9 degrees of freedom but 3 driven joints were given" in err


def test_statics_matches_the_planar_five_bar(tmp_path, capsys) -> None:
    held = "left=1.8,right=1.3"
    assert main(["statics", str(MECHANISMS / "five_bar.yaml"), "--hold", held]) == 0
    planar = [line for line in capsys.readouterr()[0].splitlines() if "(holding force)" in line]
    assert main(["statics", str(URDF / "five_bar_3d.urdf"), "--hold", held]) == 0
    spatial = [line for line in capsys.readouterr()[0].splitlines() if "(holding force)" in line]
    assert len(planar) == 2 and spatial == planar  # "  Q.left = -1.265286243 (holding force)": 10 digits


def test_hybrid_runs_on_a_closed_chain(tmp_path, capsys) -> None:
    t = np.arange(0.0, 0.2001, 0.005)
    trajectory = tmp_path / "crank.txt"
    np.savetxt(trajectory, np.column_stack((t, 0.5 * t ** 2)))
    out = tmp_path / "hybrid.csv"
    code = main(["hybrid", str(URDF / "rssr.urdf"), "--trajectory", str(trajectory), "--drive", "crank",
                 "--out", str(out)])
    assert code == 0 and "Q.crank" in capsys.readouterr()[0]
    np.testing.assert_allclose(csv_columns(out, "q", ["crank"])[:, 0], 0.5 * t ** 2, atol=1e-12)
