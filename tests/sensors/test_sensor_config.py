"""Sensor configuration files: the shipped examples load; every invalid entry is one error naming
the file and the key."""

from __future__ import annotations

import math

import pytest
import yaml
from conftest import MECHANISMS, REPO

from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.spatial.model import load_spatial
from sensors.config import build_sensors, load_sensors
from sensors.encoder import LinearParams

CONFIGS = REPO / "configs" / "sensors"


def fourbar():
    return load_mechanism(MECHANISMS / "fourbar_crank.yaml")


def test_fourbar_example_matches_the_issue() -> None:
    sensors = load_sensors(CONFIGS / "fourbar.yaml", fourbar())
    kinds = {s.params.name: (s.params.kind, s.params.rate) for s in sensors.sensors}
    assert kinds == {"coupler_gyro": ("gyroscope", 1000), "crank_encoder": ("encoder", 1000),
                     "coupler_accelerometer": ("accelerometer", 500), "rocker_load_cell": ("load_cell", 100)}
    encoder = sensors["crank_encoder"]
    assert encoder.params.noise.quantum == pytest.approx(2 * math.pi / 4096)
    assert sensors["rocker_load_cell"].spec.row == fourbar().constraint_names.index("rocker: distance 2-3")
    assert [s.params.name for s in sensors.sensors if s.params.bias_state] == ["coupler_gyro", "coupler_accelerometer"]
    assert sensors.dimensions() == {"coupler_gyro": 1, "crank_encoder": 1, "coupler_accelerometer": 2,
                                    "rocker_load_cell": 1}


def test_pick_and_place_example_loads() -> None:
    mech = load_mechanism(MECHANISMS / "pick_and_place.yaml")
    sensors = load_sensors(CONFIGS / "pick_and_place.yaml", mech)
    assert len(sensors.sensors) == 6 and sensors["motor1_torque"].params.units == "N*m"


def test_linear_encoder_on_the_slider() -> None:
    mech = load_mechanism(MECHANISMS / "slider_crank.yaml")
    document = {"sensors": {"slide": {"kind": "encoder", "point": 2, "direction": [2, 0], "resolution": 1e-6,
                                      "rate": 1000, "units": "m"}}}
    (sensor,) = build_sensors(document, mech, "s.yaml").sensors
    assert isinstance(sensor.spec, LinearParams) and sensor.spec.direction == (1.0, 0.0)


GYRO = {"kind": "gyroscope", "body": "coupler", "rate": 1000, "noise": {"density": 1e-4}}


def test_the_range_is_the_key_else_the_saturation_else_the_kinds_span() -> None:
    sensors = load_sensors(CONFIGS / "fourbar.yaml", fourbar())
    assert sensors["coupler_gyro"].params.range == (-34.9, 34.9)  # its saturation
    assert sensors["crank_encoder"].params.range == (-3.1416, 3.1416)  # its key
    encoder = {"kind": "encoder", "body": "crank", "rate": 1000, "counts": 4096}
    built = build_sensors({"sensors": {"g": GYRO, "e": encoder}}, fourbar(), "s.yaml")
    assert built["g"].params.range == (-1e3, 1e3) and built["e"].params.range == (-1e6, 1e6)  # the kinds' spans


@pytest.mark.parametrize("change,match", [
    ({"kind": "lidar"}, r"sensors.s.kind: must be one of gyroscope"),
    ({"body": "wheel"}, r"sensors.s.body: unknown body 'wheel'"),
    ({"rate": 0}, r"sensors.s.rate: must be a positive number"),
    ({"rate": "fast"}, r"sensors.s.rate: must be a finite number"),
    ({"units": "deg/s"}, r"sensors.s.units: gyroscope readings are in rad/s"),
    ({"noise": {"density": 0.0}}, r"sensors.s.noise.density: must be positive"),
    ({"noise": {"density": -1.0}}, r"sensors.s.noise.density: must be at least 0"),
    ({"noise": {"density": 1e-4, "saturation": [2, 1]}}, r"sensors.s.noise.saturation: needs low < high"),
    ({"noise": {"density": 1e-4, "colour": "pink"}}, r"sensors.s.noise: unknown key colour"),
    ({"bias_state": True}, r"sensors.s.noise.bias_sigma: a sensor with bias_state needs"),
    ({"loss": {"type": "tukey", "k": 1}}, r"sensors.s.loss.type: must be one of huber, cauchy"),
    ({"axis": 2}, r"sensors.s.axis: must be 1"),
    ({"bodyy": "crank"}, r"sensors.s: unknown key bodyy"),
    ({"range": [1, -1]}, r"sensors.s.range: needs low < high"),
    ({"range": [-1]}, r"sensors.s.range: must be a list of 2 finite numbers"),
])
def test_gyroscope_errors_name_the_key(change: dict, match: str) -> None:
    with pytest.raises(MbstateError, match=f"^s.yaml: {match}"):
        build_sensors({"sensors": {"s": {**GYRO, **change}}}, fourbar(), "s.yaml")


@pytest.mark.parametrize("entry,match", [
    ({"kind": "accelerometer", "body": "coupler", "rate": 10, "noise": {"density": 1}},
     r"sensors.s.position: required"),
    ({"kind": "accelerometer", "body": "coupler", "position": [1], "rate": 10, "noise": {"density": 1}},
     r"sensors.s.position: must be a list of 2 finite numbers"),
    ({"kind": "encoder", "rate": 10, "counts": 100}, r"sensors.s.body: give either body"),
    ({"kind": "encoder", "body": "crank", "bodies": ["crank", "rocker"], "rate": 10}, r"sensors.s.body: give either"),
    ({"kind": "encoder", "bodies": ["crank"], "rate": 10}, r"sensors.s.bodies: must be \[reference, body\]"),
    ({"kind": "encoder", "bodies": ["crank", "x"], "rate": 10}, r"sensors.s.bodies\[1\]: unknown body 'x'"),
    ({"kind": "encoder", "body": "crank", "counts": 10.5, "rate": 10}, r"sensors.s.counts: must be a whole number"),
    ({"kind": "encoder", "body": "crank", "counts": 64, "turns": "many", "rate": 10}, r"sensors.s.turns: must be one"),
    ({"kind": "encoder", "body": "crank", "rate": 10}, r"sensors.s.noise.density: must be positive"),
    ({"kind": "encoder", "body": "crank", "rate": 10, "noise": {"quantum": 0.1}},
     r"sensors.s.noise.quantum: an encoder's resolution is set by counts"),
    ({"kind": "encoder", "point": 1, "direction": [0, 0], "rate": 10, "units": "m"}, r"sensors.s.direction: must not"),
    ({"kind": "encoder", "point": 9, "direction": [1, 0], "rate": 10, "units": "m", "resolution": 1e-3},
     r"sensors.s.point: unknown point 9"),
    ({"kind": "encoder", "point": 1, "direction": [1, 0], "rate": 10, "resolution": 1e-3, "units": "rad"},
     r"sensors.s.units: encoder readings are in m"),
    ({"kind": "load_cell", "rate": 10, "noise": {"density": 1}}, r"sensors.s.link: give exactly one of"),
    ({"kind": "load_cell", "link": "rocker", "actuator": "motor", "rate": 10}, r"sensors.s.link: give exactly one"),
    ({"kind": "load_cell", "constraint": "rocker", "rate": 10}, r"sensors.s.constraint: no distance constraint named"),
    ({"kind": "load_cell", "actuator": "brake", "rate": 10}, r"sensors.s.actuator: unknown actuator 'brake'"),
    ({"kind": "load_cell", "actuator": "motor", "rate": 10, "units": "N", "noise": {"density": 1}},
     r"sensors.s.units: load_cell readings are in N\*m"),
])
def test_kind_specific_errors_name_the_key(entry: dict, match: str) -> None:
    with pytest.raises(MbstateError, match=f"^s.yaml: {match}"):
        build_sensors({"sensors": {"s": entry}}, fourbar(), "s.yaml")


@pytest.mark.parametrize("document,match", [
    ([], r"\(top\): expected a map"),
    ({"sensors": {}}, r"\(top\).sensors: must map sensor ids"),
    ({"sensors": {"s": GYRO}, "robots": 1}, r"\(top\): unknown key robots"),
    ({"sensors": {"s": GYRO}, "mechanism": 3}, r"\(top\).mechanism: must be text"),
    ({"sensors": {"s": "gyro"}}, r"sensors.s: expected a map"),
    ({"sensors": {"": GYRO}}, r"sensors: a sensor id must be non-empty text"),
])
def test_file_structure_errors(document: object, match: str) -> None:
    with pytest.raises(MbstateError, match=f"^s.yaml: {match}"):
        build_sensors(document, fourbar(), "s.yaml")


def test_unreadable_and_invalid_files(tmp_path) -> None:
    with pytest.raises(MbstateError, match="cannot read"):
        load_sensors(tmp_path / "missing.yaml", fourbar())
    bad = tmp_path / "bad.yaml"
    bad.write_text("sensors: [unclosed", encoding="utf-8")
    with pytest.raises(MbstateError, match="invalid YAML"):
        load_sensors(bad, fourbar())
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump({"sensors": {"g": GYRO}}), encoding="utf-8")
    assert load_sensors(good, fourbar())["g"].params.rate == 1000


def test_urdf_examples_load() -> None:
    ur5 = load_spatial(MECHANISMS / "urdf" / "ur5.urdf")
    imu = load_sensors(CONFIGS / "ur5_imu.yaml", ur5)
    assert [s.params.kind for s in imu.sensors] == ["encoder"] * 6 + ["gyroscope", "accelerometer"]
    assert imu.dimensions()["wrist_gyro"] == imu.dimensions()["wrist_accelerometer"] == 3
    assert imu["wrist_gyro"].mount.body == ur5.link_names.index("wrist_3_link")
    panda = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
    torque = load_sensors(CONFIGS / "panda_torque.yaml", panda)
    assert [s.params.kind for s in torque.sensors] == ["encoder"] * 7 + ["joint_torque"] * 7
    assert [s.joint for s in torque.sensors[7:]] == list(range(7))
    assert torque["joint5_torque"].params.range == (-12.0, 12.0)


URDF_GOOD = {"gyroscope": {"kind": "gyroscope", "link": "wrist_3_link", "rate": 100, "noise": {"density": 1e-4}},
             "joint_torque": {"kind": "joint_torque", "joint": "elbow_joint", "rate": 100, "noise": {"sigma": 0.1}},
             "force_torque": {"kind": "force_torque", "joint": "wrist_3_joint", "rate": 100, "noise": {"sigma": 0.1}}}


@pytest.mark.parametrize("kind, change, problem", [
    ("gyroscope", {"link": "hand"}, "sensors.s.link: unknown link 'hand' of ur5 (moving: shoulder_link, "),
    ("gyroscope", {"link": "base_link"}, "sensors.s.link: 'base_link' is on the fixed base world: it does not move"),
    ("gyroscope", {"frame": "tool0"}, "sensors.s.link: give exactly one of link (a URDF link) or frame"),
    ("gyroscope", {"body": "wrist_3_link"}, "sensors.s.body: a sensor of a URDF is mounted by link: (or frame:)"),
    ("gyroscope", {"xyz": [0, 0]}, "sensors.s.xyz: must be a list of 3 finite numbers"),
    ("gyroscope", {"rpy": "up"}, "sensors.s.rpy: must be a list of 3 finite numbers"),
    ("gyroscope", {"units": "deg/s"}, "sensors.s.units: gyroscope readings are in rad/s, got 'deg/s'"),
    ("gyroscope", {"position": [0, 0]}, "sensors.s.position: a sensor of a URDF is mounted by link"),
    ("joint_torque", {"joint": "wrist"}, "sensors.s.joint: 'wrist' is not a movable joint of ur5"),
    ("joint_torque", {"xyz": [0, 0, 0]}, "sensors.s: unknown key xyz"),
    ("force_torque", {"joint": "ee_fixed_joint"}, "sensors.s.joint: 'ee_fixed_joint' is not a movable joint of ur5"),
    ("force_torque", {"link": "tool0"}, "sensors.s: unknown key link"),
    ("load_cell", {}, "sensors.s.kind: must be one of encoder, gyroscope, accelerometer, joint_torque, force_torque"),
])
def test_bad_urdf_sensor_is_one_line(kind: str, change: dict, problem: str) -> None:
    config = {**URDF_GOOD.get(kind, URDF_GOOD["gyroscope"]), **change, "kind": kind}
    ur5 = load_spatial(MECHANISMS / "urdf" / "ur5.urdf")
    with pytest.raises(MbstateError) as error:
        build_sensors({"sensors": {"s": config}}, ur5, "ur5.yaml")
    message = str(error.value)
    assert message.startswith("ur5.yaml: ") and problem in message and "\n" not in message
