"""Write the motor trajectory of the pick-and-place robot (configs/mechanisms/pick_and_place.yaml):
``configs/trajectories/pick_and_place.txt``, 1000 samples every 5 ms (t = 0 … 4.995 s).

    python scripts/make_pick_and_place_trajectory.py [--out FILE]

Motion (closed form, deterministic): both cranks leave their file angles θ0(0) = −3π/4 and
θ1(0) = −π/4 at rest, reach the place pose at t_c = 2.5 s and come straight back, the velocity
reversing within a few tens of milliseconds (a fast stop-and-return: a steep change of the motor
torques at t_c). With u = t − t_c, the rounded tent

    φ(t) = 1 − (√(u² + δ²) − δ) / c,   c = √(T² + δ²) − δ,   T = 2.5 s,  δ = 0.02 s,

goes from 0 (t = 0) to 1 (t = t_c) and back to 0 (t = 2 t_c), with a corner rounded over ~2δ. The
motors follow θ_j(t) = θ_j(0) + A_j g(φ(t)), A = (0.4, −0.25) rad, g(φ) = φ³ (7 − 5φ)/2: g rises
monotonically from g(0) = g'(0) = g''(0) = 0 (start at rest, no acceleration step) to g(1) = 1 with
g'(1) = 1/2, so the velocity reverses from +A_j/(2c) to −A_j/(2c) at the turn, with the peak
acceleration −A_j/(2δc) there (−4 rad/s² for motor 1, against ~0.6 rad/s² elsewhere).
:func:`motion` gives the exact derivatives too:

    φ' = −u / (c √(u² + δ²)),   φ'' = −δ² / (c (u² + δ²)^{3/2}),
    g' = (21 φ² − 20 φ³)/2,   g'' = 21 φ − 30 φ²,
    θ' = A g'(φ) φ',   θ'' = A (g''(φ) φ'² + g'(φ) φ'').

Format (upstream MBSE): ``%`` comment lines, then one row per sample: t [s], θ0, θ1 [rad], 12
significant digits.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

START = np.array([-0.75 * np.pi, -0.25 * np.pi])  # θ0, θ1 at t = 0 [rad] (the file's angles)
AMPLITUDE = np.array([0.4, -0.25])  # [rad]
TURN, HALF_SPAN, ROUNDING = 2.5, 2.5, 0.02  # t_c, T, δ [s]
STEP, COUNT = 0.005, 1000
OUT = Path(__file__).resolve().parents[1] / "configs" / "trajectories" / "pick_and_place.txt"


def motion(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """θ, θ̇, θ̈ of both motors at times t (each (len(t), 2)) [rad, rad/s, rad/s²]."""
    u = np.asarray(t, float)[:, None] - TURN
    root = np.sqrt(u**2 + ROUNDING**2)
    scale = np.sqrt(HALF_SPAN**2 + ROUNDING**2) - ROUNDING
    phi = 1.0 - (root - ROUNDING) / scale
    dphi = -u / (scale * root)
    ddphi = -ROUNDING**2 / (scale * root**3)
    shape = phi**3 * (7.0 - 5.0 * phi) / 2.0  # g
    slope = (21.0 * phi**2 - 20.0 * phi**3) / 2.0  # g'
    bend = 21.0 * phi - 30.0 * phi**2  # g''
    pos = START + AMPLITUDE * shape
    vel = AMPLITUDE * slope * dphi
    acc = AMPLITUDE * (bend * dphi**2 + slope * ddphi)
    return pos, vel, acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output file (default {OUT})")
    args = parser.parse_args()
    t = STEP * np.arange(COUNT)
    pos, _, _ = motion(t)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    header = ("% Pick-and-place robot motor trajectory, written by scripts/make_pick_and_place_trajectory.py\n"
              "% (formula in its docstring): stop-and-return at t = 2.5 s\n"
              "% t [s]              theta0 [rad]         theta1 [rad]\n")
    rows = "".join(f"{ti: .11e} {a: .11e} {b: .11e}\n" for ti, (a, b) in zip(t, pos))
    args.out.write_text(header + rows, encoding="utf-8")
    print(f"written: {args.out} ({COUNT} samples, dt = {STEP} s)")


if __name__ == "__main__":
    main()
