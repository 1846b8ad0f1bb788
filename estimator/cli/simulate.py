"""``mbstate simulate``: a mechanism with virtual sensors, ground truth and readings to a log.

The motion comes from classical forward dynamics (``--forces NAME=VALUE``: constant actuator
forces, zero by default) or classical inverse dynamics along a prescribed trajectory of driven
coordinates (``--drive NAME[,NAME] --trajectory FILE``), at the simulation step ``--dt``
(replay.simulation). The sensors (sensors.config) sample the truth (sensors.virtual); truth at
every step and every reading go to the append-only log (estimator.logfile) in time order, as they are
simulated (a chunk of replay.simulation.CHUNK_S at a time: memory does not grow with --t-end).

A URDF file (an open chain, estimator.spatial) moves by RK4 on ABA (forward, ``--forces`` on its
actuators, ``--initial`` and ``--velocity`` naming joints, from q = 0 at rest by default) or by RNEA
along a trajectory of every joint (``--drive`` lists them all, as ``mbstate inverse``); its sensors
are the spatial kinds (sensors.config.SPATIAL_KINDS: joint encoders, link gyroscopes and
accelerometers, joint torque and force-torque sensors). A URDF closed chain (sidecar loops) moves on
its KKT forward dynamics (assembled from the sidecar's ``initial`` with the ``--initial`` joints held,
Φq q̇ = 0 with the ``--velocity`` joints' rates, as ``mbstate forward``) or by its inverse dynamics
along a trajectory of as many driven joints as it has degrees of freedom (as ``mbstate inverse``); the
truth carries the loops' multipliers (estimator.spatial.closed_dynamics).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from estimator.argument_types import assignments, positive_float
from estimator.assembly import assembled, coordinate_indices
from estimator.cli.arguments import add_curve_options, client_keys, driven, load
from estimator.drive_trajectory import load_drive_trajectory
from estimator.dynamics.forward import METHODS
from estimator.errors import MbstateError
from estimator.kinematics import solve_velocity_problem
from estimator.logfile import LogWriter
from estimator.model import Mechanism
from estimator.node.config import NodeParams
from estimator.node.recorded_for import setup_header
from estimator.spatial import closed_dynamics
from estimator.spatial.model import SpatialModel, is_urdf, joint_order, joint_values, load_spatial
from replay.publish import log_messages, publish
from replay.simulation import forward_truths, inverse_truths, sensor_step, simulated_records
from sensors.config import SensorSet, load_sensors
from sensors.virtual import Truth


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    parser = subparsers.add_parser(
        "simulate", help="simulate a mechanism with virtual sensors into a log",
        description="Simulate MECH (forward dynamics under constant actuator forces, or inverse dynamics "
                    "along a driven trajectory), sample the sensors of SENSORS with their noise, bias, "
                    "quantization, saturation and jitter, and write ground truth and readings to an "
                    "append-only msgpack log.")
    parser.add_argument("mechanism", metavar="MECH.yaml",
                        help="mechanism file, or a URDF file (*.urdf, with its own sensor kinds)")
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
    add_curve_options(parser)
    parser.set_defaults(run=run)


def _forward(mech: Mechanism | SpatialModel, args: argparse.Namespace, dt: float) -> Iterator[Truth]:
    if isinstance(mech, SpatialModel):
        q0, qd0 = joint_values(mech, args.initial, "--initial"), joint_values(mech, args.velocity, "--velocity")
        if mech.loops:
            q0, qd0 = closed_dynamics.start_state(mech, q0, [mech.joint_names.index(name) for name in args.initial],
                                                  qd0, [mech.joint_names.index(name) for name in args.velocity])
    else:
        q0 = assembled(mech, args.initial)
        qd0 = np.zeros(mech.n)
        if args.velocity:
            held = coordinate_indices(mech, args.velocity, "--velocity")
            qd0 = solve_velocity_problem(mech, q0, np.array(list(args.velocity.values())), held)
    return forward_truths(mech, q0, qd0, dt, args.t_end, args.forces, args.method)


def _inverse(mech: Mechanism | SpatialModel, args: argparse.Namespace, dt: float) -> Iterator[Truth]:
    if isinstance(mech, SpatialModel):  # the drive names checked before the file is read
        drives = [name.strip() for name in args.drive.split(",")]
        if mech.loops:
            closed_dynamics.driven_joints(mech, drives, "--drive")
        else:
            joint_order(mech, drives, "--drive")
        samples = load_drive_trajectory(args.trajectory, len(drives))
    else:
        drives, samples = driven(mech, args.drive, args.trajectory)
    return inverse_truths(mech, drives, samples, dt, args.t_end)


def run(args: argparse.Namespace) -> int:
    """Simulate, sample the sensors, write the log as it goes and print a summary."""
    if args.out is None and args.publish is None:
        raise MbstateError("give --out LOG, --publish [ENDPOINT] or both")
    if (args.drive is None) != (args.trajectory is None):
        raise MbstateError("--drive and --trajectory go together")
    if args.drive is not None and (args.forces or args.initial or args.velocity):
        raise MbstateError("--forces, --initial and --velocity are for forward dynamics, not with --drive")
    keys = client_keys(args)
    urdf = is_urdf(args.mechanism)
    if urdf and args.method != "ali3":
        raise MbstateError(f"--method {args.method}: not available for a URDF file (RK4 on ABA; RK6 on the KKT "
                           "accelerations for a closed chain)")
    mech: Mechanism | SpatialModel = load_spatial(args.mechanism) if urdf else load(args.mechanism)
    sensor_set = load_sensors(args.sensors, mech)
    dt = args.dt or sensor_step(sensor_set)
    truths = _inverse(mech, args, dt) if args.drive else _forward(mech, args, dt)
    header = {**setup_header(mech, sensor_set, Path(args.mechanism), Path(args.sensors)),
              "simulation": {"dt": dt, "t_end": args.t_end, "seed": args.seed,
                             "motion": f"inverse dynamics ({args.drive})" if args.drive
                             else f"forward dynamics ({_forward_method(mech, args.method)})"}}
    counts: Counter[str] = Counter()
    span: list[float] = []
    records = _counted(simulated_records(truths, sensor_set.sensors, args.seed), counts, span)
    if args.out is not None:
        with LogWriter(args.out, header) as log:
            for kind, item in records:
                if kind == "truth":
                    log.state("truth", item.t, q=item.q, qd=item.qd, qdd=item.qdd, lam=item.lam, f=item.f)
                else:
                    log.reading(item.to_map())
        _summary(sensor_set, counts, span, dt)
        print(f"written: {args.out}")
    if args.publish is not None:
        print(f"publishing to {args.publish} at real time ...", flush=True)
        messages = (log_messages(args.out) if args.out is not None
                    else (item.to_map() for kind, item in records if kind == "reading"))
        sent = publish(messages, args.publish, keys=keys)
        if args.out is None:
            _summary(sensor_set, counts, span, dt)
        print(f"published {sent} readings")
    return 0




def _forward_method(mech: Mechanism | SpatialModel, method: str) -> str:
    if not isinstance(mech, SpatialModel):
        return method
    return "rk6 on the KKT accelerations, projected on the loops" if mech.loops else "rk4 on ABA"


def _counted(records: Iterator[tuple[str, Any]], counts: Counter[str], span: list[float]
             ) -> Iterator[tuple[str, Any]]:
    """The records, counting truth samples and readings by sensor and keeping the truth's first and
    last time in ``span``."""
    for kind, item in records:
        if kind == "truth":
            counts["truth"] += 1
            span[:] = [span[0] if span else item.t, item.t]
        else:
            counts[item.sensor] += 1
        yield kind, item


def _summary(sensor_set: SensorSet, counts: Counter[str], span: list[float], dt: float) -> None:
    print(f"{counts['truth']} truth samples, t = {span[0]:g} .. {span[1]:g} s, dt = {dt:g} s")
    for sensor in sensor_set.sensors:
        print(f"  {sensor.params.name} ({sensor.params.kind}, {sensor.params.rate:g} Hz): "
              f"{counts[sensor.params.name]} readings")
