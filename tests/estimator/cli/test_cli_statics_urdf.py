"""``mbstate statics`` on URDF files: the equilibrium against Pinocchio (gravity vanishes on the free
joints, the holding forces and the stiffness are Pinocchio's), the verdict of a hanging, an
inverted and a neutral chain against their closed forms, and one line with exit code 2 for what a
URDF cannot take. Bound as in the other spatial tests, 1e-9 · max(1, ‖ref‖∞): Newton converges
quadratically, so the residual left is rounding (about 1e-14 of the gravity forces)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, cli_exit_code

from estimator.cli import main
from estimator.dynamics.equilibrium import NEUTRAL, STABLE, UNSTABLE
from estimator.spatial.model import load_spatial
from estimator.spatial.statics import solve_statics

pin = pytest.importorskip("pinocchio")

URDF = MECHANISMS / "urdf"
G = 9.81
M1, C1, L1, M2, C2 = 2.0, 0.5, 1.0, 1.0, 0.4  # masses [kg], centres of mass and joint-2 offset along the chain [m]


def chain(path, sign: float, first_axis: str = "0 1 0") -> str:
    """Two links along z at q = 0, hanging (``sign`` −1) or standing (+1), joint 2 about y, joint 1
    about ``first_axis``; written to ``path``."""
    def link(name: str, mass: float, com: float) -> str:
        return (f'<link name="{name}"><inertial><origin xyz="0 0 {sign * com}"/><mass value="{mass}"/>'
                f'<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')

    path.write_text(
        f'<robot name="chain"><link name="base"/>{link("upper", M1, C1)}{link("lower", M2, C2)}'
        f'<joint name="j1" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="{first_axis}"/>'
        '<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>'
        f'<joint name="j2" type="revolute"><parent link="upper"/><child link="lower"/>'
        f'<origin xyz="0 0 {sign * L1}"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="5"/>'
        '</joint></robot>')
    return str(path)


def read_row(path) -> dict[str, float]:
    with open(path) as stream:
        header = stream.readline().strip().split(",")
        values = [float(v) for v in stream.readline().split(",")]
    return dict(zip(header, values))


@pytest.mark.parametrize("robot, hold", [
    ("ur5", {"shoulder_pan_joint": 0.3, "wrist_3_joint": -0.2}),
    ("panda", {"panda_joint1": 0.2, "panda_joint4": -1.5}),
])
def test_equilibrium_against_pinocchio(tmp_path, capsys, robot, hold) -> None:
    path, out = URDF / f"{robot}.urdf", tmp_path / "eq.csv"
    code = main(["statics", str(path), "--hold", ",".join(f"{k}={v}" for k, v in hold.items()), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "stability:" in printed and "multipliers" not in printed
    model = load_spatial(path)
    row = read_row(out)
    assert list(row) == ["t", *(f"q.{name}" for name in model.joint_names), *(f"Q.{name}" for name in hold)]
    q = np.array([row[f"q.{name}"] for name in model.joint_names])
    assert all(q[model.joint_names.index(name)] == value for name, value in hold.items())
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    gravity = pin.computeGeneralizedGravity(pm, pd, q)
    bound = 1e-9 * max(1.0, np.max(np.abs(gravity)))
    free = [i for i, name in enumerate(model.joint_names) if name not in hold]
    assert np.max(np.abs(gravity[free])) <= bound
    for name in hold:
        assert abs(row[f"Q.{name}"] - gravity[model.joint_names.index(name)]) <= bound
    # the verdict's eigenvalues are those of Pinocchio's gravity Hessian over the free joints
    stiffness = pin.computeGeneralizedGravityDerivatives(pm, pd, q)[np.ix_(free, free)]
    expected = np.linalg.eigvalsh(0.5 * (stiffness + stiffness.T))
    result = solve_statics(model, hold)
    np.testing.assert_allclose(result.q, q, rtol=0, atol=0)
    assert np.max(np.abs(result.eigenvalues - expected)) <= 1e-9 * max(1.0, np.max(np.abs(expected)))
    assert f"stability: {result.verdict}" in printed


@pytest.mark.parametrize("sign, verdict", [(-1.0, STABLE), (1.0, UNSTABLE)])
def test_hanging_chain_is_stable_and_inverted_chain_is_not(tmp_path, capsys, sign, verdict) -> None:
    """Both are equilibria at q = 0 (no Newton step); K = ∂²V/∂q² = −sign · g [[m1 c1 + m2 (l1 + c2), m2 c2],
    [m2 c2, m2 c2]] (V = sign · g Σ m z-heights with cosines)."""
    path = chain(tmp_path / "chain.urdf", sign)
    assert main(["statics", path]) == 0
    printed = capsys.readouterr().out
    assert "equilibrium after 0 Newton iterations" in printed and f"stability: {verdict}" in printed
    closed = -sign * G * np.array([[M1 * C1 + M2 * (L1 + C2), M2 * C2], [M2 * C2, M2 * C2]])
    result = solve_statics(load_spatial(path))
    np.testing.assert_allclose(result.eigenvalues, np.linalg.eigvalsh(closed), rtol=1e-12)
    assert ("Newton-Raphson finds the equilibrium nearest q = 0" in printed) == (verdict != STABLE)


def test_held_joint_and_closed_form(tmp_path, capsys) -> None:
    """Hanging chain, j1 held at 0.5: the lower link hangs vertical (j2 = −0.5) and the holder
    carries g (m1 c1 + m2 l1) sin 0.5."""
    assert main(["statics", chain(tmp_path / "chain.urdf", -1.0), "--hold", "j1=0.5"]) == 0
    printed = capsys.readouterr().out
    result = solve_statics(load_spatial(tmp_path / "chain.urdf"), {"j1": 0.5})
    assert result.iterations > 0 and result.verdict == STABLE
    assert result.q[1] == pytest.approx(-0.5, abs=1e-12)
    assert result.held_forces["j1"] == pytest.approx(G * (M1 * C1 + M2 * L1) * np.sin(0.5), abs=1e-12)
    assert "  j2 = -0.5" in printed and "Q.j1 = " in printed


def test_axis_parallel_to_gravity_is_neutral_and_named(tmp_path, capsys) -> None:
    assert main(["statics", chain(tmp_path / "chain.urdf", -1.0, first_axis="0 0 1")]) == 0
    printed = capsys.readouterr().out
    assert f"stability: {NEUTRAL}" in printed
    assert "(no stiffness along j1: the equilibrium is not isolated; hold it to fix it)" in printed


def test_joint_limits_are_not_enforced_but_named(tmp_path, capsys) -> None:
    """Panda from q = 0 hangs joint 2 beyond its ±1.7628 rad: the note names it."""
    assert main(["statics", str(URDF / "panda.urdf")]) == 0
    printed = capsys.readouterr().out
    assert "note: joint limits are not enforced; outside them: panda_joint2" in printed


@pytest.mark.parametrize("args, problem", [
    (["--hold", "knee=1"], "--hold: 'knee' is not a movable joint of ur5"),
    (["--hold", "elbow_joint"], "--hold: expected NAME=VALUE, got 'elbow_joint'"),
])
def test_what_a_urdf_cannot_take_is_one_line(capsys, args, problem) -> None:
    assert cli_exit_code(["statics", str(URDF / "ur5.urdf"), *args]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1


def test_no_equilibrium_is_one_line(capsys) -> None:
    """The test tree's lift is a free prismatic joint with a component along gravity: no equilibrium."""
    assert main(["statics", str(URDF / "test_tree.urdf")]) == 2
    err = capsys.readouterr().err
    assert "static equilibrium not found" in err and len(err.strip().splitlines()) == 1
