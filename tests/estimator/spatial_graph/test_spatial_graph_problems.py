"""Inverse, forward and hybrid dynamics as one graph each (Xie and Dellaert §IV–VI) against the
spatial model's classical recursions (RNEA, ABA, CRBA) under every ordering, and the Bayes nets'
structure: on a 3R chain the RNEA ordering gives the RNEA's 10 edges, CRBA 22 > ABA 18, and a
fill-reducing ordering fewer than ABA, and Table III's hybrid orderings 13 each (the notes' §2.4 counts)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gtsam
import numpy as np
import pytest
from conftest import deviation

from estimator.errors import MbstateError
from estimator.factors import keys
from estimator.spatial.dynamics import body_wrenches, forward_dynamics, inverse_dynamics, mass_matrix
from estimator.spatial.model import SpatialModel, load_spatial
from estimator.spatial_graph import problems
from estimator.spatial_graph.orderings import ORDERINGS, edge_count
from estimator.spatial_graph.solve import eliminate

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
ARMS = ("ur5", "panda", "puma560")
LINK = ('<link name="l{i}"><inertial><origin xyz="0.5 0.02 0"/><mass value="{m}"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>')
JOINT = ('<joint name="j{i}" type="continuous"><parent link="{parent}"/><child link="l{i}"/>'
         '<origin xyz="{x} 0 0"/><axis xyz="0 0 1"/></joint>')


def model_of(robot: str) -> SpatialModel:
    return load_spatial(URDF / f"{robot}.urdf")


def rrr(tmp_path: Path) -> SpatialModel:
    """The paper's 3R chain: three links, parallel revolute axes."""
    body = "".join(LINK.format(i=i, m=1.0 + i) + JOINT.format(i=i, parent="base" if i == 1 else f"l{i - 1}",
                                                             x=0 if i == 1 else 1) for i in (1, 2, 3))
    path = tmp_path / "rrr.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="rrr"><link name="base"/>{body}</robot>')
    return load_spatial(path)


def state(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n)


def three_step(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
               accel_known: np.ndarray, wrench: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Featherstone's hybrid dynamics (RBDA §9.2): inverse dynamics with zero free accelerations,
    forward dynamics of the free joints, inverse dynamics; (q̈, τ)."""
    free = ~accel_known
    bias = inverse_dynamics(model, q, qd, np.where(accel_known, qdd, 0.0), wrench)
    full = qdd.copy()
    full[free] = np.linalg.solve(mass_matrix(model, q)[np.ix_(free, free)], tau[free] - bias[free])
    return full, inverse_dynamics(model, q, qd, full, wrench)


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize("order", ORDERINGS)
def test_inverse_and_forward_graphs_match_rnea_and_aba(robot: str, order: str) -> None:
    model = model_of(robot)
    for seed in range(2):
        q, qd, qdd = state(model.dof, seed)
        tau = inverse_dynamics(model, q, qd, qdd)
        assert deviation(problems.inverse_dynamics(model, q, qd, qdd, order).tau, tau) <= 1e-10
        assert deviation(problems.forward_dynamics(model, q, qd, tau, order).qdd,
                         forward_dynamics(model, q, qd, tau)) <= 1e-10


@pytest.mark.parametrize("robot", ARMS)
@pytest.mark.parametrize("order", ORDERINGS)
def test_hybrid_graph_equals_the_three_step_method(robot: str, order: str) -> None:
    model = model_of(robot)
    q, qd, qdd = state(model.dof, 5)
    tau = np.random.default_rng(6).uniform(-20, 20, model.dof)
    known = np.arange(model.dof) % 2 == 0
    ref_qdd, ref_tau = three_step(model, q, qd, qdd, tau, known)
    got = problems.hybrid_dynamics(model, q, qd, qdd, tau, known, order)
    assert deviation(got.qdd, ref_qdd) <= 1e-10
    assert deviation(got.tau, ref_tau) <= 1e-10


@pytest.mark.parametrize("order", ORDERINGS)
def test_a_tree_with_a_prismatic_joint_friction_and_applied_wrenches(order: str) -> None:
    """test_tree: two branches (the wrench factor sums the child joints), a prismatic lift, damping
    and Coulomb friction, and applied wrenches."""
    model = model_of("test_tree")
    q, qd, qdd = state(model.dof, 9)
    rng = np.random.default_rng(9)
    wrench = body_wrenches(model, {frame.name: rng.normal(size=6) for frame in model.frames if frame.body >= 0})
    tau = inverse_dynamics(model, q, qd, qdd, wrench)
    assert deviation(problems.inverse_dynamics(model, q, qd, qdd, order, wrench).tau, tau) <= 1e-10
    assert deviation(problems.forward_dynamics(model, q, qd, tau, order, wrench).qdd, qdd) <= 1e-10
    known = np.arange(model.dof) % 3 == 1
    ref_qdd, ref_tau = three_step(model, q, qd, qdd, tau, known, wrench)
    got = problems.hybrid_dynamics(model, q, qd, qdd, tau, known, order, wrench)
    assert deviation(got.qdd, ref_qdd) <= 1e-10 and deviation(got.tau, ref_tau) <= 1e-10


def test_3r_edge_counts_recover_rnea_crba_and_aba(tmp_path: Path) -> None:
    model = rrr(tmp_path)
    q, qd, qdd = state(3, 1)
    inverse = {order: problems.inverse_dynamics(model, q, qd, qdd, order).edges for order in ORDERINGS}
    forward = {order: problems.forward_dynamics(model, q, qd, qdd, order).edges for order in ORDERINGS}
    assert inverse["RNEA"] == 10
    assert (forward["CRBA"], forward["ABA"]) == (22, 18)
    assert forward["COLAMD"] < forward["ABA"] and forward["METIS"] < forward["ABA"]


def test_3r_hybrid_orderings_of_table_iii_have_equal_edge_counts(tmp_path: Path) -> None:
    """θ̈₁, τ₂, τ₃ given: the paper's MD and CUSTOM orderings (Table III) give the same Bayes-net edge
    count (13, the notes' count), and the same solution."""
    model = rrr(tmp_path)
    q, qd, qdd = state(3, 4)
    known = np.array([True, False, False])
    graph = problems.hybrid_graph(model, q, qd, qdd, qdd, known)
    torque, accel, body, wrench = keys.JOINT_TORQUE, keys.JOINT_ACCEL, keys.BODY_ACCEL, keys.JOINT_WRENCH
    orders = {"MD": [torque(0), accel(1), accel(2), body(2), wrench(0), body(0), wrench(1), body(1), wrench(2)],
              "CUSTOM": [torque(0), accel(1), accel(2), wrench(0), body(0), body(2), wrench(2), body(1), wrench(1)]}
    solutions = []
    for sequence in orders.values():
        order = gtsam.Ordering()
        for key in sequence:
            order.push_back(key)
        bayes_net = eliminate(graph, order)
        assert edge_count(bayes_net) == 13
        values = bayes_net.optimize()
        solutions.append([values.at(torque(0))[0], values.at(accel(1))[0], values.at(accel(2))[0]])
    reference = problems.hybrid_dynamics(model, q, qd, qdd, qdd, known)
    expected = [reference.tau[0], reference.qdd[1], reference.qdd[2]]
    assert deviation(np.array(solutions[0]), np.array(expected)) <= 1e-12
    assert deviation(np.array(solutions[1]), np.array(expected)) <= 1e-12


def test_6r_edge_counts_without_armature_and_with_the_pumas() -> None:
    """The notes' 6R counts (RNEA 22; CRBA 82, ABA 42, min-degree 32) on the PUMA without its
    armature; the armature puts q̈ᵢ into the torque factor (7) and adds edges to the forward orderings."""
    puma = model_of("puma560")
    bare = dataclasses.replace(puma, armature=np.zeros(puma.dof))
    q, qd, qdd = state(puma.dof, 2)
    counts = {name: (problems.inverse_dynamics(m, q, qd, qdd, "RNEA").edges,
                     *(problems.forward_dynamics(m, q, qd, qdd, order).edges for order in ("CRBA", "ABA", "COLAMD")))
              for name, m in (("bare", bare), ("puma", puma))}
    assert counts["bare"] == (22, 82, 42, 32)
    assert counts["puma"] == (22, 118, 48, 38)


def test_an_unknown_ordering_is_refused() -> None:
    model = model_of("ur5")
    q, qd, qdd = state(model.dof, 0)
    with pytest.raises(MbstateError, match="unknown ordering 'rnea' .*RNEA, CRBA, ABA, COLAMD, METIS, NATURAL"):
        problems.inverse_dynamics(model, q, qd, qdd, "rnea")
