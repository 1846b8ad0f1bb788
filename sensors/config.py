"""Sensor configuration files: YAML mapping sensor ids to ``{kind: …, …}``, validated on load.

Top-level keys: ``sensors`` (required; id → section), ``mechanism`` and ``description`` (free text
for the reader). ``configs/sensors/README.md`` documents every key; ``configs/sensors/fourbar.yaml``
is the fully commented example. Errors name the file and the key path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from estimator.errors import MbstateError, shown
from estimator.model import Mechanism
from estimator.section import Section
from estimator.spatial.model import SpatialModel
from estimator.yaml_file import read_yaml
from sensors.accelerometer import Accelerometer
from sensors.base import Sensor
from sensors.encoder import Encoder
from sensors.force_torque import ForceTorque
from sensors.gyroscope import Gyroscope
from sensors.joint_encoder import JointEncoder
from sensors.joint_torque import JointTorque
from sensors.link_accelerometer import LinkAccelerometer
from sensors.link_gyroscope import LinkGyroscope
from sensors.load_cell import LoadCell

KINDS: dict[str, type] = {"gyroscope": Gyroscope, "accelerometer": Accelerometer, "encoder": Encoder,
                          "load_cell": LoadCell}
SPATIAL_KINDS: dict[str, type] = {"encoder": JointEncoder, "gyroscope": LinkGyroscope,
                                  "accelerometer": LinkAccelerometer, "joint_torque": JointTorque,
                                  "force_torque": ForceTorque}
TOP_KEYS = ("sensors", "mechanism", "description")


@dataclass(frozen=True)
class SensorSet:
    """The sensors of one configuration, in file order; ``document`` is the parsed YAML."""

    source: str
    sensors: tuple[Sensor, ...]
    document: dict[str, Any]

    def __getitem__(self, name: str) -> Sensor:
        for sensor in self.sensors:
            if sensor.params.name == name:
                return sensor
        raise KeyError(name)

    def dimensions(self) -> dict[str, int]:
        """id → length of its value (what the message validation needs)."""
        return {s.params.name: s.dimension for s in self.sensors}


def build_sensors(document: Any, mech: Mechanism | SpatialModel, source: str) -> SensorSet:
    """Sensors from a parsed configuration; MbstateError naming the key for any problem. A spatial
    model (a URDF) takes its own kinds (SPATIAL_KINDS): joint encoders, link gyroscopes and
    accelerometers, joint torque and force-torque sensors."""
    top = Section(source, "(top)", document)
    entries = top.raw("sensors")
    if not isinstance(entries, dict) or not entries:
        raise top.error("sensors", "must map sensor ids to their sections (at least one)")
    for key in ("mechanism", "description"):
        if top.has(key):
            top.text(key)
    top.finish()
    sensors = []
    for name, data in entries.items():
        if not isinstance(name, str) or not name.strip():
            raise MbstateError(f"{source}: sensors: a sensor id must be non-empty text, got {shown(name)}")
        section = Section(source, f"sensors.{name}", data)
        kinds = SPATIAL_KINDS if isinstance(mech, SpatialModel) else KINDS
        sensor = kinds[section.choice("kind", tuple(kinds))].from_config(section, name, mech)
        section.finish()
        sensors.append(sensor)
    return SensorSet(source=source, sensors=tuple(sensors), document=document)


def load_sensors(path: str | Path, mech: Mechanism | SpatialModel) -> SensorSet:
    """Read and validate a sensor file for ``mech``."""
    return build_sensors(read_yaml(path), mech, str(path))
