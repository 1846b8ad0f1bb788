"""``mbstate simulate``: a mechanism with virtual sensors, ground truth and readings to a log.

The motion comes from classical forward dynamics (``--forces NAME=VALUE``: constant actuator
forces, zero by default) or classical inverse dynamics along a prescribed trajectory of driven
coordinates (``--drive NAME[,NAME] --trajectory FILE``), at the simulation step ``--dt``
(replay.simulation). The sensors (sensors.config) sample the truth (sensors.virtual); truth at
every step and every reading go to the append-only log (replay.log) in time order.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from estimator.cli.arguments import assembled, assignments, coordinate_indices, load, positive_float
from estimator.cli.inverse import driven
from estimator.dynamics.forward import METHODS
from estimator.errors import MbstateError
from estimator.kinematics import solve_velocity_problem
from estimator.model import Mechanism
from estimator.node.config import NodeParams
from estimator.node.recorded_for import setup_header
from replay.log import LogWriter
from replay.publish import publish
from replay.simulation import forward_truth, inverse_truth, sensor_step
from sensors.config import load_sensors
from sensors.virtual import Truth, simulate_readings


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    parser = subparsers.add_parser(
        "simulate", help="simulate a mechanism with virtual sensors into a log",
        description="Simulate MECH (forward dynamics under constant actuator forces, or inverse dynamics "
                    "along a driven trajectory), sample the sensors of SENSORS with their noise, bias, "
                    "quantization, saturation and jitter, and write ground truth and readings to an "
                    "append-only msgpack log.")
    parser.add_argument("mechanism", metavar="MECH.yaml", help="mechanism file")
    parser.add_argument("--sensors", required=True, metavar="SENSORS.yaml", help="sensor configuration")
    parser.add_argument("--t-end", type=positive_float, required=True, help="simulated time [s]")
    parser.add_argument("--dt", type=positive_float,
                        help="simulation step [s] (default: the shortest sensor period)")
    parser.add_argument("--forces", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="constant actuator forces [N or N·m] for forward dynamics (default 0)")
    parser.add_argument("--drive", metavar="NAME[,NAME...]",
                        help="driven coordinates for inverse dynamics (with --trajectory)")
    parser.add_argument("--trajectory", metavar="FILE", help="samples of the driven coordinates (with --drive)")
    parser.add_argument("--initial", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="forward dynamics: initial coordinates held while assembling")
    parser.add_argument("--velocity", type=assignments, default={}, metavar="NAME=VALUE,...",
                        help="forward dynamics: initial velocities of independent coordinates")
    parser.add_argument("--method", choices=METHODS, default="ali3", help="forward dynamics method")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument("--out", metavar="LOG", help="output log (msgpack records); required without --publish")
    parser.add_argument("--publish", nargs="?", const=NodeParams.sub, metavar="ENDPOINT",
                        help=f"also send the readings at real time to a node's input (default {NodeParams.sub})")
    parser.set_defaults(run=run)


def _forward(mech: Mechanism, args: argparse.Namespace, dt: float) -> Truth:
    q0 = assembled(mech, args.initial)
    qd0 = np.zeros(mech.n)
    if args.velocity:
        held = coordinate_indices(mech, args.velocity, "--velocity")
        qd0 = solve_velocity_problem(mech, q0, np.array(list(args.velocity.values())), held)
    return forward_truth(mech, q0, qd0, dt, args.t_end, args.forces, args.method)


def run(args: argparse.Namespace) -> int:
    """Simulate, sample the sensors, write the log and print a summary."""
    if args.out is None and args.publish is None:
        raise MbstateError("give --out LOG, --publish [ENDPOINT] or both")
    if (args.drive is None) != (args.trajectory is None):
        raise MbstateError("--drive and --trajectory go together")
    if args.drive is not None and (args.forces or args.initial or args.velocity):
        raise MbstateError("--forces, --initial and --velocity are for forward dynamics, not with --drive")
    mech = load(args.mechanism)
    sensor_set = load_sensors(args.sensors, mech)
    dt = args.dt or sensor_step(sensor_set)
    if args.drive:
        truth = inverse_truth(mech, *driven(mech, args.drive, args.trajectory), dt, args.t_end)
    else:
        truth = _forward(mech, args, dt)
    readings = simulate_readings(sensor_set.sensors, truth, args.seed)
    header = {**setup_header(mech, sensor_set, Path(args.mechanism), Path(args.sensors)),
              "simulation": {"dt": dt, "t_end": args.t_end, "seed": args.seed,
                             "motion": f"inverse dynamics ({args.drive})" if args.drive
                             else f"forward dynamics ({args.method})"}}
    if args.out is not None:
        _write_log(args.out, header, truth, readings)
    counts = Counter(r.sensor for r in readings)
    print(f"{len(truth.t)} truth samples, t = {truth.t[0]:g} .. {truth.t[-1]:g} s, dt = {dt:g} s")
    for sensor in sensor_set.sensors:
        print(f"  {sensor.params.name} ({sensor.params.kind}, {sensor.params.rate:g} Hz): "
              f"{counts[sensor.params.name]} readings")
    if args.out is not None:
        print(f"written: {args.out}")
    if args.publish is not None:
        print(f"publishing to {args.publish} at real time ...", flush=True)
        sent = publish([r.to_map() for r in readings], args.publish)
        print(f"published {sent} readings")
    return 0


def _write_log(path: str, header: dict, truth: Truth, readings: list) -> None:
    """Truth at every step and every reading, in time order."""
    events = [(float(t), 0, i) for i, t in enumerate(truth.t)] + [(r.t, 1, i) for i, r in enumerate(readings)]
    with LogWriter(path, header) as log:
        for _, kind, i in sorted(events):
            if kind == 0:
                log.state("truth", truth.t[i], q=truth.q[i], qd=truth.qd[i], qdd=truth.qdd[i], lam=truth.lam[i],
                          f=truth.f[i])
            else:
                log.reading(readings[i].to_map())
