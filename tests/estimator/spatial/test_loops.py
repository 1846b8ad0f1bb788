"""Loop closures of spatial closed chains (issue 38): Φ and its Jacobians against central differences,
the mobility from the rank of Φq, the protocol's step rows, and the sidecar's one-line errors.

Central differences with step h = 1e-6: truncation h²·|Φ'''| ≈ 1e-12 and rounding eps·|Φ|/h ≈ 1e-10 on
these metre-sized chains, so 1e-8 · max(1, ‖ref‖∞) catches a wrong term (a missing factor 2 in Φ̈q
is of the size of the term itself) without flagging rounding.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from loops_reference import reference_loop_terms, reference_weighted_hessian

from estimator.assembly import assembled
from estimator.errors import MbstateError
from estimator.model_protocol import constraint_rows, free_accelerations, step_rows
from estimator.spatial import assembly
from estimator.spatial.dynamics import mass_matrix
from estimator.spatial.kinematics import body_kinematics
from estimator.spatial.loops import loop_terms, row_count, row_names, weighted_hessian
from estimator.spatial.model import SpatialModel, load_spatial

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
CHAINS = ("rssr", "delta", "five_bar_3d")
STEP = 1e-6


def close(ours: np.ndarray, ref: np.ndarray, tol: float = 1e-8) -> None:
    assert np.max(np.abs(ours - ref), initial=0.0) <= tol * max(1.0, np.max(np.abs(ref), initial=0.0))


def welded(tmp_path: Path) -> SpatialModel:
    """The RSSR with a weld in place of its ball closure (over-constrained: 6 rows, 5 joints; the
    derivatives hold at any q, on the manifold or not)."""
    sidecar = (URDF / "rssr.yaml").read_text().replace("type: ball", "type: weld")
    (tmp_path / "welded.yaml").write_text(sidecar)
    return load_spatial(URDF / "rssr.urdf", tmp_path / "welded.yaml")


def central(f, x: np.ndarray) -> np.ndarray:
    return np.column_stack([(f(x + STEP * e) - f(x - STEP * e)) / (2 * STEP) for e in np.eye(len(x))])


def models(tmp_path: Path) -> list[SpatialModel]:
    return [load_spatial(URDF / f"{name}.urdf") for name in CHAINS] + [welded(tmp_path)]


def test_loop_jacobians_against_central_differences(tmp_path: Path) -> None:
    """Φq = ∂Φ/∂q, Φ̇q = ∂(Φq q̇)/∂q, Φ̈q = ∂(Φq q̈ + Φ̇q q̇)/∂q, and along a path q(t) with q̇, q̈:
    dΦ/dt = Φq q̇, d(Φq q̇)/dt = Φq q̈ + Φ̇q q̇ (ball, revolute and weld rows; seeded states off the
    manifold)."""
    for model in models(tmp_path):
        rng = np.random.default_rng(7)
        for _ in range(3):
            q, qd, qdd = (model.initial + 0.3 * rng.standard_normal(model.dof), rng.uniform(-2, 2, model.dof),
                          rng.uniform(-5, 5, model.dof))
            terms = loop_terms(model, q, qd, qdd)
            close(terms.jac, central(lambda x: loop_terms(model, x, qd).phi, q))
            close(terms.rate, central(lambda x: loop_terms(model, x, qd).jac @ qd, q))
            close(terms.accel, central(lambda x: (lambda t: t.jac @ qdd + t.rate @ qd)(loop_terms(model, x, qd)), q))

            def path(t: np.ndarray):
                return loop_terms(model, q + qd * t[0] + 0.5 * qdd * t[0] ** 2, qd + qdd * t[0])

            close(central(lambda t: path(t).phi, np.zeros(1))[:, 0], terms.jac @ qd)
            close(central(lambda t: path(t).jac @ (qd + qdd * t[0]), np.zeros(1))[:, 0],
                  terms.jac @ qdd + terms.rate @ qd)


def test_the_compiled_loop_terms_against_the_numpy_sweeps(tmp_path: Path) -> None:
    """The kernels (estimator.spatial.loop_kernels) against the numpy sweeps they replaced
    (tests/loops_reference.py): Φ, Φq, Φ̇q, Φ̈q and the weighted Hessian (closed form against n sweeps of
    Φ̇qᵀλ) at seeded states off the manifold, ball, revolute and weld rows, within 1e-12 · max(1, ‖ref‖∞):
    the same sums in another order (measured 2026-11-27: at most 9.5e-16)."""
    for model in models(tmp_path):
        rng = np.random.default_rng(5)
        for _ in range(3):
            q, qd, qdd = (model.initial + 0.3 * rng.standard_normal(model.dof), rng.uniform(-2, 2, model.dof),
                          rng.uniform(-5, 5, model.dof))
            ours, ref = loop_terms(model, q, qd, qdd), reference_loop_terms(model, q, qd, qdd)
            for name in ("phi", "jac", "rate", "accel"):
                close(getattr(ours, name), getattr(ref, name), 1e-12)
            close(loop_terms(model, q, qd).rate, ref.rate, 1e-12)
            lam = rng.standard_normal(row_count(model))
            close(weighted_hessian(model, q, lam), reference_weighted_hessian(model, q, lam), 1e-12)


@pytest.mark.parametrize("name, rank, dof, independent", [
    ("rssr", 3, 2, ["crank", "coupler"]),  # the coupler's spin between its ball joints is a mobility
    ("delta", 15, 9, ["arm0", "platform_b1", "rod0m", "arm1", "rod1p", "rod1m", "arm2", "rod2p", "rod2m"]),
    ("five_bar_3d", 2, 2, ["left", "right"]),  # 5 rows of rank 2: Grübler 6·4 − 5·5 = −1
])
def test_mobility_from_the_rank(name: str, rank: int, dof: int, independent: list[str]) -> None:
    model = load_spatial(URDF / f"{name}.urdf")
    q = assembly.assemble(model, model.initial)
    jac = loop_terms(model, q, np.zeros(model.dof)).jac
    assert np.max(np.abs(loop_terms(model, q, np.zeros(model.dof)).phi)) <= 1e-12
    assert assembly.rank(jac) == rank and model.dof - rank == dof
    assert [model.joint_names[k] for k in assembly.independent_joints(model, q)] == independent
    rows = assembly.independent_rows(jac)
    assert len(rows) == rank and assembly.rank(jac[rows]) == rank


def test_assembly_holds_joints_and_stays_on_the_rssr_branch() -> None:
    """The crank turns fully: assembled every 15°, the loop closes to 1e-12 with the crank held."""
    model = load_spatial(URDF / "rssr.urdf")
    q, crank = model.initial.copy(), model.joint_names.index("crank")
    for angle in np.radians(np.arange(0.0, 361.0, 15.0)):
        guess = q.copy()
        guess[crank] = angle
        q = assembly.assemble(model, guess, [crank])
        assert q[crank] == angle and np.max(np.abs(loop_terms(model, q, np.zeros(model.dof)).phi)) <= 1e-12


def test_far_held_joints_are_reached_on_the_files_branch() -> None:
    """estimator.assembly.assembled moves the Delta's motors 1.1 rad from its file in stages: its platform
    stays below the base as drawn; one solve from the file lands it above (the forward kinematics' other
    branch)."""
    model = load_spatial(URDF / "delta.urdf")
    held = {"arm0": 1.11, "arm1": 0.76, "arm2": 0.91}
    motors = [model.joint_names.index(name) for name in held]
    platform, zero = model.link_names.index("platform"), np.zeros(model.dof)

    def height(q: np.ndarray) -> float:
        return float(body_kinematics(model, q, zero, zero).pos[platform, 2])

    q = assembled(model, held)
    assert list(q[motors]) == list(held.values()) and np.max(np.abs(loop_terms(model, q, zero).phi)) <= 1e-12
    assert height(model.initial) < 0.0 and height(q) < 0.0
    jumped = model.initial.copy()
    jumped[motors] = list(held.values())
    assert height(assembly.assemble(model, jumped, motors)) > 0.0


def test_velocity_and_acceleration_problems() -> None:
    model = load_spatial(URDF / "delta.urdf")
    rng = np.random.default_rng(2)
    held = assembly.independent_joints(model, model.initial)
    q = assembly.assemble(model, model.initial + 0.2 * np.isin(np.arange(model.dof), held), held)
    qd = assembly.velocities(model, q, rng.uniform(-1, 1, len(held)), held)
    qdd = assembly.accelerations(model, q, qd, rng.uniform(-1, 1, len(held)), held)
    terms = loop_terms(model, q, qd)
    close(terms.jac @ qd, np.zeros(row_count(model)), 1e-12)
    close(terms.jac @ qdd + terms.rate @ qd, np.zeros(row_count(model)), 1e-12)


@pytest.mark.parametrize("name", ["rssr", "five_bar_3d"])
def test_the_projection_is_m_orthogonal(name: str) -> None:
    """assembly.project against the closed form of the M-orthogonal projection: the rate correction Δ
    is M-orthogonal to the loops' tangent space (Nᵀ M Δ = 0, N an orthonormal basis of Φq's null space
    by SVD, independent of the saddle solve) and takes Φq q̇ to 0, so T drops by exactly ½ ΔᵀMΔ; the
    five-bar's 3 redundant rows included. Positions: Φ back to 1e-13 m."""
    model = load_spatial(URDF / f"{name}.urdf")
    rng = np.random.default_rng(5)
    held = assembly.independent_joints(model, model.initial)
    q = assembly.assemble(model, model.initial + 0.2 * np.isin(np.arange(model.dof), held), held)
    qd = assembly.velocities(model, q, rng.uniform(-1, 1, len(held)), held) + 1e-3 * rng.uniform(-1, 1, model.dof)
    _, fixed = assembly.project(model, q, qd)
    jac, mass = loop_terms(model, q, np.zeros(model.dof)).jac, mass_matrix(model, q)
    _, sigma, vt = np.linalg.svd(jac)
    null = vt[int(np.sum(sigma > 1e-9 * sigma[0])):].T
    delta = fixed - qd
    close(null.T @ mass @ delta, np.zeros(null.shape[1]), 1e-12)
    close(jac @ fixed, np.zeros(row_count(model)), 1e-12)
    assert abs(0.5 * fixed @ mass @ fixed - (0.5 * qd @ mass @ qd - 0.5 * delta @ mass @ delta)) <= 1e-14
    moved, _ = assembly.project(model, q + 1e-4 * rng.uniform(-1, 1, model.dof), fixed)
    assert np.max(np.abs(loop_terms(model, moved, np.zeros(model.dof)).phi)) <= 1e-13


def test_step_rows_jacobian_against_central_differences() -> None:
    """The protocol's step rows on a closed chain (S the independent rows of the five-bar's redundant
    five, the RSSR's three): the Jacobian over [q, q̇, q̈, λ, F] by central differences."""
    for name in ("five_bar_3d", "rssr"):
        model = load_spatial(URDF / f"{name}.urdf")
        n, rng = model.dof, np.random.default_rng(5)
        q = model.initial + 0.2 * rng.standard_normal(n)
        rows = assembly.independent_rows(loop_terms(model, q, np.zeros(n)).jac)
        selection = model.actuation()
        x = np.concatenate((q, rng.uniform(-2, 2, 2 * n), rng.uniform(-1, 1, len(rows) + selection.shape[1])))

        def rows_at(x: np.ndarray) -> np.ndarray:
            parts = np.split(x, np.cumsum([n, n, n, len(rows)]))
            return step_rows(model, rows, selection, *parts, False)[0]

        error, jacobian = step_rows(model, rows, selection, *np.split(x, np.cumsum([n, n, n, len(rows)])), True)
        close(error, rows_at(x), 0.0)
        close(jacobian, central(rows_at, x))
        c, dc = constraint_rows(model, rows, x[:n], x[n:2 * n], x[2 * n:3 * n], True)
        size = len(rows)
        close(c, np.concatenate((error[:2 * size], error[2 * size + n:])), 0.0)
        close(dc, np.concatenate((jacobian[:2 * size, :3 * n], jacobian[2 * size + n:, :3 * n])), 0.0)


def test_free_motion_zeroes_the_step_rows() -> None:
    """(q̈, λ) of free_accelerations at an assembled state with consistent q̇: every step row is 0."""
    model = load_spatial(URDF / "delta.urdf")
    held = assembly.independent_joints(model, model.initial)
    q = model.initial
    qd = assembly.velocities(model, q, np.linspace(-1, 1, len(held)), held)
    qdd, lam = free_accelerations(model, q, qd)
    rows = np.arange(row_count(model))
    error = step_rows(model, rows, np.zeros((model.dof, 0)), q, qd, qdd, lam, np.zeros(0), False)[0]
    close(error, np.zeros_like(error), 1e-10)


@pytest.mark.parametrize("entry, problem", [
    ("{name: L, type: hinge, frames: [coupler_end, rocker_tip]}", "sidecar.loops[0].type: must be one of ball"),
    ("{name: L, type: ball, frames: [coupler_end, nowhere]}", "'nowhere' is not a link of the URDF or a sidecar"),
    ("{name: L, type: ball, frames: [rocker_tip, rocker_tip]}", "the two frames are the same"),
    ("{name: L, type: ball, frames: rocker_tip}", "must be a list of two frame names"),
    ("{name: L, type: ball, frames: [coupler_end, rocker_tip], axis: z}", "axis"),
])
def test_bad_loops_are_one_line(tmp_path: Path, entry: str, problem: str) -> None:
    text = (URDF / "rssr.yaml").read_text().split("loops:")[0] + f"loops:\n  - {entry}\n"
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(MbstateError, match=re.escape(problem)) as info:
        load_spatial(URDF / "rssr.urdf", tmp_path / "bad.yaml")
    assert "\n" not in str(info.value)


def test_row_names_and_the_initial_key(tmp_path: Path) -> None:
    model = load_spatial(URDF / "five_bar_3d.urdf")
    assert row_names(model) == ("C.x", "C.y", "C.z", "C.axis_x", "C.axis_y")
    assert model.initial[model.joint_names.index("left")] == pytest.approx(np.radians(100.0))
    shutil.copy(URDF / "rssr.urdf", tmp_path / "rssr.urdf")
    (tmp_path / "rssr.yaml").write_text((URDF / "rssr.yaml").read_text() + "initial: {ball_B: 1}\n")
    with pytest.raises(MbstateError, match="sidecar.initial.ball_B: 'ball_B' is not a movable joint"):
        load_spatial(tmp_path / "rssr.urdf")
