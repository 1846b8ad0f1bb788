"""Forward and inverse dynamics of a spatial closed chain (a URDF spanning tree with loop closures),
with the loops' multipliers and reaction wrenches.

Equations of motion in the tree's joint coordinates (the planar package's signs, García de Jalón and
Bayo, ch. 4–6): M(q) q̈ + Φqᵀ λ = Q(q, q̇) + τ, Φq q̈ = −Φ̇q q̇, with M by the CRBA and
Q − M q̈ = −RNEA(q, q̇, q̈) (gravity, damping and friction; estimator.spatial.dynamics).

- Forward: the index-1 KKT system [[M, Φqᵀ], [Φq, 0]] [q̈; λ] = [τ − RNEA(q, q̇, 0); −Φ̇q q̇], solved
  by Gaussian elimination with complete pivoting (estimator.dynamics.kernels.saddle_solve,
  rank-revealing: redundant closure rows get λ = 0, a basic solution; q̈ is unique). In time:
  classical Runge-Kutta 4 on (q, q̇), then each step the state is projected onto Φ = 0 and
  Φq q̇ = 0 (estimator.spatial.assembly.project; no Baumgarte terms: the projection removes the
  drift they would damp).
- Inverse: the driven joints held at their prescribed values, the position, velocity and
  acceleration problems (estimator.spatial.assembly) give q, q̇, q̈; then [Φqᵀ | −E_d] [λ; Q_d] =
  −RNEA(q, q̇, q̈) by least squares (estimator.dynamics.inverse.multipliers_and_drive_forces: λ the
  minimum-norm choice when closures are redundant, Q_d unique when the drives fix the chain).
- Hybrid: the driven joints follow q_d(t) (a trajectory's samples, Hermite-resampled between them,
  estimator.drive_trajectory.hermite_resample), the others move freely: the KKT system with the
  driven joints as extra rows, [[M, Aᵀ], [A, 0]] [q̈; λ; ν] = [τ − RNEA(q, q̇, 0); −Φ̇q q̇; q̈_d],
  A = [Φq; E_dᵀ], the drive forces Q_d = −ν; RK4 over each sample interval, then the driven joints set
  to their samples and the free ones projected onto the loops (assembly.project with them held).
- Reactions: the loops act on the tree with the generalized force −Φqᵀ λ: a loop's rows give the
  wrench it applies on frame B's body, at B's origin in world axes: force λ_(x,y,z) and moment
  Σ λ_r (u_r × w_r) over its axis rows u_r · w_r (u on A, w on B); A's body takes the opposite force
  at the same point.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from estimator.dynamics.inverse import InverseDynamicsResult, multipliers_and_drive_forces
from estimator.dynamics.kernels import saddle_solve
from estimator.drive_trajectory import hermite_resample
from estimator.dynamics.prediction import predict, taylor_coefficients
from estimator.errors import MbstateError
from estimator.spatial import assembly
from estimator.spatial.dynamics import Workspace, inverse_dynamics, mass_matrix, workspace
from estimator.spatial.kinematics import body_kinematics, frame_pose
from estimator.spatial.loops import AXIS_PAIRS, ROWS, loop_terms, row_count
from estimator.spatial.model import SpatialModel
from estimator.spatial.simulate import driven_step
from estimator.timeseries import Trajectory


def _kkt(model: SpatialModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, driven: Sequence[int],
         qdd_driven: np.ndarray, friction: bool, work: Workspace | None) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, μ) of [[M, Aᵀ], [A, 0]] [q̈; μ] = [τ − RNEA(q, q̇, 0); −Φ̇q q̇; q̈_d], A = [Φq; E_dᵀ]."""
    work = work or workspace(model)
    terms = loop_terms(model, q, qd)
    rows = np.zeros((len(terms.phi) + len(driven), model.dof))
    rows[:len(terms.phi)] = terms.jac
    rows[len(terms.phi) + np.arange(len(driven)), list(driven)] = 1.0
    force = tau - inverse_dynamics(model, q, qd, np.zeros(model.dof), friction=friction, work=work)
    return saddle_solve(mass_matrix(model, q, work), rows, force, np.concatenate((-terms.rate @ qd, qdd_driven)))


def accelerations(model: SpatialModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, friction: bool = True,
                  work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q̈, λ) of the index-1 KKT system under joint forces ``tau`` (module docstring)."""
    return _kkt(model, q, qd, tau, (), np.zeros(0), friction, work)


def driven_accelerations(model: SpatialModel, q: np.ndarray, qd: np.ndarray, driven: Sequence[int],
                         qdd_driven: np.ndarray, work: Workspace | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q̈, λ, Q_d) with the ``driven`` joints' accelerations prescribed (the hybrid's KKT system, module
    docstring), no other joint force."""
    qdd, mu = _kkt(model, q, qd, np.zeros(model.dof), driven, qdd_driven, True, work)
    m = row_count(model)
    return qdd, mu[:m], -mu[m:]


def hybrid(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
           acc: np.ndarray, q0: np.ndarray, qd0: np.ndarray) -> InverseDynamicsResult:
    """The hybrid motion on the samples' times ``t`` (module docstring) from the assembled state
    (``q0``, ``qd0``) with the driven joints on their first samples; forces ``Q.<driven joint>``."""
    count, n, driven = len(t), model.dof, list(driven)
    if len(driven) > check_mobility(model, q0):
        raise MbstateError(f"{model.name} has {check_mobility(model, q0)} degrees of freedom, fewer than the "
                           f"{len(driven)} driven joints")
    q, qd, qdd = np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, n))
    lam, forces, work = np.zeros((count, row_count(model))), np.zeros((count, len(driven))), workspace(model)
    q[0], qd[0] = q0, qd0
    started = time.perf_counter()
    for i in range(count):
        qdd[i], lam[i], forces[i] = driven_accelerations(model, q[i], qd[i], driven, acc[i], work)
        if i + 1 == count:
            break
        h = t[i + 1] - t[i]
        middle = hermite_resample(t, pos, vel, acc, np.array([t[i] + 0.5 * h]))[2][0]

        def rate(x: np.ndarray, v: np.ndarray, a_driven: np.ndarray) -> np.ndarray:
            return driven_accelerations(model, x, v, driven, a_driven, work)[0]

        x, v = driven_step(rate, q[i], qd[i], qdd[i], h, middle, acc[i + 1])
        x[driven], v[driven] = pos[i + 1], vel[i + 1]
        q[i + 1], qd[i + 1] = assembly.project(model, x, v, driven)
    trajectory = Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                            forces={model.joint_names[j]: forces[:, k] for k, j in enumerate(driven)}, lam=lam)
    return InverseDynamicsResult(trajectory, (time.perf_counter() - started) / max(count, 1))


def check_mobility(model: SpatialModel, q: np.ndarray) -> int:
    """The degrees of freedom n − rank Φq at q; MbstateError when the loops leave none."""
    dof = model.dof - assembly.rank(loop_terms(model, q, np.zeros(model.dof)).jac)
    if dof == 0:
        raise MbstateError(f"{model.name}: the loops leave no mobility (rank Φq = n = {model.dof}): a structure, "
                           "nothing to integrate")
    return dof


def simulate(model: SpatialModel, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int,
             friction: bool = True) -> Trajectory:
    """steps + 1 states of the free motion (τ = 0) at t = 0, dt, …: RK4 on the KKT accelerations and a
    projection onto the constraints each step (module docstring); λ per step, ``lambda.<k>`` the loop
    rows of ``row_names``. (q0, q̇0) are projected first."""
    work, zero = workspace(model), np.zeros(model.dof)

    def rate(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return accelerations(model, x, v, zero, friction, work)[0]

    q, qd, qdd = (np.zeros((steps + 1, model.dof)) for _ in range(3))
    lam = np.zeros((steps + 1, row_count(model)))
    q[0], qd[0] = assembly.project(model, q0, qd0)
    for k in range(steps + 1):
        x, v = q[k], qd[k]
        qdd[k], lam[k] = accelerations(model, x, v, zero, friction, work)
        if k == steps:
            break
        a1 = qdd[k]
        a2 = rate(x + 0.5 * dt * v, v + 0.5 * dt * a1)
        a3 = rate(x + 0.5 * dt * (v + 0.5 * dt * a1), v + 0.5 * dt * a2)
        a4 = rate(x + dt * (v + 0.5 * dt * a2), v + dt * a3)
        q[k + 1], qd[k + 1] = assembly.project(
            model, x + dt * v + dt * dt / 6 * (a1 + a2 + a3),
            v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4))
    return Trajectory(dt * np.arange(steps + 1), model.joint_names, q, qd, qdd, lam=lam)


def inverse(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
            acc: np.ndarray) -> InverseDynamicsResult:
    """Drive forces ``Q.<joint>`` of the ``driven`` joints along their prescribed motion (N, k), and the
    whole chain's q, q̇, q̈ and λ (module docstring). The first assembly starts from the model's
    ``initial`` with the driven values, each next one from the last state's Taylor step."""
    count, n, m = len(t), model.dof, row_count(model)
    q, qd, qdd, lam = np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, m))
    forces = np.zeros((count, len(driven)))
    guess, work = np.array(model.initial, dtype=float), workspace(model)
    started = time.perf_counter()
    for i in range(count):
        guess[list(driven)] = pos[i]
        try:
            q[i] = assembly.assemble(model, guess, driven)
        except MbstateError as exc:
            raise MbstateError(f"at t = {t[i]:g} s: {exc}") from None
        if i == 0:
            dof = check_mobility(model, q[0])
            if dof != len(driven):
                raise MbstateError(f"{model.name} has {dof} degree{'s' if dof != 1 else ''} of freedom but "
                                   f"{len(driven)} driven joint{'s' if len(driven) != 1 else ''} were given")
        qd[i] = assembly.velocities(model, q[i], vel[i], driven)
        qdd[i] = assembly.accelerations(model, q[i], qd[i], acc[i], driven)
        rhs = -inverse_dynamics(model, q[i], qd[i], qdd[i], work=work)
        lam[i], forces[i], full = multipliers_and_drive_forces(loop_terms(model, q[i], qd[i]).jac, rhs, driven)
        if full < n:
            raise MbstateError(f"at t = {t[i]:g} s: the driven joints do not fix {model.name} (singular pose)")
        if i + 1 < count:
            guess = predict(taylor_coefficients(t[i + 1] - t[i]), np.concatenate((q[i], qd[i], qdd[i]))[None], n)[:n]
    elapsed = time.perf_counter() - started
    trajectory = Trajectory(np.asarray(t, float), model.joint_names, q, qd, qdd,
                            forces={model.joint_names[j]: forces[:, k] for k, j in enumerate(driven)}, lam=lam)
    return InverseDynamicsResult(trajectory, elapsed / max(count, 1))


def loop_wrenches(model: SpatialModel, q: np.ndarray, lam: np.ndarray) -> dict[str, np.ndarray]:
    """{loop: (moment; force) (6,)} that each loop applies on its frame B's body at B's origin, world
    axes [N·m; N], from the multipliers λ (module docstring)."""
    kin = body_kinematics(model, q, np.zeros(model.dof), np.zeros(model.dof))
    out, row = {}, 0
    for loop in model.loops:
        rows = len(ROWS[loop.type])
        part = lam[row:row + rows]
        axes_a, axes_b = frame_pose(model, kin, loop.frames[0])[0], frame_pose(model, kin, loop.frames[1])[0]
        moment = sum((value * np.cross(axes_a[:, i], axes_b[:, k])
                      for value, (i, k) in zip(part[3:], AXIS_PAIRS[loop.type])), np.zeros(3))
        out[loop.name] = np.concatenate((moment, part[:3]))
        row += rows
    return out

