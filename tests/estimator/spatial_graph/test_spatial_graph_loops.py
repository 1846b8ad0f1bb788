"""Closed chains as dynamics graphs (Xie and Dellaert §VII): a loop joint in the graph. The five-bar
as a 3D loop with the planar factor on its loop wrench gives the planar package's motor torques; without
it the rank deficiency (3: the out-of-plane wrench) is reported; forward dynamics against the spatial
KKT solver (estimator.spatial.closed_dynamics) under the fill-reducing orderings, on the five-bar, the
RSSR and the Delta; minimum-torque factors for three motors on the five-bar; the tree orderings are
refused on a closed chain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
from conftest import deviation

from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics as planar_inverse
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.spatial import assembly, closed_dynamics
from estimator.spatial.dynamics import inverse_dynamics
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import SpatialModel, load_spatial
from estimator.spatial_graph import problems
from estimator.spatial_graph.orderings import FILL_REDUCING

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / "configs" / "mechanisms" / "urdf"


def moving_state(model: SpatialModel, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An assembled configuration (Newton to |Φ| ≤ 1e-15, or the 1e-12 it can reach), consistent
    velocities of random independent rates and random actuator forces."""
    q = assembly.assemble(model, model.initial, [], tol=1e-15)
    rng = np.random.default_rng(seed)
    independent = assembly.independent_joints(model, q)
    qd = assembly.velocities(model, q, rng.uniform(-1, 1, len(independent)), independent)
    tau = np.zeros(model.dof)
    tau[model.actuated] = rng.uniform(-2, 2, len(model.actuated))
    return q, qd, tau


def driven_mask(model: SpatialModel, driven: list[int]) -> np.ndarray:
    known = np.zeros(model.dof, bool)
    known[driven] = True
    return known


def test_the_five_bar_with_the_planar_factor_matches_the_planar_five_bar() -> None:
    """Inverse dynamics along configs/trajectories/five_bar.txt (left, right driven; the elbows
    unactuated): the graph at the spatial KKT solver's states gives the planar package's torques."""
    samples = load_drive_trajectory(REPO / "configs" / "trajectories" / "five_bar.txt", 2)
    planar = planar_inverse(load_mechanism(REPO / "configs" / "mechanisms" / "five_bar.yaml"), ["left", "right"],
                            samples.t, *samples.derivatives()).trajectory
    model = load_spatial(URDF / "five_bar_3d.urdf")
    driven = [model.joint_names.index("left"), model.joint_names.index("right")]
    spatial = closed_dynamics.inverse(model, driven, samples.t, *samples.derivatives()).trajectory
    for k in range(0, len(samples.t), 100):
        for order in FILL_REDUCING:
            got = problems.hybrid_dynamics(model, spatial.q[k], spatial.qd[k], spatial.qdd[k], np.zeros(model.dof),
                                           driven_mask(model, driven), order, planar=["C"])
            ref = np.array([planar.forces["left"][k], planar.forces["right"][k]])
            assert deviation(got.tau[driven], ref) <= 1e-10
            assert deviation(got.qdd, spatial.qdd[k]) <= 1e-10


@pytest.mark.parametrize("order", FILL_REDUCING)
def test_five_bar_and_rssr_forward_dynamics_match_the_kkt_solver(order: str) -> None:
    for robot, planar in (("five_bar_3d", ["C"]), ("rssr", [])):
        model = load_spatial(URDF / f"{robot}.urdf")
        for seed in range(2):
            q, qd, tau = moving_state(model, seed)
            got = problems.hybrid_dynamics(model, q, qd, np.zeros(model.dof), tau, np.zeros(model.dof, bool), order,
                                           planar=planar)
            assert deviation(got.qdd, closed_dynamics.accelerations(model, q, qd, tau)[0]) <= 1e-10


@pytest.mark.parametrize("order", FILL_REDUCING)
def test_the_delta(order: str) -> None:
    """Inverse dynamics on the nine independent joints and forward dynamics within 1e-10 of the KKT
    solver's, though the rods' spins have 4e-7 kg·m² of inertia against loop wrenches of tens of
    newtons: the loop wrench acts on the rod at A's origin, as Φ = r_A − r_B has it, not at B's
    (|Φ| ≈ 5e-13 m off the spin axis), and the solution is refined once (spatial_graph.solve)."""
    model = load_spatial(URDF / "delta.urdf")
    for seed in range(2):
        q, qd, tau = moving_state(model, seed)
        driven = assembly.independent_joints(model, q)
        acc = np.random.default_rng(seed + 1).uniform(-1, 1, len(driven))
        ref_qdd, _, ref_forces = closed_dynamics.driven_accelerations(model, q, qd, driven, acc)
        qdd = np.zeros(model.dof)
        qdd[driven] = acc
        got = problems.hybrid_dynamics(model, q, qd, qdd, np.zeros(model.dof), driven_mask(model, driven), order)
        assert deviation(got.tau[driven], ref_forces) <= 1e-10 and deviation(got.qdd, ref_qdd) <= 1e-10
        forward = problems.forward_dynamics(model, q, qd, tau, order)
        assert deviation(forward.qdd, closed_dynamics.accelerations(model, q, qd, tau)[0]) <= 1e-10


def test_without_the_planar_factor_the_rank_deficiency_is_reported() -> None:
    model = load_spatial(URDF / "five_bar_3d.urdf")
    q, qd, tau = moving_state(model, 0)
    with pytest.raises(MbstateError, match="five_bar_3d: the dynamics graph is rank-deficient by 3 "):
        problems.forward_dynamics(model, q, qd, tau)


def test_tree_orderings_and_unknown_loops_are_refused_on_a_closed_chain() -> None:
    model = load_spatial(URDF / "five_bar_3d.urdf")
    q, qd, tau = moving_state(model, 0)
    with pytest.raises(MbstateError, match="ordering ABA: defined on trees"):
        problems.hybrid_dynamics(model, q, qd, np.zeros(4), tau, np.zeros(4, bool), "ABA", planar=["C"])
    with pytest.raises(MbstateError, match="planar factor: 'D' is not a loop of five_bar_3d"):
        problems.hybrid_dynamics(model, q, qd, np.zeros(4), tau, np.zeros(4, bool), planar=["D"])


@pytest.mark.parametrize("order", FILL_REDUCING)
def test_three_motors_on_the_five_bar_get_the_minimum_norm_torques_of_the_same_motion(order: str) -> None:
    """Motors on left, left_elbow and right (redundant: two degrees of freedom), the motion of left and
    right prescribed: the minimum-torque factors give min ‖τ‖ over Nᵀ E τ = Nᵀ Q (N spans the loop's
    motions, Q the tree's RNEA), and those torques drive the same accelerations."""
    model = load_spatial(URDF / "five_bar_3d.urdf")
    q, qd, _ = moving_state(model, 3)
    driven, motors = [0, 2], [0, 1, 2]
    qdd = closed_dynamics.driven_accelerations(model, q, qd, driven, np.array([2.0, -1.0]))[0]
    passive = np.isin(np.arange(model.dof), motors, invert=True)
    got = problems.hybrid_dynamics(model, q, qd, qdd, np.zeros(model.dof), driven_mask(model, driven), order,
                                   planar=["C"], tau_known=passive, minimum_torque=True)
    motion = scipy.linalg.null_space(loop_terms(model, q, qd).jac)
    ref = np.linalg.pinv(motion.T[:, motors]) @ motion.T @ inverse_dynamics(model, q, qd, qdd)
    assert deviation(got.tau[motors], ref) <= 1e-10 and np.all(got.tau[passive] == 0.0)
    assert deviation(got.qdd, qdd) <= 1e-10
    forward = problems.hybrid_dynamics(model, q, qd, np.zeros(model.dof), got.tau, np.zeros(model.dof, bool), order,
                                       planar=["C"])
    assert deviation(forward.qdd, qdd) <= 1e-10
