"""``mbstate hybrid``: prescribed motion on some coordinates, free motion of the others, by one
factor graph; the drive forces and the free motion."""

from __future__ import annotations

import argparse

from estimator.argument_types import assignments
from estimator.cli.inverse import add_drive_arguments, add_graph_options, graph_options, load_drives, report
from estimator.graph_dynamics.hybrid import HYBRID_OPTIONS, fg_hybrid_dynamics


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``hybrid`` subcommand."""
    parser = subparsers.add_parser(
        "hybrid", help="hybrid dynamics: drive forces and free motion by one factor graph",
        description="Drive the named coordinates of MECH along the trajectory file (time grid = the file's "
                    "times); the other coordinates move freely under the mechanism's forces from the initial "
                    "state. Writes t, q, qd, qdd, Q.<drive> and lambda as CSV.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file")
    add_drive_arguments(parser)
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
    mech, drives, samples = load_drives(args)
    result = fg_hybrid_dynamics(mech, drives, samples.t, *samples.derivatives(), initial=args.initial,
                                rates=args.velocity, options=graph_options(args))
    report(args.out, result, samples, f"({result.iterations} Gauss-Newton iteration(s))")
    return 0
