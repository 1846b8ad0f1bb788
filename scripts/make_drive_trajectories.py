"""Write the drive trajectories of the accuracy matrix (estimator/benchmarks/accuracy.py):
``configs/trajectories/<mechanism>.txt`` for the four-bar, the slider-crank, the five-bar, the UR5
and Panda arms and the Delta robot's motors, 2000 samples every 5 ms (t = 0 … 9.995 s). The pick-and-place robot's has its own script
(make_pick_and_place_trajectory.py).

    python scripts/make_drive_trajectories.py [--out-dir DIR]

Motion (closed form): each driven coordinate leaves its angle in the mechanism file at rest and
swings as θ_j(t) = θ_j(0) + A_j (1 − cos ω_j t), so θ̇_j(0) = 0. The four-bar's crank follows the
paper's motion (A = 1.2 rad, ω = 2 rad/s); the slider-crank's crank turns through the slider's dead
centre (the crank drives it: no singular pose); the five-bar's cranks move at incommensurate rates,
so the end effector sweeps an area, with its couplers kept clear of the singular poses where they
or a crank and its coupler line up (tests/estimator/benchmarks/test_accuracy_matrix.py checks the margin).
The arms (URDF) swing every joint from a working pose (``start``; a URDF's joints are 0 in its file,
arm stretched) at incommensurate rates, within the joint limits and under 1.5 rad/s. The Delta's three
motors swing from its sidecar's pose as in its demo (estimator.demo.cases), at other rates; its rods'
spins are not driven (the accuracy matrix moves them by hybrid dynamics).

Format (upstream MBSE): ``%`` comment lines, then one row per sample: t [s], then one column per
driven coordinate [rad], 12 significant digits.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from estimator.assembly import assembled
from estimator.demo.cases import DELTA_SWING, PANDA_READY, PANDA_SWING
from estimator.model_protocol import load_model

REPO = Path(__file__).resolve().parents[1]
MECHANISMS = REPO / "configs" / "mechanisms"
OUT_DIR = REPO / "configs" / "trajectories"
STEP, COUNT = 0.005, 2000


@dataclass(frozen=True)
class Swing:
    """θ_j(t) = θ_j(0) + A_j (1 − cos ω_j t) for the coordinates ``drives`` (θ_j(0) from the file, or
    ``start``) of the mechanism ``file`` (in configs/mechanisms)."""

    file: str
    drives: tuple[str, ...]
    amplitude: tuple[float, ...]  # A_j [rad]
    omega: tuple[float, ...]  # ω_j [rad/s]
    start: tuple[float, ...] = ()  # θ_j(0) [rad] where the file's pose is not the one to start from


UR5_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint")
SWINGS = {"fourbar_crank": Swing("fourbar_crank.yaml", ("theta0",), (1.2,), (2.0,)),
          "slider_crank": Swing("slider_crank.yaml", ("crank",), (1.5,), (4.0,)),
          "five_bar": Swing("five_bar.yaml", ("left", "right"), (0.5, 0.3), (2.0, 3.0)),
          "ur5": Swing("urdf/ur5.urdf", UR5_JOINTS, (0.5, 0.4, 0.5, 0.4, 0.5, 0.6), (0.9, 1.1, 1.3, 1.7, 1.5, 2.1),
                       (0.0, -1.0, 1.2, -1.5, -1.5, 0.0)),
          "panda": Swing("urdf/panda.urdf", tuple(f"panda_joint{j}" for j in range(1, 8)),
                         tuple(PANDA_SWING.tolist()), (0.9, 1.1, 1.3, 0.7, 1.7, 1.5, 2.1),
                         tuple(PANDA_READY.tolist())),  # the demo's pose and swings, other rates
          "delta": Swing("urdf/delta.urdf", ("arm0", "arm1", "arm2"), tuple(DELTA_SWING.tolist()),
                         (1.1, 1.7, 2.3))}  # the demo's motor swings from the sidecar's pose, other rates


def samples(mechanism: str, t: np.ndarray) -> np.ndarray:
    """θ_j(t) of a mechanism's swing, (len(t), k) [rad]."""
    swing = SWINGS[mechanism]
    mech = load_model(MECHANISMS / swing.file)
    q0 = assembled(mech, dict(zip(swing.drives, swing.start)))
    start = np.array([q0[mech.coordinate_names.index(name)] for name in swing.drives])
    return start + np.array(swing.amplitude) * (1.0 - np.cos(np.outer(t, swing.omega)))


def file_text(mechanism: str) -> str:
    """The trajectory file of one mechanism, with its header comment."""
    swing = SWINGS[mechanism]
    t = STEP * np.arange(COUNT)
    terms = ", ".join(f"{name} = {name}(0) + {a:g} (1 - cos {w:g} t)"
                      for name, a, w in zip(swing.drives, swing.amplitude, swing.omega))
    header = (f"% {swing.file} drive trajectory, written by scripts/make_drive_trajectories.py\n"
              f"% {terms} [rad, t in s]\n"
              f"% t [s]              {'  '.join(f'{name} [rad]'.ljust(19) for name in swing.drives).rstrip()}\n")
    rows = "".join(f"{ti: .11e}" + "".join(f" {v: .11e}" for v in row) + "\n"
                   for ti, row in zip(t, samples(mechanism, t)))
    return header + rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help=f"output folder (default {OUT_DIR})")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for mechanism in SWINGS:
        path = args.out_dir / f"{mechanism}.txt"
        path.write_text(file_text(mechanism), encoding="utf-8")
        print(f"written: {path} ({COUNT} samples, dt = {STEP} s)")


if __name__ == "__main__":
    main()
