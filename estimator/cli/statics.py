"""``mbstate statics``: static equilibrium, optionally with held coordinates, and its stability."""

from __future__ import annotations

import argparse

import numpy as np

from estimator.argument_types import assignments
from estimator.dynamics.statics import solve_statics
from estimator.mechanism_file import load_mechanism
from estimator.timeseries import Trajectory, write_csv


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``statics`` subcommand."""
    parser = subparsers.add_parser(
        "statics", help="static equilibrium and its stability",
        description="Find the static equilibrium of MECH under gravity, springs and loads by Newton-Raphson "
                    "from the file's coordinates, and tell whether it is a stable minimum.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file")
    parser.add_argument("--hold", type=assignments, default={}, metavar="NAME=VALUE[,...]",
                        help="coordinates held at VALUE [m or rad]; their holding forces are reported")
    parser.add_argument("--out", metavar="OUT.csv", help="write q, Q.<held> and lambda as a one-row CSV")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Solve, print coordinates, multipliers and the verdict; optionally write a CSV."""
    mech = load_mechanism(args.mechanism)
    result = solve_statics(mech, args.hold)
    print(f"equilibrium after {result.iterations} Newton iterations")
    for name, value in zip(mech.coordinate_names, result.q):
        print(f"  {name} = {value:.10g}")
    for name, value in result.held_forces.items():
        print(f"  Q.{name} = {value:.10g} (holding force)")
    print("multipliers: " + " ".join(f"{value:.6g}" for value in result.lam))
    smallest = f", smallest reduced-stiffness eigenvalue {result.eigenvalues[0]:.6g}" if len(result.eigenvalues) else ""
    print(f"stability: {result.verdict}{smallest}")
    if not result.stable:
        print("  (Newton-Raphson finds the equilibrium nearest the file's coordinates; move them to find another)")
    if args.out:
        write_csv(args.out, Trajectory(t=np.zeros(1), coordinate_names=mech.coordinate_names, q=result.q[None],
                                       forces={k: np.array([v]) for k, v in result.held_forces.items()},
                                       lam=result.lam[None]))
        print(f"written: {args.out}")
    return 0
