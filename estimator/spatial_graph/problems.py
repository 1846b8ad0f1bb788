"""Inverse, forward and hybrid dynamics of a URDF tree or closed chain, each as one linear graph (Xie
and Dellaert §IV–VII), eliminated by QR in a chosen ordering into a Bayes net and solved by
back-substitution with one step of refinement (estimator.spatial_graph.solve).

Hybrid dynamics (§VI) gives in one graph what Featherstone's three steps give (inverse dynamics
with zero free accelerations, forward dynamics of the free joints, inverse dynamics): each joint
has its acceleration or its force given, and the graph gives the other.

A closed chain (§VII): the graph has its loop joints; its inverse dynamics is the hybrid problem with
the actuated joints' accelerations given and the passive joints' forces zero. The tree orderings are
refused on it, and a rank-deficient graph (a planar loop without its planar factor) is reported, not
solved: its dense Jacobian's rank is checked (a few dozen columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import gtsam
import numpy as np

from estimator.errors import MbstateError
from estimator.factors import keys
from estimator.spatial.model import SpatialModel
from estimator.spatial_graph.graph import JointInputs, dynamics_graph, solve_twists
from estimator.spatial_graph.orderings import Structure, ordering, structure
from estimator.spatial_graph.solve import solve
from estimator.spatial_graph.terms import graph_terms


@dataclass(frozen=True)
class GraphSolution:
    """q̈ and τ (n,) of every joint, the body accelerations V̇ and joint wrenches F (n, 6) in body
    frames, and the Bayes net's conditionals (orderings.structure)."""
    qdd: np.ndarray
    tau: np.ndarray
    accel: np.ndarray
    wrench: np.ndarray
    structure: Structure

    @property
    def edges(self) -> int:
        """The Bayes net's edges: the parents summed over its conditionals."""
        return sum(len(parents) for _, parents in self.structure)


def hybrid_graph(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
                 accel_known: np.ndarray, wrench: np.ndarray | None = None, friction: bool = True,
                 planar: Sequence[str] = (), tau_known: np.ndarray | None = None,
                 minimum_torque: bool = False) -> gtsam.GaussianFactorGraph:
    """The hybrid-dynamics graph at (q, q̇) (arguments of hybrid_dynamics)."""
    names = [loop.name for loop in model.loops]
    for name in planar:
        if name not in names:
            raise MbstateError(f"planar factor: {name!r} is not a loop of {model.name} ({', '.join(names) or 'none'})")
    q, qd, qdd, tau = (np.asarray(x, float).reshape(model.dof) for x in (q, qd, qdd, tau))
    terms = graph_terms(model, q, qd, wrench, friction)
    known = np.asarray(accel_known, bool).reshape(model.dof)
    given = ~known if tau_known is None else np.asarray(tau_known, bool).reshape(model.dof)
    return dynamics_graph(terms, solve_twists(terms, qd), JointInputs(qd, qdd, tau, known, given),
                          [names.index(name) for name in planar], minimum_torque)


def check_rank(model: SpatialModel, graph: gtsam.GaussianFactorGraph) -> None:
    """MbstateError when the graph's unknowns are not all determined."""
    jacobian = graph.jacobian()[0]
    deficit = jacobian.shape[1] - np.linalg.matrix_rank(jacobian)
    if deficit:
        raise MbstateError(f"{model.name}: the dynamics graph is rank-deficient by {deficit} (an over-constrained "
                           "loop leaves components of its wrench undetermined: a planar loop needs the planar factor, "
                           f"--planar-loops {','.join(loop.name for loop in model.loops)} on the command line)")


def hybrid_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
                    accel_known: np.ndarray, order: str = "COLAMD", wrench: np.ndarray | None = None,
                    friction: bool = True, planar: Sequence[str] = (), tau_known: np.ndarray | None = None,
                    minimum_torque: bool = False) -> GraphSolution:
    """Given q, q̇ and, per joint, q̈ᵢ where ``accel_known`` (n,) bool and τᵢ where ``tau_known``
    (default: where q̈ᵢ is not): every q̈ and τ by the graph eliminated in ``order`` (orderings.ORDERINGS).
    ``wrench`` (n, 6): applied body wrenches; ``planar``: the loops that get the planar factor;
    ``minimum_torque``: the minimum-norm unknown forces (redundant actuation: joints with neither known)."""
    known = np.asarray(accel_known, bool).reshape(model.dof)
    given = ~known if tau_known is None else np.asarray(tau_known, bool).reshape(model.dof)
    qdd, tau = (np.asarray(x, float).reshape(model.dof) for x in (qdd, tau))
    graph = hybrid_graph(model, q, qd, qdd, tau, known, wrench, friction, planar, given, minimum_torque)
    sequence = ordering(order, graph, model.dof, bool(model.loops))
    if model.loops:
        check_rank(model, graph)
    solved = solve(graph, sequence)
    values = solved.values
    n = model.dof
    solved_qdd = [qdd[i] if known[i] else values.at(keys.JOINT_ACCEL(i))[0] for i in range(n)]
    solved_tau = [tau[i] if given[i] else values.at(keys.JOINT_TORQUE(i))[0] for i in range(n)]
    return GraphSolution(qdd=np.array(solved_qdd), tau=np.array(solved_tau),
                         accel=np.array([values.at(keys.BODY_ACCEL(i)) for i in range(n)]),
                         wrench=np.array([values.at(keys.JOINT_WRENCH(i)) for i in range(n)]),
                         structure=structure(solved.bayes_net))


def inverse_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, order: str = "COLAMD",
                     wrench: np.ndarray | None = None, friction: bool = True) -> GraphSolution:
    """τ from q, q̇, q̈ (§IV)."""
    return hybrid_dynamics(model, q, qd, qdd, np.zeros(model.dof), np.ones(model.dof, bool), order, wrench, friction)


def forward_dynamics(model: SpatialModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, order: str = "COLAMD",
                     wrench: np.ndarray | None = None, friction: bool = True) -> GraphSolution:
    """q̈ from q, q̇, τ (§V)."""
    return hybrid_dynamics(model, q, qd, np.zeros(model.dof), tau, np.zeros(model.dof, bool), order, wrench, friction)
