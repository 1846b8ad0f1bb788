"""Dynamics of spatial closed chains (issue 38): the KKT forward dynamics against the hard KKT solution
built from Pinocchio's ingredients, energy and loops over 10 s of free motion, the five-bar as a 3D
loop against the planar package's five-bar, the Delta's inverse dynamics fed back to its forward
dynamics, statics, and the loops' reaction wrenches.

Pinocchio's reference (issue 38's oracle; neither its regularized ``lcaba`` nor MuJoCo's soft
``qacc`` is a 1e-9 oracle): M = ``crba``, h = ``nonLinearEffects``, Φq = the difference of the loop
frames' ``getFrameJacobian`` (LOCAL_WORLD_ALIGNED, linear rows) and Φ̇q q̇ = the difference of their
``getFrameClassicalAcceleration`` after ``forwardKinematics`` at q̈ = 0; [[M, Φqᵀ], [Φq, 0]] [q̈; λ] =
[τ − h; −Φ̇q q̇] by numpy's LU. Both models read the same URDF; the loops' frames (sidecar frames on
links) are given to Pinocchio as placements on the links' parent joints.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics as planar_inverse
from estimator.dynamics.statics import solve_statics as planar_statics
from estimator.mechanism_file import load_mechanism
from estimator.spatial import assembly, closed_dynamics, energy
from estimator.spatial.closed_statics import solve_statics
from estimator.spatial.kinematics import body_kinematics, frame_pose
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import SpatialModel, load_spatial
from estimator.yaml_file import read_yaml

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / "configs" / "mechanisms" / "urdf"


def close(ours: np.ndarray, ref: np.ndarray, tol: float) -> float:
    """‖Δ‖∞ / max(1, ‖ref‖∞), asserted at most ``tol``."""
    ratio = np.max(np.abs(ours - ref)) / max(1.0, np.max(np.abs(ref)))
    assert ratio <= tol
    return ratio


def consistent_state(model: SpatialModel, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """An assembled q near the sidecar's start (independent joints moved by up to 0.3 rad) and a q̇
    with Φq q̇ = 0 (independent rates up to 2 rad/s)."""
    free = assembly.independent_joints(model, model.initial)
    guess = model.initial.copy()
    guess[free] += rng.uniform(-0.3, 0.3, len(free))
    q = assembly.assemble(model, guess, free)
    return q, assembly.velocities(model, q, rng.uniform(-2.0, 2.0, len(free)), free)


class PinocchioKkt:
    """The hard KKT solution from Pinocchio's M, h, frame Jacobians and classical accelerations."""

    def __init__(self, name: str) -> None:
        self.pin = pytest.importorskip("pinocchio")
        path = URDF / f"{name}.urdf"
        self.model = load_spatial(path)
        self.pm = self.pin.buildModelFromUrdf(str(path))
        self.pd = self.pm.createData()
        joints = [self.pm.joints[self.pm.getJointId(name)] for name in self.model.joint_names]
        assert all(joint.nq == 1 for joint in joints)
        self.iv = np.array([joint.idx_v for joint in joints])
        frames = {f["name"]: f for f in read_yaml(path.with_suffix(".yaml"))["frames"]}
        self.places = []
        for loop in self.model.loops:
            for name in loop.frames:
                body = self.pm.frames[self.pm.getFrameId(frames[name]["link"], self.pin.FrameType.BODY)]
                offset = self.pin.SE3(np.eye(3), np.array(frames[name]["xyz"], float))
                self.places.append((body.parentJoint, body.placement * offset))

    def ours(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nv)
        out[self.iv] = x
        return out

    def solve(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pin, pm, pd = self.pin, self.pm, self.pd
        pq, pv = self.ours(q), self.ours(qd)
        mass = pin.crba(pm, pd, pq)
        mass = np.triu(mass) + np.triu(mass, 1).T
        bias = pin.nonLinearEffects(pm, pd, pq, pv)
        pin.computeJointJacobians(pm, pd, pq)
        pin.forwardKinematics(pm, pd, pq, pv, np.zeros(pm.nv))
        world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        jac = [pin.getFrameJacobian(pm, pd, joint, place, world)[:3] for joint, place in self.places]
        accel = [pin.getFrameClassicalAcceleration(pm, pd, joint, place, world).linear for joint, place in self.places]
        jac = np.vstack([a - b for a, b in zip(jac[::2], jac[1::2])])
        gamma = np.concatenate([a - b for a, b in zip(accel[::2], accel[1::2])])
        m = len(gamma)
        kkt = np.block([[mass, jac.T], [jac, np.zeros((m, m))]])
        solution = np.linalg.solve(kkt, np.concatenate((self.ours(tau) - bias, -gamma)))
        return solution[:pm.nv][self.iv], solution[pm.nv:]


@pytest.mark.parametrize("name", ["rssr", "delta"])
def test_forward_dynamics_against_the_hard_kkt_solution_from_pinocchio(name: str) -> None:
    """Seeded random consistent states and joint forces: q̈ and λ within 1e-9 · max(1, ‖ref‖∞)
    (measured 2026-11-27, q̈ and λ: 1.8e-14 and 1.1e-13 on the RSSR, 8.7e-12 and 3.9e-12 on the Delta,
    whose rods' axial inertia, 4e-7 kg·m², makes its KKT matrix the worse conditioned)."""
    oracle = PinocchioKkt(name)
    model, rng = oracle.model, np.random.default_rng(11)
    for _ in range(25):
        q, qd = consistent_state(model, rng)
        tau = rng.uniform(-1.0, 1.0, model.dof)
        qdd, lam = closed_dynamics.accelerations(model, q, qd, tau, friction=False)
        ref_qdd, ref_lam = oracle.solve(q, qd, tau)
        close(qdd, ref_qdd, 1e-9)
        close(lam, ref_lam, 1e-9)


def test_ten_seconds_of_free_motion_keep_energy_and_loops() -> None:
    """The RSSR, friction off (it has none), 1 ms steps of the order-6 Runge-Kutta with the M-orthogonal
    projection: the total energy drifts by at most 1e-6 of the kinetic energy's range and the loop stays
    closed to 1e-9 m (figures in docs/spatial.md, "Conservation")."""
    model = load_spatial(URDF / "rssr.urdf")
    q0, qd0 = consistent_state(model, np.random.default_rng(3))
    run = closed_dynamics.simulate(model, q0, qd0, 1e-3, 10_000, friction=False)
    kinetic = np.array([energy.kinetic_energy(model, q, qd) for q, qd in zip(run.q, run.qd)])
    total = kinetic + np.array([energy.potential_energy(model, q) for q in run.q])
    assert np.max(np.abs(total - total[0])) <= 1e-6 * np.ptp(kinetic)
    assert max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in zip(run.q, run.qd)) <= 1e-9
    # the multipliers are the KKT system's at each stored state
    k = 5000
    close(run.lam[k], closed_dynamics.accelerations(model, run.q[k], run.qd[k], np.zeros(model.dof), False)[1], 0.0)


def test_the_five_bar_as_a_3d_loop_matches_the_planar_five_bar() -> None:
    """Inverse dynamics along configs/trajectories/five_bar.txt (left, right driven): the couplers'
    angles and both motor torques within 1e-9 of the planar package's (measured 2.1e-14, 6.8e-14)."""
    samples = load_drive_trajectory(REPO / "configs" / "trajectories" / "five_bar.txt", 2)
    planar = planar_inverse(load_mechanism(REPO / "configs" / "mechanisms" / "five_bar.yaml"), ["left", "right"],
                            samples.t, *samples.derivatives()).trajectory
    model = load_spatial(URDF / "five_bar_3d.urdf")
    driven = [model.joint_names.index("left"), model.joint_names.index("right")]
    spatial = closed_dynamics.inverse(model, driven, samples.t, *samples.derivatives()).trajectory
    names = planar.coordinate_names

    def point(name: str) -> np.ndarray:
        return planar.q[:, [names.index(f"x_{name}"), names.index(f"y_{name}")]]

    for tail, joints in (("B", ("left", "left_elbow")), ("D", ("right", "right_elbow"))):
        gap = point("C") - point(tail)
        angle = sum(spatial.q[:, model.joint_names.index(joint)] for joint in joints)
        close(np.angle(np.exp(1j * (np.arctan2(gap[:, 1], gap[:, 0]) - angle))), np.zeros(len(angle)), 1e-9)
    for name in ("left", "right"):
        close(spatial.forces[name], planar.forces[name], 1e-9)


def test_the_deltas_inverse_dynamics_fed_to_its_forward_dynamics() -> None:
    """The Delta driven on its 9 independent joints (the arms and the rods' spins) along smooth
    motions: the drive forces at each point, applied to the forward dynamics, give back the
    accelerations to 1e-8 (measured 9.2e-10 of ‖q̈‖∞: a rod's spin has 4e-7 kg·m² of inertia, so
    a rounding of 1e-16 N·m in its torque is 2.5e-10 rad/s²)."""
    model = load_spatial(URDF / "delta.urdf")
    driven = assembly.independent_joints(model, model.initial)
    t = np.linspace(0.0, 1.0, 41)
    phase = np.arange(len(driven))[None]
    pos = model.initial[driven][None] + 0.2 * np.sin(3 * t[:, None] + phase)
    vel, acc = 0.6 * np.cos(3 * t[:, None] + phase), -1.8 * np.sin(3 * t[:, None] + phase)
    run = closed_dynamics.inverse(model, driven, t, pos, vel, acc).trajectory
    selection = np.zeros((model.dof, len(driven)))
    selection[driven, np.arange(len(driven))] = 1.0
    for k in range(len(t)):
        tau = selection @ np.array([run.forces[model.joint_names[j]][k] for j in driven])
        qdd = closed_dynamics.accelerations(model, run.q[k], run.qd[k], tau)[0]
        close(qdd, run.qdd[k], 1e-8)
        close(run.qdd[k, driven], acc[k], 1e-12)


def test_statics_of_the_five_bar_matches_the_planar_statics() -> None:
    """Cranks held: the holding torques equal the planar statics' (1e-9)."""
    hold = {"left": 1.8, "right": 1.3}
    planar = planar_statics(load_mechanism(REPO / "configs" / "mechanisms" / "five_bar.yaml"), hold)
    spatial = solve_statics(load_spatial(URDF / "five_bar_3d.urdf"), hold)
    close(np.array(list(spatial.held_forces.values())), np.array([planar.held_forces[k] for k in hold]), 1e-9)


def test_loop_wrenches_balance_the_generalized_reactions(tmp_path: Path) -> None:
    """The wrench a loop applies on B's body (and the opposite on A's) does the work of −Φqᵀ λ:
    J_Bᵀ W − J_Aᵀ W over its two frames equals −Φqᵀ λ, the Jacobians (a frame's ω and its origin's
    velocity) by central differences of the poses (step 1e-7: errors ~1e-8, asserted 1e-6). Ball
    (RSSR), revolute (five-bar) and weld rows (the RSSR welded: any q will do)."""
    (tmp_path / "weld.yaml").write_text((URDF / "rssr.yaml").read_text().replace("type: ball", "type: weld"))
    chains = [load_spatial(URDF / "rssr.urdf"), load_spatial(URDF / "five_bar_3d.urdf"),
              load_spatial(URDF / "rssr.urdf", tmp_path / "weld.yaml")]
    for model in chains:
        rng = np.random.default_rng(4)
        q = model.initial + 0.3 * rng.standard_normal(model.dof)
        zero = np.zeros(model.dof)
        lam = rng.standard_normal(len(loop_terms(model, q, zero).phi))
        wrenches = closed_dynamics.loop_wrenches(model, q, lam)
        total = sum(_work(model, q, loop.frames[1], wrenches[loop.name]) - _work(model, q, loop.frames[0],
                                                                                   wrenches[loop.name])
                    for loop in model.loops)
        close(total, -loop_terms(model, q, zero).jac.T @ lam, 1e-6)


def _work(model: SpatialModel, q: np.ndarray, frame: str, wrench: np.ndarray) -> np.ndarray:
    """Jᵀ W of a world wrench (moment; force) at a frame's origin, J by central differences."""
    def pose(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return frame_pose(model, body_kinematics(model, x, 0 * x, 0 * x), frame)

    out, step = np.zeros(model.dof), 1e-7
    rot = pose(q)[0]
    for k in range(model.dof):
        e = np.eye(model.dof)[k] * step
        (ra, pa), (rb, pb) = pose(q + e), pose(q - e)
        spin = (ra - rb) @ rot.T / (2 * step)
        omega = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
        out[k] = omega @ wrench[:3] + (pa - pb) / (2 * step) @ wrench[3:]
    return out


def test_hybrid_with_the_free_motions_crank_reproduces_the_free_motion() -> None:
    """The RSSR's free motion (forward dynamics, 0.5 s at 1 ms), its crank's q, q̇, q̈ then prescribed:
    the hybrid motion gives back the coupler's spin and the rocker (1e-8 rad) with a crank torque
    of 0 (1e-8 N·m), two integrations of different systems (figures in docs/spatial.md)."""
    model = load_spatial(URDF / "rssr.urdf")
    q0, qd0 = consistent_state(model, np.random.default_rng(8))
    free = closed_dynamics.simulate(model, q0, qd0, 1e-3, 500)
    crank = [model.joint_names.index("crank")]
    run = closed_dynamics.hybrid(model, crank, free.t, free.q[:, crank], free.qd[:, crank], free.qdd[:, crank],
                                 free.q[0], free.qd[0]).trajectory
    close(run.q, free.q, 1e-8)
    close(run.forces["crank"], np.zeros(len(free.t)), 1e-8)
