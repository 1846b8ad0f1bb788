"""Where a sensor of a URDF sits: a movable joint (``joint``: encoders, joint torque and force-torque
sensors), or a named link or sidecar frame and the sensor frame's pose in it (link IMUs).

Keys of a link sensor: ``link`` (a URDF link, fixed-joint links included) or ``frame`` (a frame
named in the URDF's sidecar), exactly one; ``xyz`` [m] and ``rpy`` [rad] (URDF convention: fixed-axis
roll, pitch, yaw, R = Rz(yaw) Ry(pitch) Rx(roll)) of the sensor frame in that frame, default zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.errors import shown
from estimator.section import Section
from estimator.spatial.frame_motion import FrameMotion, mounted_pose
from estimator.spatial.model import SpatialModel
from sensors.base import SensorModel, SensorParams, check_noise, read_common

PLANAR_KEYS = ("body", "bodies", "point", "position", "angle", "axis")


@dataclass(frozen=True)
class Mount:
    """The sensor frame: pose (rot, pos) in the frame of moving body ``body``."""

    body: int
    rot: np.ndarray
    pos: np.ndarray


def read_joint(section: Section, model: SpatialModel) -> int:
    """The index of the movable joint named by the key ``joint``."""
    name = section.text("joint")
    if name not in model.joint_names:
        raise section.error("joint", f"{name!r} is not a movable joint of {model.name} "
                                     f"({', '.join(model.joint_names)})")
    return model.joint_names.index(name)


def read_mount(section: Section, model: SpatialModel) -> Mount:
    """The mounting keys (module docstring); MbstateError naming the key when one is wrong."""
    for key in PLANAR_KEYS:
        if section.has(key):
            raise section.error(key, "a sensor of a URDF is mounted by link: (or frame:) and xyz/rpy")
    given = [key for key in ("link", "frame") if section.has(key)]
    if len(given) != 1:
        raise section.error("link", "give exactly one of link (a URDF link) or frame (a sidecar frame)")
    key = given[0]
    name = section.text(key)
    xyz, rpy = section.numbers("xyz", 3, (0.0, 0.0, 0.0)), section.numbers("rpy", 3, (0.0, 0.0, 0.0))
    try:
        body, rot, pos = mounted_pose(model, name, np.array(xyz), np.array(rpy))
    except KeyError:
        moving = ", ".join(frame.name for frame in model.frames if frame.body >= 0)
        raise section.error(key, f"unknown {key} {shown(name)} of {model.name} (moving: {moving})") from None
    if body < 0:
        raise section.error(key, f"{shown(name)} is on the fixed base {model.base}: it does not move")
    return Mount(body, rot, pos)


class LinkSensor(SensorModel):
    """A sensor mounted on a link (the link IMUs): its ``params``, ``mount`` and the mounted frame's
    ``motion``; a kind sets ``KIND``, ``UNITS`` and ``SPAN`` (sensors.base.read_common) and its measurement."""

    KIND: str
    UNITS: str
    SPAN: float

    def __init__(self, params: SensorParams, model: SpatialModel, mount: Mount) -> None:
        self.params, self.mount = params, mount
        self.motion = FrameMotion(model, mount.body, mount.rot, mount.pos)

    @classmethod
    def from_config(cls, section: Section, name: str, model: SpatialModel) -> LinkSensor:
        """Keys: the mounting's (``read_mount``) and the keys every sensor has (sensors.base.read_common)."""
        mount = read_mount(section, model)
        params = read_common(section, cls.KIND, name, cls.UNITS, cls.SPAN)
        check_noise(section, params)
        return cls(params, model, mount)
