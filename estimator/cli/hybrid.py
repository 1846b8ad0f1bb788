"""``mbstate hybrid``: prescribed motion on some coordinates, free motion of the others, by one
factor graph; the drive forces and the free motion."""

from __future__ import annotations

import argparse

import numpy as np

from estimator.cli.arguments import assignments
from estimator.cli.inverse import add_graph_options, graph_options
from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.fg_hybrid import HYBRID_OPTIONS, fg_hybrid_dynamics
from estimator.dynamics.inverse import drive_indices
from estimator.mechanism_file import load_mechanism
from estimator.timeseries import write_csv


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``hybrid`` subcommand."""
    parser = subparsers.add_parser(
        "hybrid", help="hybrid dynamics: drive forces and free motion by one factor graph",
        description="Drive the named coordinates of MECH along the trajectory file (time grid = the file's "
                    "times); the other coordinates move freely under the mechanism's forces from the initial "
                    "state. Writes t, q, qd, qdd, Q.<drive> and lambda as CSV.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file")
    parser.add_argument("--trajectory", required=True, metavar="FILE",
                        help="samples: time [s], then one column per driven coordinate; '%%' or '#' comments")
    parser.add_argument("--drive", required=True, metavar="NAME[,NAME...]",
                        help="driven coordinate names, in the order of the trajectory's columns")
    parser.add_argument("--initial", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial values of free coordinates, held while assembling (default: the file's)")
    parser.add_argument("--velocity", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial velocities of free coordinates (default 0 for those in --initial; "
                             "the others from Φq q̇ = 0)")
    parser.add_argument("--out", required=True, metavar="OUT.csv", help="output CSV")
    add_graph_options(parser, HYBRID_OPTIONS, drive_rates=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load, solve, write and print a short summary."""
    mech = load_mechanism(args.mechanism)
    drives = [name.strip() for name in args.drive.split(",")]
    drive_indices(mech, drives)
    samples = load_drive_trajectory(args.trajectory, len(drives))
    result = fg_hybrid_dynamics(mech, drives, samples.t, *samples.derivatives(), initial=args.initial,
                                rates=args.velocity, options=graph_options(args))
    write_csv(args.out, result.trajectory)
    print(f"{len(samples.t)} points, t = {samples.t[0]:g} .. {samples.t[-1]:g} s, "
          f"{1e3 * result.seconds_per_point:.3f} ms per point, {result.iterations} Gauss-Newton iteration(s)")
    for name, force in result.trajectory.forces.items():
        print(f"  Q.{name}: min {np.min(force):.6g}, max {np.max(force):.6g}")
    print(f"written: {args.out}")
    return 0
