"""The dynamics graphs along a trajectory, one graph per time point (q and q̇ known there): inverse
dynamics along a prescribed motion, the forward-dynamics accelerations that an integrator steps, and
hybrid dynamics (driven joints on their samples, the others free under zero joint force, stepped by
RK4 with the hybrid graph's q̈ at every stage).

A closed chain (Xie and Dellaert §VII): its inverse dynamics is the hybrid graph with the driven
joints' accelerations given and the passive joints' forces zero, at the q and q̇ of the position and
velocity problems (estimator.spatial.closed_dynamics.driven_states); its hybrid and free motion are RK4 on the hybrid
graph's q̈ with the state projected onto the loops after each step (assembly.project, the driven
joints held), as estimator.spatial.closed_dynamics does on the KKT accelerations. ``planar``: the
loops that get the planar factor."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from estimator.drive_trajectory import hermite_resample
from estimator.dynamics.inverse import InverseDynamicsResult
from estimator.spatial import assembly
from estimator.spatial.closed_dynamics import driven_states
from estimator.spatial.model import SpatialModel
from estimator.spatial.simulate import Accelerations, driven_step
from estimator.spatial_graph import problems
from estimator.spatial_graph.orderings import check_ordering
from estimator.timeseries import Trajectory


def inverse_trajectory(model: SpatialModel, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                       order: str) -> Trajectory:
    """Q at each time by the inverse-dynamics graph eliminated in ``order``, as ``Q.<joint>`` forces;
    q, qd, qdd (N, n) in the model's joint order."""
    tau = np.array([problems.inverse_dynamics(model, *row, order).tau for row in zip(q, qd, qdd)]).reshape(len(t), -1)
    return Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                      forces={name: tau[:, i] for i, name in enumerate(model.joint_names)})


def closed_inverse_trajectory(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray,
                              vel: np.ndarray, acc: np.ndarray, order: str,
                              planar: Sequence[str] = ()) -> InverseDynamicsResult:
    """The drive forces ``Q.<driven joint>`` of a closed chain along its drives' samples (N, k), and
    every joint's q, q̇ (the position and velocity problems of closed_dynamics.driven_states) and q̈
    (the graph's)."""
    check_ordering(order)
    count, n, driven = len(t), model.dof, list(driven)
    known = np.zeros(n, bool)
    known[driven] = True
    started = time.perf_counter()
    q, qd, _ = driven_states(model, driven, t, pos, vel, acc)
    qdd, tau = np.zeros((count, n)), np.zeros((count, n))
    for i in range(count):
        given = np.zeros(n)
        given[driven] = acc[i]
        solution = problems.hybrid_dynamics(model, q[i], qd[i], given, np.zeros(n), known, order, planar=planar)
        qdd[i], tau[i] = solution.qdd, solution.tau
    trajectory = Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                            forces={model.joint_names[j]: tau[:, j] for j in driven})
    return InverseDynamicsResult(trajectory, (time.perf_counter() - started) / max(count, 1))


def forward_accelerations(model: SpatialModel, order: str) -> Accelerations:
    """q̈(q, q̇, Q) by the forward-dynamics graph eliminated in ``order`` (checked now)."""
    check_ordering(order)

    def accelerations(q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return problems.forward_dynamics(model, q, qd, tau, order).qdd

    return accelerations


def hybrid_trajectory(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                      acc: np.ndarray, q0: np.ndarray, qd0: np.ndarray, order: str,
                      planar: Sequence[str] = ()) -> InverseDynamicsResult:
    """The hybrid motion on the samples' times ``t`` from (``q0``, ``qd0``) with the ``driven`` joints
    on their samples ``pos``, ``vel``, ``acc`` (N, k); forces ``Q.<driven joint>``. A closed chain's
    (q0, q̇0) are assembled; no driven joints: its free motion."""
    check_ordering(order)
    count, n, driven = len(t), model.dof, list(driven)
    known, free_force = np.zeros(n, bool), np.zeros(n)
    known[driven] = True

    def solve(x: np.ndarray, v: np.ndarray, a_driven: np.ndarray) -> problems.GraphSolution:
        qdd = np.zeros(n)
        qdd[driven] = a_driven
        return problems.hybrid_dynamics(model, x, v, qdd, free_force, known, order, planar=planar)

    q, qd, qdd, tau = (np.zeros((count, n)) for _ in range(4))
    q[0], qd[0] = q0, qd0
    q[0, driven], qd[0, driven] = pos[0], vel[0]
    started = time.perf_counter()
    for i in range(count):
        solution = solve(q[i], qd[i], acc[i])
        qdd[i], tau[i] = solution.qdd, solution.tau
        if i + 1 == count:
            break
        h = t[i + 1] - t[i]
        middle = hermite_resample(t, pos, vel, acc, np.array([t[i] + 0.5 * h]))[2][0]
        step = driven_step(lambda x, v, a: solve(x, v, a).qdd, q[i], qd[i], qdd[i], h, middle, acc[i + 1])
        q[i + 1], qd[i + 1] = step
        q[i + 1, driven], qd[i + 1, driven] = pos[i + 1], vel[i + 1]
        if model.loops:
            q[i + 1], qd[i + 1] = assembly.project(model, q[i + 1], qd[i + 1], driven)
    trajectory = Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                            forces={model.joint_names[j]: tau[:, j] for j in driven})
    return InverseDynamicsResult(trajectory, (time.perf_counter() - started) / max(count, 1))
