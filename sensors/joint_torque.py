"""Joint torque sensor of a URDF: the torque (revolute) or force (prismatic) a joint transmits to
its distal side about (along) its axis [N·m or N].

The sensor sits between the drive and the link (as on a Franka or a KUKA LWR): it reads what the
drive delivers after its friction and rotor inertia, the RNEA's joint force without them,

    h(q, q̇, q̈) = ʲXⱼᵀ Wⱼ = Qⱼ(q, q̇, q̈) − Iₐⱼ q̈ⱼ − dⱼ q̇ⱼ − μⱼ sign q̇ⱼ   (Müller 2018 eq. 67b),

Wⱼ the wrench joint j transmits onto its child body (the inertial wrenches of the subtree beyond
it minus gravity's). Positive along the joint axis: it is the torque that drives q̈ⱼ > 0 at rest
without gravity. Jacobians: ʲXⱼᵀ of W's analytic tangents (estimator.spatial.dynamics.JointWrench,
from the RNEA derivatives' composites). An external wrench on the distal side enters Wⱼ, with
a minus sign, as the RNEA's applied wrench: when the estimator carries external wrenches w on named
frames (``with_wrenches``), they are one more block of h, ``w``, with ∂h/∂w_f = −ʲXⱼᵀ X(j ← f) for a
frame f beyond the joint, else 0 (estimator.spatial.frame_wrenches), and Wⱼ's q-tangent carries
their turn with q. A virtual sensor on a truth with contact (State.wrenches) reads h with them applied:
h − (Jᶠᵀ W_ext)ⱼ. When the estimator carries a URDF model's link-mass errors ν (``with_masses``), the
links' inertias are (1 + μ_b) the model's and h gains row j of Σ_b μ_b Q_b(q, q̇, q̈) (block ``m``; Q_b
the inverse dynamics of link b alone, estimator.spatial.link_masses), with its tangents.
"""

from __future__ import annotations

import numpy as np

from estimator.section import Section
from estimator.spatial.dynamics import JointWrench, body_wrenches
from estimator.spatial.frame_wrenches import FrameWrenches, workspace_poses
from estimator.spatial.link_masses import LinkMassTerms
from estimator.spatial.model import PRISMATIC, SpatialModel
from sensors.base import Jacobians, SensorModel, SensorParams, State, check_noise, read_common
from sensors.mounting import read_joint

KIND = "joint_torque"
SPAN = 1e7  # default range ±SPAN [N·m or N] without a saturation
NO_MOUNT = (np.eye(3), np.zeros(3))  # the joint's wrench is read in its body's frame


class JointTorque(SensorModel):
    """Torque sensor on joint ``joint`` (index in the model; module docstring); ``frames``: the external
    wrenches it reads too (block ``w``), None: none."""

    dimension = 1

    def __init__(self, params: SensorParams, model: SpatialModel, joint: int,
                 frames: FrameWrenches | None = None, masses: LinkMassTerms | None = None) -> None:
        self.params, self.model, self.joint, self.frames, self.masses = params, model, joint, frames, masses
        self.variables = ("q", "v", "a") + ("w",) * (frames is not None) + ("m",) * (masses is not None)
        self.wrench = JointWrench(model, joint, *NO_MOUNT)
        self._axis = model.screw[joint].copy()

    @classmethod
    def from_config(cls, section: Section, name: str, model: SpatialModel) -> JointTorque:
        """Keys: ``joint`` (a movable URDF joint) and the keys every sensor has (sensors.base.read_common)."""
        joint = read_joint(section, model)
        params = read_common(section, KIND, name, "N" if model.kind[joint] == PRISMATIC else "N*m", SPAN)
        check_noise(section, params)
        return cls(params, model, joint)

    def with_wrenches(self, frames: FrameWrenches) -> JointTorque:
        """The same sensor reading the external wrenches on ``frames`` too (module docstring)."""
        return JointTorque(self.params, self.model, self.joint, frames, self.masses)

    def with_masses(self, masses: LinkMassTerms) -> JointTorque:
        """The same sensor reading the link-mass errors of ``masses`` too (module docstring)."""
        return JointTorque(self.params, self.model, self.joint, self.frames, masses)

    def measurement(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, *states: np.ndarray,
                    jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = ʲXⱼᵀ Wⱼ [N·m or N], plus row j of Σ_b μ_b Q_b when the sensor reads the link masses;
        Jacobians wrt (q, q̇, q̈), 1 x n each, then wrt w (1 x 6k) and ν (1 x nm) when it reads them
        (``states``: w, ν in ``variables``' order)."""
        named = dict(zip(self.variables[3:], states))
        applied = None if self.frames is None else self.frames.body_wrenches(named["w"])
        value, tangents = self.wrench.evaluate(q, qd, qdd, applied)
        h = np.array([self._axis @ value])
        if self.masses is not None:
            by_state, motion = self.masses.columns(q, qd, qdd, named["m"])
            h += by_state[self.joint] @ named["m"]
        if not jac:
            return h, None
        rows = tangents @ self._axis  # (3, n): one fresh array, its rows the three blocks
        if self.masses is not None:
            rows += motion[:, self.joint]
        blocks = [rows[0:1], rows[1:2], rows[2:3]]
        if self.frames is not None:
            poses = workspace_poses(self.wrench.work)
            blocks.append(self._axis @ self.frames.through_joint(poses, self.joint, *NO_MOUNT)[None])
        if self.masses is not None:
            blocks.append(by_state[self.joint][None])
        return h, blocks

    def measure(self, state: State) -> np.ndarray:
        """The ideal reading, the state's applied wrenches included (module docstring)."""
        if not state.wrenches:
            return super().measure(state)
        value, _ = self.wrench.evaluate(state.q, state.qd, state.qdd, body_wrenches(self.model, state.wrenches))
        return np.array([self._axis @ value])
