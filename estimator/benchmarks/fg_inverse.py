"""Factor-graph inverse dynamics: total time and torque error, per solver setting.

    python -m estimator.benchmarks.fg_inverse [--repeat 3]

Cases: the four-bar along the upstream crank trajectory (2000 points at 5 ms), torque against MSC
Adams (both from tests/data/mbse, see tests/data/README.md); the pick-and-place robot along
configs/trajectories/pick_and_place.txt (1000 points at 5 ms), torques against the classical
inverse dynamics with the same input. Both methods take the drives' velocities and accelerations
from the local polynomial fit of the samples (estimator.drive_trajectory). Errors are RMS and
maximum in % of each torque's range; times per point and in total for the whole trajectory, median
of the repeats after one warm-up run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from estimator.benchmarks import CONFIGS, Timing, machine, time_per_step
from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.inverse import inverse_dynamics
from estimator.graph_dynamics.inverse import FGOptions, fg_inverse_dynamics
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism

REPO = Path(__file__).resolve().parents[2]
MBSE_DATA = REPO / "tests" / "data" / "mbse"
ROBOT_TRAJECTORY = REPO / "configs" / "trajectories" / "pick_and_place.txt"
SETTINGS = (FGOptions(), FGOptions(ordering="METIS"), FGOptions(ordering="NATURAL"),
            FGOptions(factorization="QR"), FGOptions(drive_rates="integrators", factorization="QR"))


@dataclass(frozen=True)
class Case:
    """A mechanism, its drives and their sampled motion, and the reference torques (N, k)."""

    label: str
    mech: Mechanism
    drives: tuple[str, ...]
    t: np.ndarray
    motion: tuple[np.ndarray, np.ndarray, np.ndarray]
    reference: np.ndarray
    reference_name: str


def four_bar_case() -> Case:
    """The crank file and Adams' torques (sign flipped: Adams reports the reaction)."""
    mech = load_mechanism(CONFIGS / "fourbar_crank.yaml")
    samples = load_drive_trajectory(MBSE_DATA / "fourbars1-with-rel-angle-trajectory.txt", 1)
    reference = -np.loadtxt(MBSE_DATA / "InverseDynamics_4bars_MSC.tab", comments="%")[:, 1:2]
    return Case("four-bar", mech, ("theta0",), samples.t, samples.derivatives(), reference, "MSC Adams")


def robot_case() -> Case:
    """The pick-and-place trajectory; the reference is the classical inverse dynamics."""
    mech = load_mechanism(CONFIGS / "pick_and_place.yaml")
    samples = load_drive_trajectory(ROBOT_TRAJECTORY, 2)
    motion = samples.derivatives()
    drives = ("theta0", "theta1")
    classical = inverse_dynamics(mech, drives, samples.t, *motion).trajectory
    reference = np.column_stack([classical.forces[name] for name in drives])
    return Case("pick-and-place", mech, drives, samples.t, motion, reference, "classical")


def percent_of_range(torques: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """Largest over the drives of (RMS, max) |error| in % of the reference's range."""
    error = np.abs(torques - reference) / np.ptp(reference, axis=0)
    return float(100 * np.max(np.sqrt(np.mean(error**2, axis=0)))), float(100 * np.max(error))


def run_case(case: Case, solve: Callable[[], object], name: str, repeat: int) -> Timing:
    """Time ``solve`` per point; the note gives the total time and the torque error."""
    timing = time_per_step(f"{case.label} {name}", solve, len(case.t), repeat)
    result = solve()
    torques = np.column_stack([result.trajectory.forces[d] for d in case.drives])
    rms, worst = percent_of_range(torques, case.reference)
    accuracy = f"RMS {rms:.4f} %, max {worst:.4f} % of range vs {case.reference_name}"
    return replace(timing, note=f"total {timing.per_step * len(case.t):.3f} s; {accuracy}")


def fg_inverse_benchmarks(repeat: int = 3) -> list[Timing]:
    """The classical method and each factor-graph setting on both cases."""
    rows = []
    for case in (four_bar_case(), robot_case()):
        rows.append(run_case(case, lambda c=case: inverse_dynamics(c.mech, c.drives, c.t, *c.motion),
                             "classical", repeat))
        for options in SETTINGS:
            name = f"fg {options.drive_rates} {options.ordering} {options.factorization}"
            rows.append(run_case(case, lambda c=case, o=options: fg_inverse_dynamics(c.mech, c.drives, c.t,
                                                                                      *c.motion, o),
                                 name, repeat))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="factor-graph inverse dynamics: time and accuracy")
    parser.add_argument("--repeat", type=int, default=3, help="timed repeats per case (default 3)")
    args = parser.parse_args()
    print(machine())
    for timing in fg_inverse_benchmarks(max(1, args.repeat)):
        print(f"  {timing.case:<48} {timing.per_step * 1e6:8.1f} µs/point  {timing.note}")


if __name__ == "__main__":
    main()
