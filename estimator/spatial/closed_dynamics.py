"""Forward and inverse dynamics of a spatial closed chain (a URDF spanning tree with loop closures),
with the loops' multipliers and reaction wrenches.

Equations of motion in the tree's joint coordinates (the planar package's signs, García de Jalón and
Bayo, ch. 4–6): M(q) q̈ + Φqᵀ λ = Q(q, q̇) + τ, Φq q̈ = −Φ̇q q̇, with M by the CRBA and
Q − M q̈ = −RNEA(q, q̇, q̈) (gravity, damping and friction; estimator.spatial.dynamics).

- Forward: the index-1 KKT system [[M, Φqᵀ], [Φq, 0]] [q̈; λ] = [τ − RNEA(q, q̇, 0); −Φ̇q q̇], solved
  by Gaussian elimination with complete pivoting (estimator.dynamics.kernels.saddle_solve,
  rank-revealing: redundant closure rows get λ = 0, a basic solution; q̈ is unique). In time:
  Butcher's Runge-Kutta of order 6 on (q, q̇) (estimator.spatial.runge_kutta), then each step the
  state is projected onto Φ = 0 and Φq q̇ = 0 in the mass-matrix metric (estimator.spatial.assembly.
  project: the M-orthogonal projection, which changes the kinetic energy only to second order in the
  violation; no Baumgarte terms: the projection removes the drift they would damp).
- Inverse: the driven joints held at their prescribed values, the position, velocity and
  acceleration problems (estimator.spatial.assembly) give q, q̇, q̈; then [Φqᵀ | −E_d] [λ; Q_d] =
  −RNEA(q, q̇, q̈) by least squares (estimator.dynamics.inverse.multipliers_and_drive_forces: λ the
  minimum-norm choice when closures are redundant, Q_d unique when the drives fix the chain).
- Hybrid: the driven joints follow q_d(t) (a trajectory's samples, Hermite-resampled between them,
  estimator.drive_trajectory.hermite_resample), the others move freely: the KKT system with the
  driven joints as extra rows, [[M, Aᵀ], [A, 0]] [q̈; λ; ν] = [τ − RNEA(q, q̇, 0); −Φ̇q q̇; q̈_d],
  A = [Φq; E_dᵀ], the drive forces Q_d = −ν; the same Runge-Kutta over each sample interval (the drive
  Hermite-resampled at its stages' times), then the driven joints set to their samples and the free
  ones projected onto the loops (assembly.project with them held).
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
from estimator.spatial import assembly, runge_kutta
from estimator.spatial.dynamics import Workspace, inverse_dynamics, mass_matrix, workspace
from estimator.spatial.kinematics import body_kinematics, frame_pose
from estimator.spatial.loops import AXIS_PAIRS, ROWS, loop_terms, row_count
from estimator.spatial.model import SpatialModel
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
        drive = dict(zip(runge_kutta.C.tolist(), hermite_resample(t, pos, vel, acc, t[i] + h * runge_kutta.C)[2]))

        def rate(c: float, x: np.ndarray, v: np.ndarray) -> np.ndarray:
            return driven_accelerations(model, x, v, driven, drive[c], work)[0]

        x, v = runge_kutta.step(rate, q[i], qd[i], h, qdd[i])
        x[driven], v[driven] = pos[i + 1], vel[i + 1]
        q[i + 1], qd[i + 1] = assembly.project(model, x, v, driven, work=work)
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


def check_drives(model: SpatialModel, driven: Sequence[int], q: np.ndarray) -> None:
    """MbstateError unless the ``driven`` joints are as many as the degrees of freedom at q."""
    dof = check_mobility(model, q)
    if dof != len(driven):
        raise MbstateError(f"{model.name} has {dof} degree{'s' if dof != 1 else ''} of freedom but "
                           f"{len(driven)} driven joint{'s were' if len(driven) != 1 else ' was'} given")


def driven_joints(model: SpatialModel, names: Sequence[str], option: str) -> list[int]:
    """The joints named ``names`` (each once), in that order; MbstateError naming an unknown or repeated one."""
    for k, name in enumerate(names):
        if name not in model.joint_names:
            raise MbstateError(f"{option}: {name!r} is not a movable joint of {model.name} "
                               f"({', '.join(model.joint_names)})")
        if name in names[:k]:
            raise MbstateError(f"{option}: {name!r} is named twice")
    return [model.joint_names.index(name) for name in names]


def start_state(model: SpatialModel, q: np.ndarray, held: Sequence[int], qd: np.ndarray,
                rated: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(q0, q̇0): assembled from the sidecar's ``initial`` with the joints ``held`` at their values in
    ``q``, and Φq q̇0 = 0 with the joints ``rated`` at their rates in ``qd``; MbstateError when the
    loops leave no mobility."""
    q0 = assembly.assemble(model, np.where(np.isin(np.arange(model.dof), list(held)), q, model.initial), held)
    check_mobility(model, q0)
    return q0, assembly.velocities(model, q0, np.asarray(qd, float)[list(rated)], rated)


def simulate(model: SpatialModel, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int,
             friction: bool = True, tau: np.ndarray | None = None) -> Trajectory:
    """steps + 1 states of the motion under constant joint forces ``tau`` (default 0: free) at t = 0,
    dt, …: Runge-Kutta of order 6 on the KKT accelerations and the M-orthogonal projection onto the
    constraints each step (module docstring); λ per step, ``lambda.<k>`` the loop rows of
    ``row_names``. (q0, q̇0) are projected first."""
    work, force = workspace(model), np.zeros(model.dof) if tau is None else np.asarray(tau, float)

    def rate(c: float, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return accelerations(model, x, v, force, friction, work)[0]

    q, qd, qdd = (np.zeros((steps + 1, model.dof)) for _ in range(3))
    lam = np.zeros((steps + 1, row_count(model)))
    q[0], qd[0] = assembly.project(model, q0, qd0, work=work)
    for k in range(steps + 1):
        qdd[k], lam[k] = accelerations(model, q[k], qd[k], force, friction, work)
        if k < steps:
            q[k + 1], qd[k + 1] = assembly.project(model, *runge_kutta.step(rate, q[k], qd[k], dt, qdd[k]), work=work)
    return Trajectory(dt * np.arange(steps + 1), model.joint_names, q, qd, qdd, lam=lam)


def driven_states(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                  acc: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, q̇, q̈ (N, n) of the whole chain with the ``driven`` joints on their samples (N, k): each
    sample's position, velocity and acceleration problems, the driven joints held; the first assembly
    from ``start`` (default: the model's ``initial``), each next one from the last state's Taylor step.
    MbstateError when an assembly fails or the drives are not as many as the degrees of freedom."""
    count, n = len(t), model.dof
    q, qd, qdd = np.zeros((count, n)), np.zeros((count, n)), np.zeros((count, n))
    guess = np.array(model.initial if start is None else start, dtype=float)
    for i in range(count):
        guess[list(driven)] = pos[i]
        try:
            q[i] = assembly.assemble(model, guess, driven)
        except MbstateError as exc:
            raise MbstateError(f"at t = {t[i]:g} s: {exc}") from None
        if i == 0:
            check_drives(model, driven, q[0])
        qd[i] = assembly.velocities(model, q[i], vel[i], driven)
        qdd[i] = assembly.accelerations(model, q[i], qd[i], acc[i], driven)
        if i + 1 < count:
            guess = predict(taylor_coefficients(t[i + 1] - t[i]), np.concatenate((q[i], qd[i], qdd[i]))[None], n)[:n]
    return q, qd, qdd


def inverse(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
            acc: np.ndarray, start: np.ndarray | None = None) -> InverseDynamicsResult:
    """Drive forces ``Q.<joint>`` of the ``driven`` joints along their prescribed motion (N, k), and the
    whole chain's q, q̇, q̈ (``driven_states``) and λ (module docstring)."""
    started = time.perf_counter()
    q, qd, qdd = driven_states(model, driven, t, pos, vel, acc, start)
    count, n, work = len(t), model.dof, workspace(model)
    lam, forces = np.zeros((count, row_count(model))), np.zeros((count, len(driven)))
    for i in range(count):
        rhs = -inverse_dynamics(model, q[i], qd[i], qdd[i], work=work)
        lam[i], forces[i], full = multipliers_and_drive_forces(loop_terms(model, q[i], qd[i]).jac, rhs, driven)
        if full < n:
            raise MbstateError(f"at t = {t[i]:g} s: the driven joints do not fix {model.name} (singular pose)")
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

