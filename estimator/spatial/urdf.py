"""Reading a URDF file (links, joints, inertials, limits, dynamics) into plain records, with
one-line errors for what the spatial model cannot take.

Supported joint types: revolute, continuous, prismatic, fixed. ``<mimic>`` is refused, as are
floating and planar joints. The tree is checked here: one root link, every joint's parent and
child defined, no link with two parents, no loop.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from estimator.errors import MbstateError

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
MAX_BYTES = 1 << 22  # [bytes]: an arm's URDF without meshes is ~20 KB


@dataclass(frozen=True)
class Inertial:
    """A link's mass [kg], its centre-of-mass frame (xyz [m], rpy [rad]) in the link frame, and the
    rotational inertia [kg·m²] about the centre of mass in that frame's axes."""
    mass: float
    xyz: np.ndarray
    rpy: np.ndarray
    tensor: np.ndarray


@dataclass(frozen=True)
class UrdfJoint:
    """One ``<joint>``: type, links, origin of the child frame in the parent frame (q = 0), unit axis
    in the child frame, ``<limit>`` and ``<dynamics>`` values (0 and ±inf when absent)."""
    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    rpy: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    effort: float
    velocity: float
    damping: float
    friction: float


@dataclass(frozen=True)
class UrdfRobot:
    """A parsed URDF tree: the root link, the links' inertials (None: massless), the joints in
    file order."""
    name: str
    root: str
    inertials: dict[str, Inertial | None]
    joints: tuple[UrdfJoint, ...]


def read_urdf(path: str | Path) -> UrdfRobot:
    """The robot in the URDF file at ``path``; MbstateError naming the file and the problem."""
    try:
        if Path(path).stat().st_size > MAX_BYTES:
            raise MbstateError(f"{path}: larger than a URDF may be ({MAX_BYTES} bytes)")
        root = ET.parse(path).getroot()
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read file ({exc.strerror})") from None
    except ET.ParseError as exc:
        raise MbstateError(f"{path}: invalid XML: {exc}") from None
    if root.tag != "robot":
        raise MbstateError(f"{path}: not a URDF file (root element <{root.tag}>, expected <robot>)")
    links = {}
    for element in root.findall("link"):
        name = _name(path, element, "link")
        if name in links:
            raise MbstateError(f"{path}: link {name!r} defined twice")
        links[name] = _inertial(path, name, element.find("inertial"))
    joints = tuple(_joint(path, element, links) for element in root.findall("joint"))
    return UrdfRobot(root.get("name", ""), _root_of_tree(path, links, joints), links, joints)


def _name(path: str | Path, element: ET.Element, kind: str) -> str:
    name = element.get("name")
    if not name:
        raise MbstateError(f"{path}: a <{kind}> without a name")
    return name


def _numbers(path: str | Path, where: str, text: str | None, count: int, default: float = 0.0) -> np.ndarray:
    if text is None:
        return np.full(count, default)
    try:
        values = np.array([float(item) for item in text.split()])
    except ValueError:
        raise MbstateError(f"{path}: {where}: {text!r} is not {count} numbers") from None
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise MbstateError(f"{path}: {where}: {text!r} is not {count} finite numbers")
    return values


def _attribute(path: str | Path, where: str, element: ET.Element | None, key: str, default: float) -> float:
    if element is None or element.get(key) is None:
        return default
    return float(_numbers(path, f"{where} {key}", element.get(key), 1)[0])


def _inertial(path: str | Path, link: str, element: ET.Element | None) -> Inertial | None:
    """The link's inertial; None when absent or of zero mass and inertia. A negative mass, or a
    tensor that is not positive definite under a positive mass, is an error."""
    if element is None:
        return None
    where = f"link {link!r} inertial"
    mass = _attribute(path, where, element.find("mass"), "value", 0.0)
    origin = element.find("origin")
    xyz = _numbers(path, f"{where} origin xyz", None if origin is None else origin.get("xyz"), 3)
    rpy = _numbers(path, f"{where} origin rpy", None if origin is None else origin.get("rpy"), 3)
    entries = element.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    ixx, ixy, ixz, iyy, iyz, izz = (_attribute(path, where, entries, key, 0.0) for key in keys)
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if mass < 0.0:
        raise MbstateError(f"{path}: {where}: negative mass {mass}")
    if mass == 0.0 and not tensor.any():
        return None
    if mass == 0.0 or np.linalg.eigvalsh(tensor)[0] <= 0.0:
        raise MbstateError(f"{path}: {where}: inertia not positive definite (mass {mass}, "
                           f"ixx iyy izz {ixx} {iyy} {izz}, ixy ixz iyz {ixy} {ixz} {iyz})")
    return Inertial(mass, xyz, rpy, tensor)


def _joint(path: str | Path, element: ET.Element, links: dict[str, Inertial | None]) -> UrdfJoint:
    name = _name(path, element, "joint")
    where = f"joint {name!r}"
    kind = element.get("type")
    if kind not in JOINT_TYPES:
        known = "floating and planar joints are not supported" if kind in ("floating", "planar") else \
            "unknown joint type"
        raise MbstateError(f"{path}: {where}: type {kind!r}: {known} (supported: {', '.join(JOINT_TYPES)})")
    if element.find("mimic") is not None:
        raise MbstateError(f"{path}: {where}: <mimic> joints are not supported; make it fixed or independent")
    ends = []
    for tag in ("parent", "child"):
        item = element.find(tag)
        link = None if item is None else item.get("link")
        if link is None:
            raise MbstateError(f"{path}: {where}: no <{tag} link=...>")
        if link not in links:
            raise MbstateError(f"{path}: {where}: {tag} link {link!r} is not defined")
        ends.append(link)
    origin = element.find("origin")
    xyz = _numbers(path, f"{where} origin xyz", None if origin is None else origin.get("xyz"), 3)
    rpy = _numbers(path, f"{where} origin rpy", None if origin is None else origin.get("rpy"), 3)
    axis_element = element.find("axis")
    axis = _numbers(path, f"{where} axis", None if axis_element is None else axis_element.get("xyz"), 3)
    if axis_element is None:
        axis = np.array([1.0, 0.0, 0.0])
    norm = float(np.linalg.norm(axis))
    if kind != "fixed" and norm < 1e-9:
        raise MbstateError(f"{path}: {where}: zero axis")
    limit, dynamics = element.find("limit"), element.find("dynamics")
    bounded = kind in ("revolute", "prismatic")
    lower = _attribute(path, where + " limit", limit, "lower", 0.0) if bounded else -np.inf
    upper = _attribute(path, where + " limit", limit, "upper", 0.0) if bounded else np.inf
    if bounded and limit is not None and limit.get("lower") is None and limit.get("upper") is None:
        lower, upper = -np.inf, np.inf
    damping = _attribute(path, where + " dynamics", dynamics, "damping", 0.0)
    friction = _attribute(path, where + " dynamics", dynamics, "friction", 0.0)
    if damping < 0.0 or friction < 0.0:
        raise MbstateError(f"{path}: {where}: negative damping or friction")
    return UrdfJoint(name, kind, ends[0], ends[1], xyz, rpy, axis / norm if norm else axis, lower, upper,
                     _attribute(path, where + " limit", limit, "effort", np.inf),
                     _attribute(path, where + " limit", limit, "velocity", np.inf), damping, friction)


def _root_of_tree(path: str | Path, links: dict[str, Inertial | None], joints: tuple[UrdfJoint, ...]) -> str:
    """The one link without a parent joint; errors for two parents, several roots or a loop."""
    if not links:
        raise MbstateError(f"{path}: no links")
    parent_of: dict[str, str] = {}
    for joint in joints:
        if joint.child in parent_of:
            raise MbstateError(f"{path}: link {joint.child!r} has two parent joints "
                               f"({parent_of[joint.child]!r}, {joint.name!r}): a URDF is a tree")
        parent_of[joint.child] = joint.name
    roots = [link for link in links if link not in parent_of]
    if len(roots) != 1:
        problem = "a loop" if not roots else f"several roots {roots[:4]}"
        raise MbstateError(f"{path}: the links do not form one tree ({problem})")
    children: dict[str, list[str]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint.child)
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for child in children.get(stack.pop(), ()):
            reached.add(child)
            stack.append(child)
    if len(reached) != len(links):
        lost = sorted(set(links) - reached)[:4]
        raise MbstateError(f"{path}: links {lost} are not connected to the root {roots[0]!r} (a loop)")
    return roots[0]
