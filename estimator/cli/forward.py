"""``mbstate forward``: forward dynamics of a mechanism file to a CSV time series.

A URDF file (an open chain, estimator.spatial) starts from q = 0 and q̇ = 0 unless ``--initial`` and
``--velocity`` name joints, and is integrated by classical Runge-Kutta 4 on ABA with zero joint
forces (gravity, damping and friction act). A closed chain (the sidecar's ``loops``) is assembled from
the sidecar's ``initial`` with the ``--initial`` joints held, its ``--velocity`` joints' rates given
(the others from Φq q̇ = 0), and integrated by Runge-Kutta of order 6 on the KKT accelerations with the
M-orthogonal projection onto the loops each step (estimator.spatial.closed_dynamics); a chain the loops
leave no mobility is refused. ``--method fg-dc`` or ``fg-ic`` on a URDF takes each RK4 stage's q̈ from
the forward-dynamics graph (estimator.spatial_graph) eliminated in ``--ordering``: the graph's unknowns
are the same in both (a tree's joint angles are independent coordinates; a closed chain's graph has
every joint's q̈ and the loop joints, and its state is projected onto the loops each step as on the KKT
path, with the planar factor on the ``--planar-loops``); ``--explain`` prints the ordering's Bayes net."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from estimator.argument_types import assignments, non_negative_float, positive_float, positive_int, vector2
from estimator.assembly import assembled, coordinate_indices
from estimator.cli.arguments import load
from estimator.cli.spatial_graph_options import add_spatial_graph_options, checked_planar_loops, explain
from estimator.constraints import constraint_values
from estimator.dynamics.forward import METHODS, ForwardOptions, simulate
from estimator.dynamics.integrators import TABLEAUS
from estimator.dynamics.singularity import near_singularity
from estimator.errors import MbstateError
from estimator.forces import kinetic_energy, potential_energy
from estimator.graph_dynamics.forward import FgOptions, simulate_fg
from estimator.kinematics import solve_velocity_problem
from estimator.smoother import FACTORIZATIONS, SmootherOptions
from estimator.spatial import assembly, closed_dynamics
from estimator.spatial import energy as spatial_energy
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import is_urdf, joint_values, load_spatial
from estimator.spatial.simulate import simulate as simulate_spatial
from estimator.spatial_graph.orderings import ORDERINGS as GRAPH_ORDERINGS
from estimator.spatial_graph.trajectory import forward_accelerations, hybrid_trajectory
from estimator.timeseries import write_csv


FG_METHODS = ("fg-dc", "fg-ic")
MAX_STEPS = 10_000_000  # a forward run holds its whole trajectory in memory (mbstate simulate streams)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "forward", help="forward dynamics to a CSV time series",
        description="Integrate the equations of motion from the file's configuration (assembled), "
                    "at rest unless --velocity is given, and write t, q, qd, qdd, lambda as CSV.")
    parser.add_argument("mechanism", help="mechanism YAML file, or a URDF file (*.urdf)")
    parser.add_argument("--t-end", type=positive_float, required=True, help="simulated time [s]")
    parser.add_argument("--dt", type=positive_float, required=True, help="time step [s]")
    parser.add_argument("--method", choices=METHODS + FG_METHODS, default="ali3",
                        help="ali3: augmented Lagrangian index-3 + trapezoidal rule (default); lagrange: "
                             "multipliers with Baumgarte stabilization and projection; rmatrix: independent "
                             "coordinates through the R matrix; fg-dc, fg-ic: factor graph in dependent or "
                             "independent coordinates, stepped by an incremental fixed-lag smoother")
    parser.add_argument("--lag", type=positive_int, default=2, help="fg-*: smoother lag N_w [steps] (default 2)")
    parser.add_argument("--order", type=int, choices=(2, 3, 4),
                        help="fg-*: Adams-Moulton order (default 3 for fg-dc, 4 for fg-ic)")
    parser.add_argument("--factorization", choices=FACTORIZATIONS, default="CHOLESKY",
                        help="fg-*: iSAM2 factorization (default CHOLESKY)")
    parser.add_argument("--relinearize-threshold", type=non_negative_float, default=1e-3,
                        help="fg-*: iSAM2 relinearizes a variable whose update exceeds this (default 1e-3)")
    parser.add_argument("--ordering", choices=GRAPH_ORDERINGS,
                        help="fg-* on a URDF: elimination order of the forward-dynamics graph (default COLAMD; "
                             "RNEA, CRBA and ABA on trees only)")
    parser.add_argument("--integrator", choices=tuple(TABLEAUS), default="rk4",
                        help="explicit Runge-Kutta for lagrange and rmatrix (ali3 is always trapezoidal)")
    parser.add_argument("--gravity", type=vector2, metavar="GX,GY", help="override the file's gravity [m/s²]")
    parser.add_argument("--initial", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial coordinates held while assembling (e.g. theta0=0.3)")
    parser.add_argument("--velocity", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="initial velocities of independent coordinates (others follow from Φq q̇ = 0)")
    parser.add_argument("--out", required=True, help="output CSV")
    add_spatial_graph_options(parser, "--method fg-dc or fg-ic on a URDF")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if is_urdf(args.mechanism):
        return run_urdf(args)
    if args.ordering is not None:
        raise MbstateError("--ordering: for a URDF with --method fg-dc or fg-ic")
    checked_planar_loops(args, None, False)
    mech = load(args.mechanism, args.gravity)
    q0 = assembled(mech, args.initial)
    qd0 = np.zeros(mech.n)
    if args.velocity:
        held = coordinate_indices(mech, args.velocity, "--velocity")
        qd0 = solve_velocity_problem(mech, q0, np.array(list(args.velocity.values())), held)
    steps = step_count(args)
    start = time.perf_counter()
    if args.method in FG_METHODS:
        solver = SmootherOptions(factorization=args.factorization, relinearize_threshold=args.relinearize_threshold)
        result = simulate_fg(mech, q0, qd0, args.dt, steps, args.method[3:], args.lag,
                             FgOptions(order=args.order, solver=solver))
        trajectory = result.trajectory
        ms = 1e3 * result.step_seconds
        print(f"{args.method}: N_w = {args.lag}, {ms.mean():.3f} ms mean, {np.percentile(ms, 99):.3f} ms p99 per "
              f"step; {result.recoveries} solver recoveries, {result.rechoices} re-choices of z")
    else:
        trajectory = simulate(mech, q0, qd0, args.dt, steps,
                              ForwardOptions(method=args.method, integrator=args.integrator))
    elapsed = time.perf_counter() - start
    write_csv(args.out, trajectory)
    singular = near_singularity(mech, trajectory.t, trajectory.q)
    if singular:
        print(f"mbstate forward: warning: {singular.message()}", file=sys.stderr)
    energy = [kinetic_energy(mech, qd) + potential_energy(mech, q) for q, qd in zip(trajectory.q, trajectory.qd)]
    worst_phi = max(np.max(np.abs(constraint_values(mech, q)), initial=0.0) for q in trajectory.q)
    print(f"{args.method}: {steps} steps of {args.dt:g} s in {elapsed:.3f} s (λ recovery and first-call "
          f"compilation included)")
    print(f"max |Φ| = {worst_phi:.3g}; total energy {energy[0]:.6g} J -> {energy[-1]:.6g} J "
          f"(gravity and springs; applied loads do work)")
    print(f"written: {args.out}")
    return 0


def step_count(args: argparse.Namespace) -> int:
    """--t-end / --dt steps, at most MAX_STEPS."""
    steps = max(1, int(round(args.t_end / args.dt)))
    if steps > MAX_STEPS:
        raise MbstateError(f"--t-end {args.t_end:g} s at --dt {args.dt:g} s is {steps:.3g} steps, more than the "
                           f"{MAX_STEPS:,} a forward run holds in memory (a larger --dt, or mbstate simulate, "
                           "which streams)")
    return steps


def run_urdf(args: argparse.Namespace) -> int:
    """Free motion of a URDF open chain by RK4 on ABA, of a closed chain on the KKT accelerations, or of
    either on the forward-dynamics graph."""
    graph = args.method in FG_METHODS
    for option, given in (("--method", args.method not in ("ali3", *FG_METHODS)),
                          ("--integrator", args.integrator != "rk4"), ("--gravity", args.gravity is not None)):
        if given:
            raise MbstateError(f"{option}: not available for a URDF file (RK4 on ABA or on the forward-dynamics "
                               "graph, or RK6 on the KKT accelerations; gravity from the sidecar)")
    model = load_spatial(args.mechanism)
    planar = checked_planar_loops(args, model, graph)
    if args.ordering is not None and not graph:
        raise MbstateError("--ordering: for a URDF with --method fg-dc or fg-ic")
    order = args.ordering or "COLAMD"
    q0, qd0 = joint_values(model, args.initial, "--initial"), joint_values(model, args.velocity, "--velocity")
    steps = step_count(args)
    start = time.perf_counter()
    if model.loops:
        q0, qd0 = closed_dynamics.start_state(model, q0, [model.joint_names.index(name) for name in args.initial],
                                              qd0, [model.joint_names.index(name) for name in args.velocity])
    if model.loops and graph:
        q0, qd0 = assembly.project(model, q0, qd0)  # as closed_dynamics.simulate starts
        none = np.zeros((steps + 1, 0))
        trajectory = hybrid_trajectory(model, [], args.dt * np.arange(steps + 1), none, none, none, q0, qd0, order,
                                       planar).trajectory
        method = f"rk4 on the forward-dynamics graph ({order} ordering), projected on the loops"
    elif model.loops:
        trajectory = closed_dynamics.simulate(model, q0, qd0, args.dt, steps)
        method = "rk6 on the KKT accelerations, projected on the loops"
    elif graph:
        trajectory = simulate_spatial(model, q0, qd0, args.dt, steps, accelerations=forward_accelerations(model, order))
        method = f"rk4 on the forward-dynamics graph ({order} ordering)"
    else:
        trajectory = simulate_spatial(model, q0, qd0, args.dt, steps)
        method = "rk4 on ABA"
    elapsed = time.perf_counter() - start
    write_csv(args.out, trajectory)
    energy = [spatial_energy.kinetic_energy(model, q, qd) + spatial_energy.potential_energy(model, q)
              for q, qd in ((trajectory.q[0], trajectory.qd[0]), (trajectory.q[-1], trajectory.qd[-1]))]
    print(f"{method}: {steps} steps of {args.dt:g} s in {elapsed:.3f} s (first-call compilation included)")
    if model.loops:
        worst = max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in zip(trajectory.q, trajectory.qd))
        print(f"max |Φ| = {worst:.3g} m")
    print(f"total energy {energy[0]:.6g} J -> {energy[-1]:.6g} J (gravity; damping and friction dissipate)")
    print(f"written: {args.out}")
    explain(args, model, trajectory, [], order, planar)
    return 0
