"""``mbstate statics``: static equilibrium, optionally with held coordinates, and its stability.

A URDF file (an open chain, estimator.spatial.statics) starts from q = 0 with the held joints at
their values; its coordinates are the joint names, it has no multipliers, and its joint limits are
not enforced (a note names the joints outside them). A closed chain (the sidecar's ``loops``,
estimator.spatial.closed_statics) starts from the sidecar's ``initial`` assembled with the held joints
at their values; its multipliers are those of its independent loop rows."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from estimator.argument_types import assignments
from estimator.dynamics.equilibrium import Equilibrium
from estimator.dynamics.statics import solve_statics
from estimator.mechanism_file import load_mechanism
from estimator.spatial.closed_statics import solve_statics as solve_closed_statics
from estimator.spatial.model import is_urdf, load_spatial
from estimator.spatial.statics import outside_limits
from estimator.spatial.statics import solve_statics as solve_spatial_statics
from estimator.timeseries import Trajectory, write_csv


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``statics`` subcommand."""
    parser = subparsers.add_parser(
        "statics", help="static equilibrium and its stability",
        description="Find the static equilibrium of MECH under gravity, springs and loads by Newton-Raphson "
                    "from the file's coordinates (a URDF: from q = 0; joint limits not enforced), and tell "
                    "whether it is a stable minimum.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file, or a URDF file (*.urdf)")
    parser.add_argument("--hold", type=assignments, default={}, metavar="NAME=VALUE[,...]",
                        help="coordinates held at VALUE [m or rad]; their holding forces are reported")
    parser.add_argument("--out", metavar="OUT.csv",
                        help="write q, Q.<held> and lambda (none for a URDF) as a one-row CSV")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Solve, print coordinates, multipliers and the verdict; optionally write a CSV."""
    if is_urdf(args.mechanism):
        model = load_spatial(args.mechanism)
        solve = solve_closed_statics if model.loops else solve_spatial_statics
        result = solve(model, args.hold)
        outside = outside_limits(model, result.q)
        notes = [f"note: joint limits are not enforced; outside them: {', '.join(outside)}"] if outside else []
        start = "the sidecar's initial" if model.loops else "q = 0"
        report(model.joint_names, result, f"{start}, the held joints at their values", args.out, notes)
    else:
        mech = load_mechanism(args.mechanism)
        start = "the file's coordinates; move them to find another"
        report(mech.coordinate_names, solve_statics(mech, args.hold), start, args.out)
    return 0


def report(names: tuple[str, ...], result: Equilibrium, start: str, out: str | None, notes: Sequence[str] = ()) -> None:
    """Print the equilibrium (coordinates, holding forces, multipliers when there are constraints,
    the verdict, ``notes``) and write the one-row CSV to ``out`` if given; ``start``: where
    Newton-Raphson began (shown when the equilibrium is not stable)."""
    print(f"equilibrium after {result.iterations} Newton iterations")
    for name, value in zip(names, result.q):
        print(f"  {name} = {value:.10g}")
    for name, value in result.held_forces.items():
        print(f"  Q.{name} = {value:.10g} (holding force)")
    if result.lam is not None:
        print("multipliers: " + " ".join(f"{value:.6g}" for value in result.lam))
    smallest = f", smallest reduced-stiffness eigenvalue {result.eigenvalues[0]:.6g}" if len(result.eigenvalues) else ""
    print(f"stability: {result.verdict}{smallest}")
    if result.singular:
        print(f"  (no stiffness along {', '.join(result.singular)}: the equilibrium is not isolated; "
              f"hold {'it' if len(result.singular) == 1 else 'them'} to fix it)")
    if not result.stable:
        print(f"  (Newton-Raphson finds the equilibrium nearest {start})")
    for note in notes:
        print(note)
    if out:
        write_csv(out, Trajectory(t=np.zeros(1), coordinate_names=names, q=result.q[None],
                                  forces={k: np.array([v]) for k, v in result.held_forces.items()},
                                  lam=None if result.lam is None else result.lam[None]))
        print(f"written: {out}")
