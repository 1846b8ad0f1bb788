"""The spatial model against Pinocchio (PyPI ``pin``, pinned in the test extra) on the same URDF
files: 100 seeded random states per robot, quantity by quantity within
‖Δ‖∞ ≤ 1e-9 · max(1, ‖ref‖∞) (issue 37's bound; both sides are double-precision O(n) recursions,
measured differences are ~1e-14).

Pinocchio orders twists and wrenches (linear; angular), ours (angular; linear); a continuous joint
has q = (cos θ, sin θ) there. Its RNEA has no joint friction: ours is called with friction off. The
sidecar's armature (PUMA 560) is set in Pinocchio's ``model.armature``, which its RNEA, CRBA, ABA and
RNEA derivatives include as ours do, and its joint wrenches ``data.f`` leave out as ours do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from estimator.spatial import kinematics as kin
from estimator.spatial.dynamics import (coriolis_matrix, forward_dynamics, inverse_dynamics, joint_wrenches,
                                        mass_matrix, rnea_derivatives, workspace)
from estimator.spatial.model import SpatialModel, load_spatial

pin = pytest.importorskip("pinocchio")

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
ROBOTS = ("ur5", "panda", "test_tree", "puma560", "kinova")
STATES = 100


def close(ours: np.ndarray, ref: np.ndarray) -> None:
    assert np.max(np.abs(ours - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))


def swap(x: np.ndarray) -> np.ndarray:
    """(linear; angular) <-> (angular; linear)."""
    return np.concatenate((x[3:], x[:3]))


class Pair:
    """Our model and Pinocchio's of one URDF, with the map between their joint orders."""

    def __init__(self, name: str) -> None:
        path = str(URDF / f"{name}.urdf")
        self.model: SpatialModel = load_spatial(path)
        self.pm = pin.buildModelFromUrdf(path)
        joints = [self.pm.joints[self.pm.getJointId(joint)] for joint in self.model.joint_names]
        self.iq = [(j.idx_q, j.nq) for j in joints]
        self.iv = np.array([j.idx_v for j in joints])
        self.pm.armature = self.v(self.model.armature)
        self.pd = self.pm.createData()
        self.jid = [self.pm.getJointId(joint) for joint in self.model.joint_names]
        assert self.pm.nv == self.model.dof

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nq)
        for (start, size), value in zip(self.iq, q):
            out[start:start + size] = (np.cos(value), np.sin(value)) if size == 2 else value
        return out

    def v(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nv)
        out[self.iv] = x
        return out

    def mat(self, m: np.ndarray) -> np.ndarray:
        return m[np.ix_(self.iv, self.iv)]


def states(n: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-np.pi, np.pi, n) * s for s in (1.0, 2.0, 5.0)) for _ in range(STATES)]


@pytest.fixture(scope="module", params=ROBOTS)
def pair(request: pytest.FixtureRequest) -> Pair:
    return Pair(request.param)


def test_inverse_dynamics_joint_wrenches_mass_matrix_and_nonlinear_effects(pair: Pair) -> None:
    model, work = pair.model, workspace(pair.model)
    for q, qd, qdd in states(model.dof, 1):
        qp, vp, ap = pair.q(q), pair.v(qd), pair.v(qdd)
        close(inverse_dynamics(model, q, qd, qdd, friction=False, work=work), pin.rnea(pair.pm, pair.pd, qp, vp, ap)[pair.iv])
        wrenches = joint_wrenches(model, work)  # the body frame is Pinocchio's joint frame (URDF child link)
        for i, jid in enumerate(pair.jid):
            close(wrenches[i], swap(pair.pd.f[jid].vector))
        close(mass_matrix(model, q, work), pair.mat(pin.crba(pair.pm, pair.pd, qp, pin.Convention.WORLD)))
        close(inverse_dynamics(model, q, qd, 0 * qd, friction=False, work=work),
              pin.nonLinearEffects(pair.pm, pair.pd, qp, vp)[pair.iv])


def test_forward_dynamics_coriolis_and_rnea_derivatives(pair: Pair) -> None:
    model, work = pair.model, workspace(pair.model)
    for q, qd, tau in states(model.dof, 2):
        qp, vp, tp = pair.q(q), pair.v(qd), pair.v(tau)
        close(forward_dynamics(model, q, qd, tau, friction=False, work=work), pin.aba(pair.pm, pair.pd, qp, vp, tp)[pair.iv])
        close(coriolis_matrix(model, q, qd, work), pair.mat(pin.computeCoriolisMatrix(pair.pm, pair.pd, qp, vp)))
        dq, dqd, m = rnea_derivatives(model, q, qd, tau, friction=False, work=work)
        pin.computeRNEADerivatives(pair.pm, pair.pd, qp, vp, tp)
        close(dq, pair.mat(pair.pd.dtau_dq))
        close(dqd, pair.mat(pair.pd.dtau_dv))
        ref_m = pair.mat(pair.pd.M)
        close(m, np.triu(ref_m) + np.triu(ref_m, 1).T)


def test_frame_poses_velocities_and_classical_accelerations(pair: Pair) -> None:
    model = pair.model
    names = [frame.name for frame in model.frames if pair.pm.existFrame(frame.name)]
    assert len(names) == len(model.frames)  # every link is a frame in both
    for q, qd, qdd in states(model.dof, 3)[:20]:
        qp, vp, ap = pair.q(q), pair.v(qd), pair.v(qdd)
        pin.forwardKinematics(pair.pm, pair.pd, qp, vp, ap)
        pin.updateFramePlacements(pair.pm, pair.pd)
        body = kin.body_kinematics(model, q, qd, qdd)
        for name in names:
            fid = pair.pm.getFrameId(name)
            rot, pos = kin.frame_pose(model, body, name)
            close(rot, pair.pd.oMf[fid].rotation)
            close(pos, pair.pd.oMf[fid].translation)
            twist, _ = kin.frame_motion(model, body, name)
            close(twist, swap(pin.getFrameVelocity(pair.pm, pair.pd, fid, pin.LOCAL).vector))
            close(kin.classical_acceleration(model, body, name),
                  pin.getFrameClassicalAcceleration(pair.pm, pair.pd, fid, pin.LOCAL_WORLD_ALIGNED).linear)
