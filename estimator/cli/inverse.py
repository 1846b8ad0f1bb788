"""``mbstate inverse``: drive forces along a prescribed trajectory of the driven coordinates.

For a URDF file (an open chain, estimator.spatial) ``--drive`` lists every movable joint; the
output's ``Q.<joint>`` are the joint forces of the RNEA (gravity, damping and friction included). A
closed chain (the sidecar's ``loops``) is driven on as many joints as it has degrees of freedom
(estimator.spatial.closed_dynamics.inverse); ``lambda.<k>`` are its loop rows' multipliers in the order
``mbstate check`` lists them (a ball row's λ is the force on its frame B's body, world axes [N]), and
the summary gives each loop's largest reaction force and moment (closed_dynamics.loop_wrenches).
``--method fg`` on a URDF solves one dynamics graph per sample (estimator.spatial_graph, QR
elimination in ``--ordering``, which adds the tree orderings RNEA, CRBA and ABA for trees). On a
closed chain the graph has the loop joints and takes q, q̇ from the position and velocity problems;
``--planar-loops`` names the planar loops that get the planar factor, and ``--explain`` prints the
ordering's Bayes net (estimator.cli.spatial_graph_options)."""

from __future__ import annotations

import argparse
import time

import numpy as np

from estimator.cli.arguments import driven
from estimator.cli.spatial_graph_options import add_spatial_graph_options, checked_planar_loops, explain
from estimator.drive_trajectory import DriveTrajectory, load_drive_trajectory
from estimator.dynamics.inverse import InverseDynamicsResult, inverse_dynamics
from estimator.errors import MbstateError
from estimator.graph_dynamics.inverse import DRIVE_RATES, ORDERINGS, FGOptions, fg_inverse_dynamics
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.smoother import FACTORIZATIONS
from estimator.spatial import closed_dynamics
from estimator.spatial.loops import row_names
from estimator.spatial.model import SpatialModel, is_urdf, joint_order, load_spatial
from estimator.spatial.simulate import inverse_trajectory
from estimator.spatial_graph import trajectory as graph_trajectory
from estimator.spatial_graph.orderings import ORDERINGS as GRAPH_ORDERINGS
from estimator.spatial_graph.orderings import TREE_ORDERINGS
from estimator.timeseries import write_csv

METHODS = ("classical", "fg")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``inverse`` subcommand."""
    parser = subparsers.add_parser(
        "inverse", help="inverse dynamics: drive forces along a prescribed trajectory",
        description="Solve the inverse dynamics of MECH along the trajectory of its driven coordinates "
                    "and write t, q, qd, qdd, Q.<drive> and lambda as CSV.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file, or a URDF file (*.urdf)")
    add_drive_arguments(parser)
    parser.add_argument("--out", required=True, metavar="OUT.csv", help="output CSV")
    parser.add_argument("--method", choices=METHODS, default="classical",
                        help="classical (per time point) or fg (factor graph, batch; default: classical)")
    add_graph_options(parser)
    add_spatial_graph_options(parser, "--method fg on a URDF")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load, solve, write and print a short summary."""
    if is_urdf(args.mechanism):
        return run_urdf(args)
    checked_planar_loops(args, None, args.method == "fg")
    mech, drives, samples = load_drives(args)
    if args.method == "fg":
        result = fg_inverse_dynamics(mech, drives, samples.t, *samples.derivatives(), graph_options(args))
    else:
        result = inverse_dynamics(mech, drives, samples.t, *samples.derivatives())
    report(args.out, result, samples, f"({args.method})")
    return 0


def run_urdf(args: argparse.Namespace) -> int:
    """Inverse dynamics of a URDF open chain along the trajectory of all its joints."""
    model = load_spatial(args.mechanism)
    drives = [name.strip() for name in args.drive.split(",")]
    planar = checked_planar_loops(args, model, args.method == "fg")
    if model.loops:
        return run_closed(args, model, drives, planar)
    order = joint_order(model, drives, "--drive")
    samples = load_drive_trajectory(args.trajectory, len(drives))
    pos, vel, acc = (values[:, order] for values in samples.derivatives())
    start = time.perf_counter()
    if args.method == "fg":
        trajectory = graph_trajectory.inverse_trajectory(model, samples.t, pos, vel, acc, args.ordering)
        detail = f"(spatial dynamics graph, {args.ordering} ordering)"
    else:
        trajectory, detail = inverse_trajectory(model, samples.t, pos, vel, acc), "(spatial RNEA)"
    report(args.out, InverseDynamicsResult(trajectory, (time.perf_counter() - start) / len(samples.t)), samples,
           detail)
    explain(args, model, trajectory, range(model.dof), args.ordering, [])
    return 0


def run_closed(args: argparse.Namespace, model: SpatialModel, drives: list[str], planar: list[str]) -> int:
    """Inverse dynamics of a URDF closed chain along the trajectory of its driven joints, classical or by
    the dynamics graph with the ``planar`` loops' planar factors."""
    unknown = [name for name in drives if name not in model.joint_names]
    if unknown or len(set(drives)) != len(drives):
        raise MbstateError(f"--drive: {'unknown joint ' + ', '.join(unknown) if unknown else 'repeated names'} "
                           f"(movable joints of {model.name}: {', '.join(model.joint_names)})")
    samples = load_drive_trajectory(args.trajectory, len(drives))
    driven = [model.joint_names.index(name) for name in drives]
    if args.method == "fg":
        result = graph_trajectory.closed_inverse_trajectory(model, driven, samples.t, *samples.derivatives(),
                                                            args.ordering, planar)
        report(args.out, result, samples, f"(spatial closed-chain dynamics graph, {args.ordering} ordering)")
        explain(args, model, result.trajectory, driven, args.ordering, planar)
        return 0
    result = closed_dynamics.inverse(model, driven, samples.t, *samples.derivatives())
    report(args.out, result, samples, "(spatial closed chain: assembly, RNEA and least squares)")
    trajectory = result.trajectory
    print("lambda columns: " + ", ".join(f"{k}: {name}" for k, name in enumerate(row_names(model))))
    peaks: dict[str, np.ndarray] = {}
    for q, lam in zip(trajectory.q, trajectory.lam):
        for name, wrench in closed_dynamics.loop_wrenches(model, q, lam).items():
            peaks[name] = np.maximum(peaks.get(name, 0.0), [np.linalg.norm(wrench[:3]), np.linalg.norm(wrench[3:])])
    for name, (moment, force) in peaks.items():
        print(f"  loop {name}: reaction up to {force:.6g} N and {moment:.6g} N·m")
    return 0


def add_drive_arguments(parser: argparse.ArgumentParser) -> None:
    """``--trajectory FILE`` and ``--drive NAMES``, both required (read by ``load_drives``)."""
    parser.add_argument("--trajectory", required=True, metavar="FILE",
                        help="samples: time [s], then one column per driven coordinate; '%%' or '#' comments")
    parser.add_argument("--drive", required=True, metavar="NAME[,NAME...]",
                        help="driven coordinate names, in the order of the trajectory's columns")


def load_drives(args: argparse.Namespace) -> tuple[Mechanism, list[str], DriveTrajectory]:
    """The mechanism, the ``--drive`` names (checked) and the ``--trajectory`` samples."""
    mech = load_mechanism(args.mechanism)
    return (mech, *driven(mech, args.drive, args.trajectory))


def report(out: str, result: InverseDynamicsResult, samples: DriveTrajectory, detail: str) -> None:
    """Write the CSV and print the time per point and each drive force's range."""
    write_csv(out, result.trajectory)
    print(f"{len(samples.t)} points, t = {samples.t[0]:g} .. {samples.t[-1]:g} s, "
          f"{1e3 * result.seconds_per_point:.3f} ms per point {detail}")
    for name, force in result.trajectory.forces.items():
        print(f"  Q.{name}: min {np.min(force):.6g}, max {np.max(force):.6g}")
    print(f"written: {out}")


def add_graph_options(parser: argparse.ArgumentParser, defaults: FGOptions = FGOptions(),
                      drive_rates: bool = True) -> None:
    """Factor-graph settings (estimator.graph_dynamics.inverse.FGOptions), shared with ``hybrid``
    (which always has priors on the drive rates and integrators: no ``--drive-rates``)."""
    group = parser.add_argument_group("factor graph")
    parser.set_defaults(drive_rates=defaults.drive_rates)
    if drive_rates:
        group.add_argument("--drive-rates", choices=DRIVE_RATES, default=defaults.drive_rates,
                           help="(--method fg) prior: priors on the drives' velocities and accelerations from "
                                "the fitted samples; integrators: trapezoidal integrators instead (the paper's "
                                f"graph; needs QR) (default: {defaults.drive_rates})")
    group.add_argument("--ordering", choices=GRAPH_ORDERINGS, default=defaults.ordering,
                       help=f"elimination order; {', '.join(TREE_ORDERINGS)}: URDF trees only (default: "
                            f"{defaults.ordering})")
    group.add_argument("--factorization", choices=FACTORIZATIONS, default=defaults.factorization,
                       help=f"multifrontal elimination (default: {defaults.factorization})")


def graph_options(args: argparse.Namespace) -> FGOptions:
    """FGOptions from the parsed factor-graph arguments; the tree orderings refused with one line."""
    if args.ordering in TREE_ORDERINGS:
        raise MbstateError(f"--ordering {args.ordering}: for URDF trees only (a planar mechanism: "
                           f"{', '.join(ORDERINGS)})")
    return FGOptions(drive_rates=args.drive_rates, ordering=args.ordering, factorization=args.factorization)
