"""``mbstate hybrid``: prescribed motion on some coordinates, free motion of the others, by one
factor graph; the drive forces and the free motion.

A URDF: the hybrid dynamics graph of estimator.spatial_graph at every RK4 stage (the driven joints'
accelerations given, the free joints' forces zero; gravity, damping and friction act), eliminated in
``--ordering`` (on a tree the tree orderings RNEA, CRBA and ABA too); ``--explain`` prints its Bayes net.
A tree starts from the ``--initial`` and ``--velocity`` values (default 0) with the driven joints on
their first samples. A closed chain (the sidecar's ``loops``) starts from the sidecar's ``initial``
assembled with the driven joints on their first samples and the ``--initial`` joints held;
``--velocity`` gives free joints' rates (the others from Φq q̇ = 0); after each sample interval its
state is projected onto the loops, and ``--planar-loops`` names the planar loops that get the planar
factor (estimator.cli.spatial_graph_options)."""

from __future__ import annotations

import argparse

import numpy as np

from estimator.argument_types import assignments
from estimator.cli.inverse import add_drive_arguments, add_graph_options, graph_options, load_drives, report
from estimator.cli.spatial_graph_options import add_spatial_graph_options, checked_planar_loops, explain
from estimator.drive_trajectory import load_drive_trajectory
from estimator.errors import MbstateError
from estimator.graph_dynamics.hybrid import HYBRID_OPTIONS, fg_hybrid_dynamics
from estimator.spatial import assembly, closed_dynamics
from estimator.spatial.model import is_urdf, joint_values, load_spatial
from estimator.spatial_graph.trajectory import hybrid_trajectory


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``hybrid`` subcommand."""
    parser = subparsers.add_parser(
        "hybrid", help="hybrid dynamics: drive forces and free motion by one factor graph",
        description="Drive the named coordinates of MECH along the trajectory file (time grid = the file's "
                    "times); the other coordinates move freely under the mechanism's forces from the initial "
                    "state. Writes t, q, qd, qdd, Q.<drive> and lambda as CSV.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file, or a URDF file (*.urdf)")
    add_drive_arguments(parser)
    parser.add_argument("--initial", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial values of free coordinates, held while assembling (default: the file's)")
    parser.add_argument("--velocity", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial velocities of free coordinates (default 0 for those in --initial; "
                             "the others from Φq q̇ = 0)")
    parser.add_argument("--out", required=True, metavar="OUT.csv", help="output CSV")
    add_graph_options(parser, HYBRID_OPTIONS, drive_rates=False)
    add_spatial_graph_options(parser, "a URDF")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load, solve, write and print a short summary."""
    if is_urdf(args.mechanism):
        return run_urdf(args)
    checked_planar_loops(args, None, True)
    mech, drives, samples = load_drives(args)
    result = fg_hybrid_dynamics(mech, drives, samples.t, *samples.derivatives(), initial=args.initial,
                                rates=args.velocity, options=graph_options(args))
    report(args.out, result, samples, f"({result.iterations} Gauss-Newton iteration(s))")
    return 0


def run_urdf(args: argparse.Namespace) -> int:
    """Hybrid dynamics of a URDF tree or closed chain (module docstring)."""
    model = load_spatial(args.mechanism)
    planar = checked_planar_loops(args, model, True)
    drives = [name.strip() for name in args.drive.split(",")]
    if len(set(drives)) != len(drives):
        raise MbstateError(f"--drive: repeated names: {', '.join(drives)}")
    joint_values(model, dict.fromkeys(drives, 0.0), "--drive")  # each a movable joint, else one error line
    driven = [model.joint_names.index(name) for name in drives]
    samples = load_drive_trajectory(args.trajectory, len(drives))
    pos, vel, acc = samples.derivatives()
    if not model.loops:
        start, rates = joint_values(model, args.initial, "--initial"), joint_values(model, args.velocity, "--velocity")
        result = hybrid_trajectory(model, driven, samples.t, pos, vel, acc, start, rates, args.ordering)
        report(args.out, result, samples, f"(spatial hybrid dynamics graph, {args.ordering} ordering, RK4)")
        explain(args, model, result.trajectory, driven, args.ordering, planar)
        return 0
    start = joint_values(model, args.initial, "--initial")
    held = driven + [model.joint_names.index(name) for name in args.initial]
    guess = model.initial.copy()
    guess[held] = np.concatenate((pos[0], start[held[len(driven):]]))
    q0 = assembly.assemble(model, guess, held)
    dof = closed_dynamics.check_mobility(model, q0)
    if len(driven) > dof:
        raise MbstateError(f"{model.name} has {dof} degrees of freedom, fewer than the {len(driven)} driven joints")
    rates = joint_values(model, args.velocity, "--velocity")
    given = driven + [model.joint_names.index(name) for name in args.velocity if name not in drives]
    qd0 = assembly.velocities(model, q0, np.concatenate((vel[0], rates[given[len(driven):]])), given)
    result = hybrid_trajectory(model, driven, samples.t, pos, vel, acc, q0, qd0, args.ordering, planar)
    report(args.out, result, samples, f"(spatial closed-chain hybrid dynamics graph, {args.ordering} ordering, RK4, "
           "projected)")
    explain(args, model, result.trajectory, driven, args.ordering, planar)
    return 0
