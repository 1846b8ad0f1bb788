"""The spatial model: an immutable tree of moving bodies, one per movable URDF joint.

Body frames are the URDF frames of the joints' child links (Müller 2018 §4.4 allows any frame; the
joint axis then is a constant screw ⁱXᵢ in body i's frame). Links attached by fixed joints are
merged into the body they ride on: their inertia is added there and their frame kept as a named
frame. Joint i's relative configuration is C_{λ(i),i}(qᵢ) = Bᵢ exp(ⁱXᵢ qᵢ) (Müller eq. 91), Bᵢ the
joint origin in the parent body's frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.ops import pack
from estimator.spatial.sidecar import FrameSpec, LoopSpec, Sidecar, read_sidecar
from estimator.spatial.urdf import UrdfRobot, read_urdf

REVOLUTE, PRISMATIC = 0, 1  # joint kinds in the kernels: continuous joints are revolute


@dataclass(frozen=True)
class Frame:
    """A named frame rigidly attached to body ``body`` (−1: the fixed base): pose (rot, pos) in
    that body's frame."""
    name: str
    body: int
    rot: np.ndarray
    pos: np.ndarray


@dataclass(frozen=True)
class SpatialModel:
    """A tree of n bodies and n one-DOF joints (joint i moves body i relative to body parent[i]);
    link_names and parent_links: each joint's URDF child and parent links.

    Arrays (read-only): parent (n,) int, −1 for the base; kind (n,) REVOLUTE or PRISMATIC;
    placement (n, 12) Bᵢ as the rows of R then p; axis (n, 3) unit axis in body i's frame;
    screw (n, 6) ⁱXᵢ = (a; 0) or (0; a); inertia (n, 6, 6) Mᵇ about the body origin (eq. 40);
    mass (n,) [kg]; lower, upper [rad or m], effort [N·m or N], velocity, damping [N·m·s/rad or
    N·s/m], friction (Coulomb) [N·m or N], armature (the sidecar's reflected rotor inertia, added to
    M_ii) [kg·m² or kg] per joint; gravity (3,) [m/s²]; actuated (n_act,) the joint index of each
    actuator; packed (n, ops.G_WIDTH): the same as the kernels read it (ops.pack; a workspace copies
    it, estimator.spatial.dynamics.workspace); dof = n and shape = (n,).

    A closed chain: the tree is its spanning tree and ``loops`` its loop closures between named
    frames (estimator.spatial.loops); ``initial`` (n,) the assembly's start (the sidecar's, else 0).
    """
    name: str
    base: str
    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    link_names: tuple[str, ...]
    parent_links: tuple[str, ...]
    parent: np.ndarray
    kind: np.ndarray
    placement: np.ndarray
    axis: np.ndarray
    inertia: np.ndarray
    mass: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    effort: np.ndarray
    velocity: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    armature: np.ndarray
    gravity: np.ndarray
    actuator_names: tuple[str, ...]
    actuated: np.ndarray
    frames: tuple[Frame, ...]
    loops: tuple[LoopSpec, ...]
    initial: np.ndarray
    screw: np.ndarray = field(init=False)
    packed: np.ndarray = field(init=False)
    dof: int = field(init=False)
    shape: tuple[int] = field(init=False)

    def __post_init__(self) -> None:
        screw = np.zeros((len(self.parent), 6))
        for i, (kind, axis) in enumerate(zip(self.kind, self.axis)):
            screw[i, 3 * int(kind):3 * int(kind) + 3] = axis
        object.__setattr__(self, "screw", screw)
        object.__setattr__(self, "packed", pack(self.parent, self.kind, self.placement, self.axis, self.damping,
                                                self.friction, self.armature, self.inertia, self.gravity))
        object.__setattr__(self, "dof", len(self.parent))
        object.__setattr__(self, "shape", (len(self.parent),))
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def n(self) -> int:
        """The number of coordinates, as the planar model names it (estimator.model_protocol)."""
        return self.dof

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """The coordinates' names, the movable joints' (estimator.model_protocol)."""
        return self.joint_names

    @property
    def total_mass(self) -> float:
        """The moving bodies' mass [kg] (links on the fixed base excluded)."""
        return float(self.mass.sum())

    def frame(self, name: str) -> Frame:
        """The named frame (a link or a sidecar frame); KeyError when absent."""
        for frame in self.frames:
            if frame.name == name:
                return frame
        raise KeyError(name)

    def actuation(self) -> np.ndarray:
        """E (n, n_act): Q = E F maps actuator forces to joint forces."""
        out = np.zeros((self.dof, len(self.actuated)))
        out[self.actuated, np.arange(len(self.actuated))] = 1.0
        return out


def load_spatial(path: str | Path, sidecar: str | Path | None = None) -> SpatialModel:
    """The model of a URDF file, with the sidecar YAML ``sidecar`` or, when None, the file beside
    it with suffix ``.yaml`` if there is one; MbstateError with one line for a bad file."""
    robot = read_urdf(path)
    if sidecar is None and Path(path).with_suffix(".yaml").is_file():
        sidecar = Path(path).with_suffix(".yaml")
    model = build_model(robot, read_sidecar(sidecar, robot) if sidecar is not None else Sidecar.default(robot))
    subtree = model.mass.copy()  # the mass each joint moves: a joint that moves none makes M singular
    for i in range(model.dof - 1, -1, -1):
        if model.parent[i] >= 0:
            subtree[model.parent[i]] += subtree[i]
    for i in np.flatnonzero(subtree <= 0.0):
        raise MbstateError(f"{path}: joint {model.joint_names[i]!r} moves no mass (no <inertial> beyond it): "
                           "the mass matrix would be singular; make it fixed or give a link beyond it an inertial")
    return model


def build_model(robot: UrdfRobot, extra: Sidecar) -> SpatialModel:
    """Walk the tree from the root, merging fixed joints into the body they ride on."""
    children: dict[str, list] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    attached = {robot.root: (-1, (np.eye(3), np.zeros(3)))}  # link -> (body, pose in the body)
    moving, placements = [], []
    stack = list(reversed(children.get(robot.root, [])))
    while stack:  # depth first, children in file order: each parent body before its children
        joint = stack.pop()
        body, pose = attached[joint.parent]
        origin = lie.compose(pose, (lie.rotation_rpy(joint.rpy), joint.xyz))
        if joint.type == "fixed":
            attached[joint.child] = (body, origin)
        else:
            attached[joint.child] = (len(moving), (np.eye(3), np.zeros(3)))
            moving.append((joint, body))
            placements.append(origin)
        stack.extend(reversed(children.get(joint.child, [])))
    joints = [joint for joint, _ in moving]
    n = len(joints)
    inertia, mass = np.zeros((n, 6, 6)), np.zeros(n)
    for link, inertial in robot.inertials.items():
        body, pose = attached[link]
        if inertial is None or body < 0:
            continue
        rot = lie.rotation_rpy(inertial.rpy)
        in_link = lie.spatial_inertia(inertial.mass, inertial.xyz, rot @ inertial.tensor @ rot.T)
        to_link = lie.adjoint(lie.inverse(pose))  # body twist -> link twist
        inertia[body] += to_link.T @ in_link @ to_link
        mass[body] += inertial.mass
    frames = [Frame(link, body, pose[0], pose[1]) for link, (body, pose) in attached.items()]
    frames += [_frame(spec, attached) for spec in extra.frames]
    names = [joint.name for joint in joints]
    armature, initial = dict(extra.armature), dict(extra.initial)
    return SpatialModel(
        name=robot.name, base=robot.root, joint_names=tuple(names),
        joint_types=tuple(joint.type for joint in joints),
        link_names=tuple(joint.child for joint in joints), parent_links=tuple(joint.parent for joint in joints),
        parent=np.array([body for _, body in moving], dtype=np.int64).reshape(n),
        kind=np.array([PRISMATIC if joint.type == "prismatic" else REVOLUTE for joint in joints], dtype=np.int64),
        placement=np.array([np.concatenate((rot.ravel(), pos)) for rot, pos in placements]).reshape(n, 12),
        axis=np.array([joint.axis for joint in joints]).reshape(n, 3),
        inertia=inertia, mass=mass,
        lower=np.array([joint.lower for joint in joints]), upper=np.array([joint.upper for joint in joints]),
        effort=np.array([joint.effort for joint in joints]), velocity=np.array([joint.velocity for joint in joints]),
        damping=np.array([joint.damping for joint in joints]), friction=np.array([joint.friction for joint in joints]),
        armature=np.array([armature.get(name, 0.0) for name in names]),
        gravity=np.array(extra.gravity, dtype=float), actuator_names=tuple(name for name, _ in extra.actuators),
        actuated=np.array([names.index(joint) for _, joint in extra.actuators], dtype=np.int64),
        frames=tuple(frames), loops=extra.loops, initial=np.array([initial.get(name, 0.0) for name in names]))


def _frame(spec: FrameSpec, attached: dict) -> Frame:
    body, pose = attached[spec.link]
    rot, pos = lie.compose(pose, (lie.rotation_rpy(np.array(spec.rpy)), np.array(spec.xyz)))
    return Frame(spec.name, body, rot, pos)


def is_urdf(path: str | Path) -> bool:
    """Whether the commands read ``path`` as a URDF file (by its suffix) rather than a mechanism YAML."""
    return str(path).lower().endswith(".urdf")


def joint_values(model: SpatialModel, values: dict[str, float], option: str) -> np.ndarray:
    """(n,) zeros but for the named joints' values; MbstateError naming an unknown joint."""
    out = np.zeros(model.dof)
    for name, value in values.items():
        if name not in model.joint_names:
            raise MbstateError(f"{option}: {name!r} is not a movable joint of {model.name} "
                               f"({', '.join(model.joint_names)})")
        out[model.joint_names.index(name)] = value
    return out


def joint_order(model: SpatialModel, names: list[str], option: str) -> list[int]:
    """For each joint of the model, its position in ``names``, which must list every movable joint
    once (an open chain's motion is prescribed by all of its joints)."""
    missing = [name for name in model.joint_names if name not in names]
    unknown = [name for name in names if name not in model.joint_names]
    if missing or unknown or len(set(names)) != len(names):
        raise MbstateError(f"{option}: a URDF's driven joints must be every movable joint once ("
                           f"{', '.join(model.joint_names)}); "
                           + ("missing " + ", ".join(missing) if missing else
                              "unknown " + ", ".join(unknown) if unknown else "repeated names"))
    return [names.index(name) for name in model.joint_names]
