"""Shared by the tests of the URDF sensors (tests/sensors/test_link_*.py, test_joint_torque.py,
test_force_torque.py): the robots, seeded states, the central-difference check of every Jacobian
block and Pinocchio's model of the same URDF with a frame added at a sensor's mount."""

from __future__ import annotations

import numpy as np
from conftest import MECHANISMS, central_difference

from estimator.spatial.model import SpatialModel, load_spatial
from sensors.base import Sensor, State

ROBOTS = ("ur5", "panda", "test_tree")  # the arms of the issue, and a tree with a prismatic joint and branches
# Central differences of step 1e-6 on these smooth functions: truncation O(h² |h'''|) ~ 1e-11 and
# round-off O(eps |h| / h) ~ 1e-10 |h| (|h| up to ~100 N·m for a torque), measured ≤ 1e-8 relative;
# 1e-7 (1 + max|J|) leaves a margin while any wrong term (O(1) relative) fails.
STEP, TOLERANCE = 1e-6, 1e-7


def robot(name: str) -> SpatialModel:
    return load_spatial(MECHANISMS / "urdf" / f"{name}.urdf")


def random_state(model: SpatialModel, seed: int) -> State:
    """q ∈ U(−π, π), q̇ ∈ U(−2, 2), q̈ ∈ U(−5, 5) [rad, rad/s, rad/s² or m, m/s, m/s²]."""
    rng = np.random.default_rng(seed)
    n = model.dof
    return State(t=0.0, q=rng.uniform(-np.pi, np.pi, n), qd=rng.uniform(-2.0, 2.0, n),
                 qdd=rng.uniform(-5.0, 5.0, n), lam=np.zeros(0), f=np.zeros(len(model.actuated)))


def assert_jacobians(sensor: Sensor, state: State, blocks: list[np.ndarray] | None = None) -> None:
    """Every block's ∂h/∂block against central differences (the values are copied: a sensor may
    return views of buffers the next call overwrites); ``blocks``: the sensor's blocks, when the state
    lacks some (the external wrenches' ``w``)."""
    blocks = [state.block(v) for v in sensor.variables] if blocks is None else blocks
    value, jacobians = sensor.measurement(*blocks)
    value, jacobians = value.copy(), [j.copy() for j in jacobians]
    assert value.shape == (sensor.dimension,)
    for index, (block, analytic) in enumerate(zip(blocks, jacobians)):
        def h(x: np.ndarray, index: int = index) -> np.ndarray:
            args = list(blocks)
            args[index] = x
            return sensor.measurement(*args, jac=False)[0].copy()

        numeric = central_difference(h, block, STEP)
        assert analytic.shape == (sensor.dimension, block.size)
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * (1.0 + np.abs(numeric).max()),
                                   err_msg=f"{sensor.params.name}: d/d{sensor.variables[index]}")


class PinocchioPair:
    """Pinocchio's model of the same URDF, q, q̇, q̈ in its order, and frames added at our mounts
    (our body frame is Pinocchio's joint frame, the URDF child link's)."""

    def __init__(self, pin, model: SpatialModel, name: str) -> None:
        self.pin, self.model = pin, model
        self.pm = pin.buildModelFromUrdf(str(MECHANISMS / "urdf" / f"{name}.urdf"))
        self.pm.gravity.linear = model.gravity
        self.jid = [self.pm.getJointId(joint) for joint in model.joint_names]
        joints = [self.pm.joints[j] for j in self.jid]
        self.iq = [(j.idx_q, j.nq) for j in joints]
        self.iv = np.array([j.idx_v for j in joints])

    def add_frame(self, name: str, body: int, rot: np.ndarray, pos: np.ndarray) -> int:
        pin = self.pin
        return self.pm.addFrame(pin.Frame(name, self.jid[body], pin.SE3(rot, pos), pin.FrameType.OP_FRAME), False)

    def solve(self, state: State):  # noqa: ANN201 (Pinocchio's Data)
        """Pinocchio's data after forward kinematics and RNEA at ``state`` (continuous joints as (cos, sin))."""
        q = np.zeros(self.pm.nq)
        for (start, size), value in zip(self.iq, state.q):
            q[start:start + size] = (np.cos(value), np.sin(value)) if size == 2 else value
        v, a = np.zeros(self.pm.nv), np.zeros(self.pm.nv)
        v[self.iv], a[self.iv] = state.qd, state.qdd
        data = self.pm.createData()
        self.pin.rnea(self.pm, data, q, v, a)  # data.f: the joint wrenches
        self.pin.forwardKinematics(self.pm, data, q, v, a)
        self.pin.updateFramePlacements(self.pm, data)
        return data
