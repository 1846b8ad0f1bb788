"""External wrenches on named frames of a spatial model, stacked as one vector w = (w_1; …; w_k): the
online estimator's wrench states. w_f = (t; f) [N·m; N] in frame f's axes about its origin, as
estimator.spatial.dynamics.body_wrenches takes it. With R, p a frame's pose in the world, a wrench
carried from frame f to frame s (Adᵀ_{C_{f,s}}, Müller 2018 eq. 120) is

    X(s ← f) = [[R_sᵀ R_f, R_sᵀ [p_f − p_s]× R_f], [0, R_sᵀ R_f]],

and, f on body b, the RNEA's applied body wrench (Q = M q̈ + h − Σ Jᵀ W) and its derivatives are

    Wᵇ_b = Σ_{f on b} X(b ← f) w_f,
    ∂Q_j/∂w_f = −ʲXⱼᵀ X(j ← f) = −(row j of J_fᵀ) for each joint j that moves b, else 0
                (J_f the frame's body Jacobian, eq. 103),
    ∂W_s/∂w_f = −X(s ← f) for a frame s of the body of joint j when joint j moves b, else 0
                (W_s the wrench joint j transmits onto its distal side, seen in s: eq. 67a).

The poses are the world poses the analytic RNEA derivatives leave in their workspace
(estimator.spatial.derivatives, D_POSE), so that no second kinematics pass is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial.derivatives import D_POSE
from estimator.spatial.dynamics import Workspace, workspace
from estimator.spatial.kinematics import ancestry
from estimator.spatial.lie import skew
from estimator.spatial.model import SpatialModel

Poses = tuple[np.ndarray, np.ndarray]  # (rot (n, 3, 3), pos (n, 3)) of every body in the world


def carried(rot_to: np.ndarray, pos_to: np.ndarray, rot_from: np.ndarray, pos_from: np.ndarray) -> np.ndarray:
    """X(s ← f) of the module docstring (6, 6), s = (``rot_to``, ``pos_to``), f = (``rot_from``, ``pos_from``),
    both world poses."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = rot_to.T @ rot_from
    out[:3, 3:] = rot_to.T @ skew(pos_from - pos_to) @ rot_from
    return out


def workspace_poses(work: Workspace) -> Poses:
    """The bodies' world poses left in ``work`` by the last rnea_derivatives or JointWrench call."""
    packed = work.rows[:, D_POSE:D_POSE + 12]
    return packed[:, :9].reshape(-1, 3, 3), packed[:, 9:]


@dataclass(frozen=True, eq=False)
class FrameWrenches:
    """The wrench states of the frames ``names`` of ``model`` (module docstring); ``work``: a workspace
    for the step rows' RNEA (one per estimator: the kernels write into it; so compared by identity)."""

    model: SpatialModel
    names: tuple[str, ...]
    bodies: np.ndarray = field(init=False)  # (k,) each frame's body
    local: tuple[np.ndarray, np.ndarray] = field(init=False)  # (k, 3, 3), (k, 3): each frame's pose in its body
    moves: np.ndarray = field(init=False)  # (k, n) bool: joint j moves frame f's body
    to_body: np.ndarray = field(init=False)  # (k, 6, 6): X(b ← f)
    work: Workspace = field(init=False, repr=False)

    def __post_init__(self) -> None:
        frames = [self.model.frame(name) for name in self.names]
        bodies = np.array([f.body for f in frames], int)
        rot = np.array([f.rot for f in frames]).reshape(-1, 3, 3)
        pos = np.array([f.pos for f in frames]).reshape(-1, 3)
        object.__setattr__(self, "bodies", bodies)
        object.__setattr__(self, "local", (rot, pos))
        object.__setattr__(self, "moves", ancestry(self.model)[bodies].reshape(len(frames), self.model.dof))
        to_body = [carried(np.eye(3), np.zeros(3), r, p) for r, p in zip(rot, pos)]
        object.__setattr__(self, "to_body", np.array(to_body).reshape(-1, 6, 6))
        object.__setattr__(self, "work", workspace(self.model))

    @classmethod
    def of(cls, model: SpatialModel, names: tuple[str, ...]) -> FrameWrenches:
        """The states of ``names``; MbstateError for an unknown frame or one on the fixed base (a wrench
        there moves nothing)."""
        for name in names:
            try:
                body = model.frame(name).body
            except KeyError:
                raise MbstateError(f"no frame {name!r} in {model.name} (frames: "
                                   f"{', '.join(movable_frames(model))[:200]})") from None
            if body < 0:
                raise MbstateError(f"frame {name!r} is on the fixed base of {model.name}: a wrench there moves "
                                   "nothing")
        return cls(model, tuple(names))

    @property
    def size(self) -> int:
        """6 k, the entries of w."""
        return 6 * len(self.names)

    def body_wrenches(self, w: np.ndarray) -> np.ndarray:
        """(n, 6) the RNEA's applied body wrenches of w (module docstring)."""
        out = np.zeros((self.model.dof, 6))
        for k, body in enumerate(self.bodies):  # a few frames: a loop beats numpy's add.at
            out[body] += self.to_body[k] @ w[6 * k:6 * k + 6]
        return out

    def frame_poses(self, poses: Poses) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each frame's world pose (R, p) from the bodies' ``poses``."""
        return [(poses[0][b] @ r, poses[1][b] + poses[0][b] @ p) for b, r, p in zip(self.bodies, *self.local)]

    def joint_columns(self, poses: Poses) -> np.ndarray:
        """∂Q/∂w (n, 6k) at the bodies' world ``poses``: block f is −J_fᵀ (module docstring), J_f's column j
        (R_fᵀ u_j; R_fᵀ (u_j × (p_f − p_j))) for a revolute joint j of world axis u_j at p_j, (0; R_fᵀ u_j)
        for a prismatic one, 0 for a joint that does not move the frame (eq. 103 written out)."""
        rot, pos = poses
        axes = np.einsum("jab,jb->ja", rot, self.model.axis)  # u_j (n, 3)
        sliding = self.model.kind.astype(bool)[:, None]
        out = np.empty((self.model.dof, len(self.names), 6))
        for k, (r, p) in enumerate(self.frame_poses(poses)):
            out[:, k, :3] = np.where(sliding, 0.0, axes @ r)
            out[:, k, 3:] = np.where(sliding, axes, _cross(axes, p - pos)) @ r
        out *= np.where(self.moves.T, -1.0, 0.0)[:, :, None]
        return out.reshape(self.model.dof, self.size)

    def through_joint(self, poses: Poses, joint: int, rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """∂W_s/∂w (6, 6k): W_s the wrench joint ``joint`` transmits onto its distal side, in the frame s at
        (``rot``, ``pos``) in the joint's body (module docstring)."""
        body_rot, body_pos = poses[0][joint], poses[1][joint]
        sensor_rot, sensor_pos = body_rot @ rot, body_pos + body_rot @ pos
        out = np.zeros((6, self.size))
        for k, (frame_rot, frame_pos) in enumerate(self.frame_poses(poses)):
            if self.moves[k, joint]:
                out[:, 6 * k:6 * k + 6] = -carried(sensor_rot, sensor_pos, frame_rot, frame_pos)
        return out


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a × b of two (m, 3) arrays (numpy's cross costs several times as much at this size)."""
    return np.column_stack((a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]))


def movable_frames(model: SpatialModel) -> tuple[str, ...]:
    """The names of the frames not on the fixed base: those a wrench state may sit on."""
    return tuple(frame.name for frame in model.frames if frame.body >= 0)
