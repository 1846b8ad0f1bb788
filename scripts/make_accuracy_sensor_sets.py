"""Write the sensor sets of the accuracy matrix (estimator/benchmarks/accuracy.py):
``configs/sensors/matrix/<mechanism>_<set>.yaml`` for each mechanism of configs/bench/accuracy.yaml.

    python scripts/make_accuracy_sensor_sets.py [--out-dir DIR]

The sets a user would fit, from one layout per mechanism (``LAYOUTS``: its joint encoders, the
links that carry an IMU, the link with a load cell):

    a  encoders on the joints (the driven joints; a pendulum's joints), 1 kHz
    b  a, plus a gyroscope on every IMU link, 1 kHz
    c  an IMU on every IMU link: gyroscope 1 kHz and 2-axis accelerometer 500 Hz (no absolute angle)
    d  a and c, plus a load cell in one link, 100 Hz (the pick-and-place robot: motor 1's torque, as
       every link is in its redundant loop, where λ is not unique and a link's force not observable)

The URDF arms and the Delta robot (``ARM_LAYOUTS``) have sets of their own (issue 39), named anew:

    enc  an encoder of 2^14 counts per revolution on every actuated joint (an arm's every joint, the
         Delta's three motors), 1 kHz
    imu  enc, plus an IMU on every moving link (the Delta: on its platform; 3-axis gyroscope and
         accelerometer at its origin, 1 kHz; calibrated: no turn-on bias, no bias state, as the seven
         IMUs' 42 bias states would weigh more than they tell here)
    tau  enc, plus a joint torque sensor on every joint (σ 0.05 N·m per sample, 1 kHz, as Franka's). Not on
         the Delta yet: the sensor's model is the tree's transmitted torque (sensors/joint_torque.py), which
         on a closed chain leaves out the loops' reactions on the joint's distal side, (Φqᵀλ)ⱼ, so it
         would not read what a motor delivers
    ft   enc, plus a 6-axis force-torque sensor on the last joint (the wrist; σ 0.03 N and N·m per sample,
         1 kHz). Not on the Delta: it has no wrist, and the last joint of its spanning tree (the platform's
         third gimbal axis) is where the tree was cut open, not a mount that carries a load

Noise as in configs/sensors/fourbar.yaml (the commented example): encoders of 4096 counts (the
pick-and-place robot's motor encoders 8192, as in configs/sensors/pick_and_place.yaml); gyroscopes
8.7e-5 rad/s/√Hz and accelerometers 1.5e-3 m/s²/√Hz with a turn-on bias, a bias random walk and the
bias as an estimated state, quantized, saturated and with time-stamp jitter; load cells 0.05 N/√Hz.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from estimator.model_protocol import load_model

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "configs" / "sensors" / "matrix"
SETS = {"a": "encoders on the joints", "b": "encoders and gyroscopes",
        "c": "IMU only (gyroscopes and accelerometers, no absolute angle)",
        "d": "encoders, IMU and a load cell"}

ENCODER_NOISE = {"jitter": 1.0e-6}
GYRO_NOISE = {"density": 8.7e-5, "random_walk": 2.0e-5, "bias": 0.01, "bias_sigma": 0.02, "quantum": 1.07e-3,
              "saturation": [-34.9, 34.9], "jitter": 2.0e-5}
ACCELEROMETER_NOISE = {"density": 1.5e-3, "random_walk": 3.0e-3, "bias": 0.05, "bias_sigma": 0.1, "quantum": 4.8e-3,
                       "saturation": [-156.9, 156.9], "jitter": 2.0e-5}
LOAD_CELL_NOISE = {"density": 0.05, "saturation": [-500, 500]}


@dataclass(frozen=True)
class Layout:
    """Where the sensors of one mechanism go: ``encoders`` {id: body or [reference, body]} with
    ``counts`` per revolution, ``imus`` {body: mounting point (ξ, η) in the body frame [m]}, and the
    ``load_cell`` ({link: body name} or {actuator: name}, as in a sensor file)."""

    mechanism: str
    encoders: dict[str, str | list[str]]
    imus: dict[str, list[float]]
    load_cell: dict[str, str]
    counts: int = 4096


LAYOUTS = {
    "pendulum": Layout("pendulum.yaml", {"rod_encoder": "rod"}, {"rod": [0.5, 0.0]}, {"link": "rod"}),
    "double_pendulum": Layout("double_pendulum.yaml",
                              {"shoulder_encoder": "upper", "elbow_encoder": ["upper", "lower"]},
                              {"upper": [0.5, 0.0], "lower": [0.4, 0.0]}, {"link": "upper"}),
    "fourbar": Layout("fourbar_crank.yaml", {"crank_encoder": "crank"}, {"coupler": [1.0, 0.05]}, {"link": "rocker"}),
    "slider_crank": Layout("slider_crank.yaml", {"crank_encoder": "crank"}, {"rod_and_slider": [0.3, 0.0]},
                           {"link": "rod_and_slider"}),  # the IMU at the slider pin B
    "five_bar": Layout("five_bar.yaml", {"left_encoder": "left_crank", "right_encoder": "right_crank"},
                       {"left_coupler": [0.25, 0.0], "right_coupler": [0.25, 0.0]}, {"link": "left_coupler"}),
    "pick_and_place": Layout("pick_and_place.yaml", {"motor1_encoder": "left_crank", "motor2_encoder": "right_crank"},
                             {"left_inner_rod": [1.5, 0.0], "right_inner_rod": [1.5, 0.0]}, {"actuator": "motor1"},
                             counts=8192),  # every link is in the redundant loop (λ not unique): motor torque
}


@dataclass(frozen=True)
class ArmLayout:
    """Where the sensors of a URDF mechanism go: its file (in configs/mechanisms); its actuated ``joints`` in
    order from the base (an arm's: every joint), each with an encoder of ``counts`` per revolution, and the
    ``links`` with an IMU (``imu_links``, default every moving link), both as the URDF names them; the
    ``sets`` it has."""

    mechanism: str
    counts: int = 16384
    imu_links: tuple[str, ...] = ()
    sets: tuple[str, ...] = ("enc", "imu", "tau", "ft")

    @property
    def joints(self) -> tuple[str, ...]:
        model = load_model(REPO / "configs" / "mechanisms" / self.mechanism)
        return tuple(model.joint_names[int(j)] for j in model.actuated)

    @property
    def links(self) -> tuple[str, ...]:
        return self.imu_links or load_model(REPO / "configs" / "mechanisms" / self.mechanism).link_names


ARM_SETS = {"enc": "encoders on the joints", "imu": "encoders and an IMU on every moving link",
            "tau": "encoders and joint torque sensors", "ft": "encoders and a wrist force-torque sensor"}
ARM_GYRO_NOISE = {"density": 8.7e-5, "quantum": 1.07e-3, "saturation": [-34.9, 34.9], "jitter": 2.0e-5}
ARM_ACCELEROMETER_NOISE = {"density": 1.5e-3, "quantum": 4.8e-3, "saturation": [-156.9, 156.9], "jitter": 2.0e-5}
JOINT_TORQUE_NOISE = {"sigma": 0.05, "jitter": 1.0e-6}
FORCE_TORQUE_NOISE = {"sigma": 0.03, "jitter": 1.0e-6}
ALL_SETS = SETS | ARM_SETS
ARM_LAYOUTS = {"ur5": ArmLayout("urdf/ur5.urdf"), "panda": ArmLayout("urdf/panda.urdf"),
               "delta": ArmLayout("urdf/delta.urdf", imu_links=("platform",), sets=("enc", "imu"))}


def joint_encoders(layout: ArmLayout) -> dict[str, Any]:
    return {f"{joint}_encoder": {"kind": "encoder", "joint": joint, "counts": layout.counts, "rate": 1000,
                                 "noise": dict(ENCODER_NOISE)} for joint in layout.joints}


def link_imus(layout: ArmLayout) -> dict[str, Any]:
    return {f"{link}_{kind}": {"kind": kind, "link": link, "rate": 1000, "noise": dict(noise)}
            for link in layout.links
            for kind, noise in (("gyroscope", ARM_GYRO_NOISE), ("accelerometer", ARM_ACCELEROMETER_NOISE))}


def joint_torques(layout: ArmLayout) -> dict[str, Any]:
    return {f"{joint}_torque": {"kind": "joint_torque", "joint": joint, "rate": 1000, "noise": dict(JOINT_TORQUE_NOISE)}
            for joint in layout.joints}


def wrist_force_torque(layout: ArmLayout) -> dict[str, Any]:
    return {"wrist_force_torque": {"kind": "force_torque", "joint": layout.joints[-1], "rate": 1000,
                                   "noise": dict(FORCE_TORQUE_NOISE)}}


def encoders(layout: Layout) -> dict[str, Any]:
    return {name: {"kind": "encoder", **({"bodies": body} if isinstance(body, list) else {"body": body}),
                   "counts": layout.counts, "rate": 1000, "noise": dict(ENCODER_NOISE)}
            for name, body in layout.encoders.items()}


def gyroscopes(layout: Layout) -> dict[str, Any]:
    return {f"{body}_gyro": {"kind": "gyroscope", "body": body, "rate": 1000, "bias_state": True,
                             "noise": dict(GYRO_NOISE)} for body in layout.imus}


def accelerometers(layout: Layout) -> dict[str, Any]:
    return {f"{body}_accelerometer": {"kind": "accelerometer", "body": body, "position": position, "rate": 500,
                                      "bias_state": True, "noise": dict(ACCELEROMETER_NOISE)}
            for body, position in layout.imus.items()}


def load_cells(layout: Layout) -> dict[str, Any]:
    (key, name), = layout.load_cell.items()
    units = "N" if key == "link" else "N*m"
    return {f"{name}_load_cell": {"kind": "load_cell", key: name, "rate": 100, "units": units,
                                  "noise": dict(LOAD_CELL_NOISE)}}


PARTS = {"a": (encoders,), "b": (encoders, gyroscopes), "c": (gyroscopes, accelerometers),
         "d": (encoders, gyroscopes, accelerometers, load_cells), "enc": (joint_encoders,),
         "imu": (joint_encoders, link_imus), "tau": (joint_encoders, joint_torques),
         "ft": (joint_encoders, wrist_force_torque)}


def sensor_set(layout: Layout | ArmLayout, name: str) -> dict[str, Any]:
    """The document of one set (see the module docstring)."""
    sensors: dict[str, Any] = {}
    for part in PARTS[name]:
        sensors.update(part(layout))
    return {"mechanism": f"configs/mechanisms/{layout.mechanism}", "description": f"set {name}: {ALL_SETS[name]}",
            "sensors": sensors}


def flow(value: Any) -> str:
    """A value in YAML flow style, on one line."""
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=1000).removesuffix("...\n").strip()


def text(document: dict[str, Any]) -> str:
    """The document as YAML: one block per sensor, each setting on one line."""
    lines = [f"{key}: {flow(document[key])}" for key in ("mechanism", "description")] + ["sensors:"]
    for name, settings in document["sensors"].items():
        lines += [f"  {name}:"] + [f"    {key}: {flow(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def file_text(mechanism: str, name: str) -> str:
    """The file of one mechanism and set, with its header comment."""
    layout = (LAYOUTS | ARM_LAYOUTS)[mechanism]
    return (f"# Accuracy matrix, {mechanism} ({layout.mechanism}), sensor set {name}: {ALL_SETS[name]}.\n"
            f"# Written by scripts/make_accuracy_sensor_sets.py (its docstring explains the sets); keys as\n"
            f"# in configs/sensors/fourbar.yaml, documented in configs/sensors/README.md.\n"
            + text(sensor_set(layout, name)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help=f"output folder (default {OUT_DIR})")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    cells = [(m, s) for m in LAYOUTS for s in SETS] + [(m, s) for m, layout in ARM_LAYOUTS.items() for s in layout.sets]
    for mechanism, name in cells:
        path = args.out_dir / f"{mechanism}_{name}.yaml"
        path.write_text(file_text(mechanism, name), encoding="utf-8")
        print(f"written: {path}")


if __name__ == "__main__":
    main()
