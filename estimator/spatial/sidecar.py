"""The optional sidecar YAML of a URDF: what a URDF does not say.

Keys (all optional):
- ``gravity: [gx, gy, gz]`` [m/s²], default [0, 0, −9.81] (z up, as URDF tools assume);
- ``actuators: [{joint: NAME, name: NAME}, …]``: the driven joints, by default every movable joint,
  named after it;
- ``frames: [{name: NAME, link: LINK, xyz: [x, y, z], rpy: [r, p, y]}, …]``: named frames for
  sensors and loads, posed in a link's frame (xyz [m], rpy [rad], default 0);
- ``armature: {JOINT: VALUE, …}``: the rotor inertia reflected through the gearing, Jm G² [kg·m² or
  kg], added to the joint's diagonal of M (URDF has no element for it), default 0;
- ``loops: [{name: NAME, type: ball | revolute | weld, frames: [A, B]}, …]``: loop closures of a
  closed chain whose spanning tree the URDF holds (URDF cannot hold a loop: a link has one parent),
  between two named frames (links or the frames above): ball, A's origin on B's; revolute, besides,
  A's z axis along B's; weld, A's frame on B's (estimator.spatial.loops);
- ``initial: {JOINT: VALUE, …}``: the start of the assembly of a closed chain (Newton-Raphson on
  the loops, estimator.spatial.assembly) [rad or m], default 0, choosing its branch;
- ``name``, ``description``: free text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from estimator.section import Section
from estimator.spatial.urdf import UrdfRobot
from estimator.yaml_file import read_yaml

GRAVITY = (0.0, 0.0, -9.81)
LOOP_TYPES = ("ball", "revolute", "weld")


@dataclass(frozen=True)
class FrameSpec:
    name: str
    link: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]


@dataclass(frozen=True)
class LoopSpec:
    """A loop closure ``type`` (LOOP_TYPES) between the named frames ``frames`` = (A, B)."""
    name: str
    type: str
    frames: tuple[str, str]


@dataclass(frozen=True)
class Sidecar:
    """Gravity, the actuators as (name, joint) pairs, the extra named frames, the armature and the
    assembly's start as (joint, value) pairs (joints not named: 0), the loop closures."""
    gravity: tuple[float, ...]
    actuators: tuple[tuple[str, str], ...]
    frames: tuple[FrameSpec, ...]
    armature: tuple[tuple[str, float], ...] = ()
    loops: tuple[LoopSpec, ...] = ()
    initial: tuple[tuple[str, float], ...] = ()

    @staticmethod
    def default(robot: UrdfRobot) -> Sidecar:
        """Gravity along −z, every movable joint driven, no extra frames, no armature."""
        return Sidecar(GRAVITY, tuple((joint.name, joint.name) for joint in _movable(robot)), ())


def _movable(robot: UrdfRobot) -> list:
    return [joint for joint in robot.joints if joint.type != "fixed"]


def read_sidecar(path: str | Path, robot: UrdfRobot) -> Sidecar:
    """The sidecar at ``path`` for ``robot``; MbstateError naming the key and the problem."""
    top = Section(str(path), "sidecar", read_yaml(path) or {})
    top.raw("name"), top.raw("description")
    gravity = top.numbers("gravity", 3, GRAVITY)
    movable = {joint.name for joint in _movable(robot)}
    actuators = Sidecar.default(robot).actuators
    if top.has("actuators"):
        actuators = tuple(_actuator(top, k, entry, movable) for k, entry in enumerate(_list(top, "actuators")))
    names = [name for name, _ in actuators]
    if len(set(names)) != len(names):
        raise top.error("actuators", f"names not unique: {names}")
    links = set(robot.inertials)
    frames = tuple(_frame_spec(top, k, entry, links) for k, entry in enumerate(_list(top, "frames")))
    taken = set(links)
    for frame in frames:
        if frame.name in taken:
            raise top.error("frames", f"frame name {frame.name!r} is already a link or frame name")
        taken.add(frame.name)
    armature = _joint_values(top.section("armature", {}), movable, 0.0)
    initial = _joint_values(top.section("initial", {}), movable, None)
    loops = tuple(_loop_spec(top, k, entry, taken) for k, entry in enumerate(_list(top, "loops")))
    names = [loop.name for loop in loops]
    if len(set(names)) != len(names):
        raise top.error("loops", f"names not unique: {names}")
    top.finish()
    return Sidecar(gravity, actuators, frames, armature, loops, initial)


def _list(top: Section, key: str) -> list:
    value = top.raw(key, [])
    if not isinstance(value, list):
        raise top.error(key, "must be a list")
    return value


def _actuator(top: Section, k: int, entry: object, movable: set[str]) -> tuple[str, str]:
    item = Section(top.source, f"sidecar.actuators[{k}]", entry)
    joint = item.text("joint")
    if joint not in movable:
        raise item.error("joint", f"{joint!r} is not a movable joint of the URDF")
    name = item.text("name", joint)
    item.finish()
    return name, joint


def _joint_values(section: Section, movable: set[str], minimum: float | None) -> tuple[tuple[str, float], ...]:
    """(joint, value) pairs, each joint a movable joint of the URDF, each value at least ``minimum``."""
    for joint in section.data:
        if joint not in movable:
            raise section.error(str(joint), f"{joint!r} is not a movable joint of the URDF")
    out = tuple((joint, section.number(joint, minimum=minimum)) for joint in section.data)
    section.finish()
    return out


def _frame_spec(top: Section, k: int, entry: object, links: set[str]) -> FrameSpec:
    item = Section(top.source, f"sidecar.frames[{k}]", entry)
    name, link = item.text("name"), item.text("link")
    if link not in links:
        raise item.error("link", f"{link!r} is not a link of the URDF")
    spec = FrameSpec(name, link, item.numbers("xyz", 3, (0.0, 0.0, 0.0)), item.numbers("rpy", 3, (0.0, 0.0, 0.0)))
    item.finish()
    return spec


def _loop_spec(top: Section, k: int, entry: object, frames: set[str]) -> LoopSpec:
    item = Section(top.source, f"sidecar.loops[{k}]", entry)
    name, kind = item.text("name"), item.choice("type", LOOP_TYPES)
    pair = item.raw("frames")
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(f, str) for f in pair)):
        raise item.error("frames", "must be a list of two frame names [A, B]")
    for frame in pair:
        if frame not in frames:
            raise item.error("frames", f"{frame!r} is not a link of the URDF or a sidecar frame")
    if pair[0] == pair[1]:
        raise item.error("frames", f"the two frames are the same, {pair[0]!r}")
    item.finish()
    return LoopSpec(name, kind, (pair[0], pair[1]))
