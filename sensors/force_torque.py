"""6-axis force-torque sensor of a URDF on a movable joint: the wrench the joint transmits from its
proximal side (the parent body) to its distal side (the child link and every body beyond it), in
the sensor frame [N; N·m].

The sensor frame S is at ``xyz``, turned by ``rpy`` (URDF roll-pitch-yaw), in the frame of the
joint's child link. It reads the force f and the moment t about S's origin that the proximal side
exerts on the distal side, in S's axes, force first:

    h(q, q̇, q̈) = (f; t),   (t; f) = Adᵀ_S Wⱼ,

Wⱼ the wrench through joint j onto its child body (Müller 2018 eq. 67a: the subtree's inertial
wrenches minus gravity's; the drive's friction and rotor inertia act inside the joint, so the
moment about a revolute axis is what sensors.joint_torque reads). Held at rest, the distal side's
weight gives f = −m R_sᵀ g: +m|g| on an upward axis. Jacobians: Wⱼ's analytic tangents carried
into S (estimator.spatial.dynamics.JointWrench), rows reordered. An external wrench on the distal
side enters Wⱼ with a minus sign, as for the joint torque sensor: with the estimator's external
wrenches w on named frames (``with_wrenches``), one more block ``w``, ∂(t; f)/∂w_f = −X(S ← f) for a
frame f beyond the joint, else 0 (estimator.spatial.frame_wrenches), rows reordered. With a URDF model's
link-mass errors ν (``with_masses``, block ``m``), link b's inertia (1 + μ_b) the model's: Wⱼ gains
Σ_b μ_b Wⱼ,b, Wⱼ,b the joint wrench of link b alone (estimator.spatial.link_masses), with its tangents.
"""

from __future__ import annotations

import numpy as np

from estimator.section import Section
from estimator.spatial import lie
from estimator.spatial.dynamics import JointWrench
from estimator.spatial.frame_wrenches import FrameWrenches, workspace_poses
from estimator.spatial.link_masses import LinkMassTerms
from estimator.spatial.model import SpatialModel
from sensors.base import Jacobians, SensorModel, SensorParams, check_noise, read_common
from sensors.mounting import read_joint

KIND, UNITS = "force_torque", "N, N*m"
SPAN = 1e7  # default range ±SPAN [N and N·m] without a saturation
FORCE_FIRST = np.array([3, 4, 5, 0, 1, 2])


class ForceTorque(SensorModel):
    """6-axis force-torque sensor on joint ``joint`` in the frame (rot, pos) of its child link
    (module docstring); ``frames``: the external wrenches it reads too (block ``w``), None: none."""

    dimension = 6

    def __init__(self, params: SensorParams, model: SpatialModel, joint: int, rot: np.ndarray,
                 pos: np.ndarray, frames: FrameWrenches | None = None, masses: LinkMassTerms | None = None) -> None:
        self.params, self.model, self.joint, self.mount, self.frames = params, model, joint, (rot, pos), frames
        self.masses = masses
        self.variables = ("q", "v", "a") + ("w",) * (frames is not None) + ("m",) * (masses is not None)
        self.wrench = JointWrench(model, joint, rot, pos)
        self.links = [] if masses is None else [JointWrench(part, joint, rot, pos) for part, _ in masses.parts]

    @classmethod
    def from_config(cls, section: Section, name: str, model: SpatialModel) -> ForceTorque:
        """Keys: ``joint`` (a movable URDF joint), ``xyz`` [m] and ``rpy`` [rad] of the sensor frame in
        its child link's frame, and the keys every sensor has (sensors.base.read_common)."""
        joint = read_joint(section, model)
        xyz, rpy = section.numbers("xyz", 3, (0.0, 0.0, 0.0)), section.numbers("rpy", 3, (0.0, 0.0, 0.0))
        params = read_common(section, KIND, name, UNITS, SPAN)
        check_noise(section, params)
        return cls(params, model, joint, lie.rotation_rpy(np.array(rpy)), np.array(xyz))

    def with_wrenches(self, frames: FrameWrenches) -> ForceTorque:
        """The same sensor reading the external wrenches on ``frames`` too (module docstring)."""
        return ForceTorque(self.params, self.model, self.joint, *self.mount, frames, self.masses)

    def with_masses(self, masses: LinkMassTerms) -> ForceTorque:
        """The same sensor reading the link-mass errors of ``masses`` too (module docstring)."""
        return ForceTorque(self.params, self.model, self.joint, *self.mount, self.frames, masses)

    def measurement(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, *states: np.ndarray,
                    jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h = (f; t) [N; N·m] in the sensor frame; Jacobians wrt (q, q̇, q̈), 6 x n each, then wrt w
        (6 x 6k) and ν (6 x nm) when the sensor reads them (``states``: w, ν in ``variables``' order)."""
        named = dict(zip(self.variables[3:], states))
        applied = None if self.frames is None else self.frames.body_wrenches(named["w"])
        value, tangents = self.wrench.evaluate(q, qd, qdd, applied)
        by_state = None
        if self.masses is not None:  # W + Σ_b μ_b W_b, W_b the joint wrench of link b alone
            parts = [link.evaluate(q, qd, qdd) for link in self.links]
            values = np.array([v for v, _ in parts])
            mu = self.masses.distribution @ named["m"]
            value = value + mu @ values  # new arrays: the kernels' buffers stay theirs
            tangents = tangents + np.einsum("b,bkjr->kjr", mu, np.array([t for _, t in parts]))
            by_state = (self.masses.distribution.T @ values).T[FORCE_FIRST]
        h = value[FORCE_FIRST]
        if not jac:
            return h, None
        blocks = np.ascontiguousarray(tangents[:, :, FORCE_FIRST].transpose(0, 2, 1))  # (3, 6, n), fresh
        jacobians = [blocks[0], blocks[1], blocks[2]]
        if self.frames is not None:
            poses = workspace_poses(self.wrench.work)
            jacobians.append(self.frames.through_joint(poses, self.joint, *self.mount)[FORCE_FIRST])
        if by_state is not None:
            jacobians.append(by_state)
        return h, jacobians
