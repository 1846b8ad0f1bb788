"""``mbstate check MECH.yaml``: load and assemble a mechanism and print what the model holds.

``mbstate check ROBOT.urdf`` (a spatial open chain, estimator.spatial; its sidecar ROBOT.yaml beside
it if any) prints the joints, degrees of freedom, moving mass, actuators, gravity and named frames. A
closed chain (the sidecar's ``loops``) is assembled first (Newton-Raphson on the loops from the
sidecar's ``initial``, estimator.spatial.assembly) and its report adds the loop rows' residuals, the
rank of Φq, the degrees of freedom n − rank Φq and a set of independent joints.

The file's approximate coordinates are assembled by Newton-Raphson (Φ(q) = 0, nothing held); the
report gives the coordinates, the constraint residuals, the rank of Φq and the degrees of freedom
n − rank Φq, a set of independent coordinates, the bodies, actuators, force elements, gravity and
the energies at rest. ``--json`` prints the same as one JSON object.

With ``--sensors SENSORS.yaml`` and/or ``--config CONFIG.yaml`` (a node file: its ``estimator:`` section,
and its sensors when ``--sensors`` is not given; default estimator settings without it), it also checks
what the online estimator could see with those sensors (estimator.online.observability), at rest in the
assembled configuration: the start state the estimator solves when no reading says otherwise.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from estimator.assembly import assembled
from estimator.constraints import constraint_values
from estimator.errors import MbstateError
from estimator.forces import kinetic_energy, potential_energy
from estimator.kinematics import constraint_rank, suggested_independent
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.node.config import load_node_config
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.observability import ObservabilityReport, observability
from estimator.online.startup import initial_state, start_anchor
from estimator.spatial import assembly
from estimator.spatial.loops import loop_terms, row_names
from estimator.spatial.model import SpatialModel, is_urdf, load_spatial
from sensors.config import SensorSet, load_sensors


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check", help="load and assemble a mechanism file and print its model",
        description="Load a mechanism YAML file, assemble it from the file's approximate "
                    "coordinates and print coordinates, constraint residuals, rank, degrees of "
                    "freedom, bodies, actuators, forces, gravity and energies at rest; with --sensors "
                    "or --config also which directions of the online estimator's state those sensors "
                    "cannot see (its start-up observability check, at rest).")
    parser.add_argument("mechanism", metavar="MECH.yaml",
                        help="mechanism file (see configs/mechanisms/README.md), or a URDF file (*.urdf)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--sensors", metavar="SENSORS.yaml",
                        help="also check the observability of the estimator's state with these sensors "
                             "(see configs/sensors/README.md)")
    parser.add_argument("--config", metavar="CONFIG.yaml",
                        help="node file whose estimator settings (and, without --sensors, sensors) the "
                             "observability check uses (see configs/estimator/README.md)")
    parser.set_defaults(run=run)


def observability_at_rest(mech: Mechanism, sensors: SensorSet, config: EstimatorConfig) -> ObservabilityReport:
    """The estimator's start-up check (estimator.online.observability) from its start state without readings:
    the assembled configuration, at rest."""
    layout = OnlineEstimator(mech, sensors, config).layout
    start, _ = initial_state(mech, layout, {}, {}, 0.0, start_anchor(mech, config.initial_state))
    return observability(mech, sensors, layout, config, start)


def observability_info(sensors: SensorSet, config: EstimatorConfig, result: ObservabilityReport) -> dict[str, Any]:
    """The ``observability`` entry of the report."""
    return {"sensors": sensors.source, "dynamics": config.dynamics, "rate": config.rate, **result.as_dict()}


def format_observability(info: dict[str, Any]) -> str:
    """The observability part of the text report."""
    model = "dynamics" if info["dynamics"] else "kinematics only"
    lines = [f"observability with the sensors of {info['sensors']} ({model}, grid {info['rate']:g} Hz, "
             f"{1e3 * info['window_s']:.3g} ms window, at rest in the assembled configuration):",
             f"  directions checked: {', '.join(info['coordinates'])}",
             "  singular values (start-prior units): " + " ".join(f"{s:.3g}" for s in info["singular_values"])
             + f" (unobservable at or below {info['threshold']:.3g})"]
    if info["ignored_sensors"]:
        lines.append(f"  sensors the estimator cannot use: {', '.join(info['ignored_sensors'])}")
    if info["observable"]:
        lines.append("  observable")
    else:
        lines.append(f"  NOT observable: {len(info['unobservable'])} direction(s) the sensors cannot see:")
        lines += [f"    {d['text']}" for d in info["unobservable"]]
    return "\n".join(lines)


def report(mech: Mechanism, q: np.ndarray) -> dict[str, Any]:
    """Everything ``check`` prints, as plain Python values (SI units)."""
    rank = constraint_rank(mech, q)
    arrays = mech.arrays
    loads = arrays.q_force - mech.gravity_z[:mech.n]
    return {
        "file": mech.source,
        "coordinates": [{"index": k, "name": name, "value": float(q[k])}
                        for k, name in enumerate(mech.coordinate_names)],
        "constraints": [{"index": k, "name": name, "residual": float(r)}
                        for k, (name, r) in enumerate(zip(mech.constraint_names, constraint_values(mech, q)))],
        "n": mech.n,
        "m": mech.m,
        "rank": rank,
        "redundant": mech.m - rank,
        "degrees_of_freedom": mech.n - rank,
        "independent_coordinates": [mech.coordinate_names[k] for k in suggested_independent(mech, q, rank)],
        "bodies": [{"name": b.name, "points": list(b.points), "mass": b.mass, "I0": b.inertia,
                    "cog": list(b.cog), "length": b.length} for b in mech.bodies],
        "actuators": [{"name": a.name, "coordinate": mech.coordinate_names[a.coordinate]} for a in mech.actuators],
        "forces": {"springs_and_dampers": len(arrays.spring_idx), "torsional_springs": len(arrays.torsion_idx),
                   "body_torques": len(arrays.torque_idx),
                   "constant_loads_on": [mech.coordinate_names[k] for k in np.flatnonzero(loads)]},
        "gravity": [float(g) for g in mech.gravity],
        "kinetic_energy": kinetic_energy(mech, np.zeros(mech.n)) + 0.0,
        "potential_energy": potential_energy(mech, q) + 0.0,  # + 0.0: no "-0" in the output
    }


def format_text(info: dict[str, Any]) -> str:
    """The human-readable report."""
    lines = [f"mechanism {info['file']}", f"coordinates (n = {info['n']}), assembled:"]
    width = max((len(c["name"]) for c in info["coordinates"]), default=0)
    lines += [f"  {c['index']:3d}  {c['name']:<{width}}  {c['value']: .9g}" for c in info["coordinates"]]
    lines.append(f"constraints (m = {info['m']}), residual at the assembled q:")
    width = max((len(c["name"]) for c in info["constraints"]), default=0)
    lines += [f"  {c['index']:3d}  {c['name']:<{width}}  {c['residual']: .2e}" for c in info["constraints"]]
    lines += [f"rank of the constraint Jacobian: {info['rank']} ({info['redundant']} redundant rows)",
              f"degrees of freedom: {info['degrees_of_freedom']}",
              f"suggested independent coordinates: {', '.join(info['independent_coordinates']) or '(none)'}",
              f"bodies ({len(info['bodies'])}):"]
    lines += [f"  {b['name']}: points {b['points']}, mass {b['mass']:.6g} kg, I0 {b['I0']:.6g} kg·m², "
              f"cog ({b['cog'][0]:.6g}, {b['cog'][1]:.6g}) m, length {b['length']:.6g} m" for b in info["bodies"]]
    actuators = [f"{a['name']} on {a['coordinate']}" for a in info["actuators"]]
    forces = info["forces"]
    lines += [f"actuators: {', '.join(actuators) or '(none)'}",
              f"forces: {forces['springs_and_dampers']} spring/damper, {forces['torsional_springs']} torsional "
              f"spring, {forces['body_torques']} body torque; constant loads on: "
              f"{', '.join(forces['constant_loads_on']) or '(none)'}",
              f"gravity: ({info['gravity'][0]:.6g}, {info['gravity'][1]:.6g}) m/s²",
              f"energy at rest: kinetic {info['kinetic_energy']:.6g} J, potential {info['potential_energy']:.6g} J"]
    return "\n".join(lines)


def urdf_report(model: SpatialModel, source: str) -> dict[str, Any]:
    """What ``check`` prints for a URDF file, as plain Python values (SI units; inf limits as None)."""
    def finite(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    q = assembly.assemble(model, model.initial) if model.loops else np.zeros(model.dof)
    jac = loop_terms(model, q, np.zeros(model.dof)).jac
    rank = assembly.rank(jac)
    info = {
        "file": source,
        "name": model.name,
        "base": model.base,
        "degrees_of_freedom": model.dof - rank,
        "joints": [{"index": i, "name": name, "type": model.joint_types[i], "link": model.link_names[i],
                    "parent": model.parent_links[i],
                    "axis": [float(a) for a in model.axis[i]], "lower": finite(model.lower[i]),
                    "upper": finite(model.upper[i]), "effort": finite(model.effort[i]),
                    "velocity": finite(model.velocity[i]), "damping": float(model.damping[i]),
                    "friction": float(model.friction[i]), "armature": float(model.armature[i]),
                    "mass": float(model.mass[i])}
                   for i, name in enumerate(model.joint_names)],
        "moving_mass": model.total_mass,
        "actuators": [{"name": name, "joint": model.joint_names[j]}
                      for name, j in zip(model.actuator_names, model.actuated)],
        "gravity": [float(g) for g in model.gravity],
        "frames": [frame.name for frame in model.frames],
    }
    if model.loops:
        info["loops"] = [{"name": loop.name, "type": loop.type, "frames": list(loop.frames)} for loop in model.loops]
        info["assembled"] = [float(x) for x in q]
        info["constraints"] = [{"name": name, "residual": float(r)}
                               for name, r in zip(row_names(model), loop_terms(model, q, np.zeros(model.dof)).phi)]
        info.update(n=model.dof, m=len(jac), rank=rank, redundant=len(jac) - rank,
                    independent_joints=[model.joint_names[k] for k in assembly.independent_joints(model, q)])
    return info


def format_urdf_text(info: dict[str, Any]) -> str:
    """The human-readable report of a URDF file."""
    def limit(x: float | None, side: str) -> str:
        return f"{side}inf" if x is None else f"{x:.6g}"

    lines = [f"robot {info['name']} ({info['file']}), base link {info['base']}",
             f"joints (degrees of freedom: {info['degrees_of_freedom']}):" if "loops" not in info else
             f"joints (n = {info['n']}; degrees of freedom after the loops: {info['degrees_of_freedom']}):"]
    width = max((len(j["name"]) for j in info["joints"]), default=0)
    lines += [f"  {j['index']:3d}  {j['name']:<{width}}  {j['type']:<10} {j['parent']} -> {j['link']}, axis "
              f"({', '.join(f'{a:.6g}' for a in j['axis'])}), limits [{limit(j['lower'], '-')}, {limit(j['upper'], '')}], "
              f"damping {j['damping']:.6g}, friction {j['friction']:.6g}, armature {j['armature']:.6g}, "
              f"body mass {j['mass']:.6g} kg"
              for j in info["joints"]]
    actuators = [a["name"] if a["name"] == a["joint"] else f"{a['name']} on {a['joint']}" for a in info["actuators"]]
    lines += [f"moving mass: {info['moving_mass']:.6g} kg",
              f"actuators: {', '.join(actuators) or '(none)'}",
              f"gravity: ({', '.join(f'{g:.6g}' for g in info['gravity'])}) m/s²",
              f"frames ({len(info['frames'])}): {', '.join(info['frames'])}"]
    if "loops" in info:
        loops = [f"{loop['name']} ({loop['type']}: {' - '.join(loop['frames'])})" for loop in info["loops"]]
        lines.append(f"loops ({len(loops)}): {', '.join(loops)}")
        lines.append("assembled joint coordinates: " + " ".join(f"{x:.9g}" for x in info["assembled"]))
        lines.append(f"loop rows (m = {info['m']}), residual at the assembled q [m or 1]:")
        width = max(len(c["name"]) for c in info["constraints"])
        lines += [f"  {c['name']:<{width}}  {c['residual']: .2e}" for c in info["constraints"]]
        lines += [f"rank of the constraint Jacobian: {info['rank']} ({info['redundant']} redundant rows)",
                  f"degrees of freedom: {info['degrees_of_freedom']}" + (" (no mobility: a structure)"
                                                                         if info["degrees_of_freedom"] == 0 else ""),
                  f"suggested independent joints: {', '.join(info['independent_joints']) or '(none)'}"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Load, assemble and print; file and assembly problems raise MbstateError (exit code 2)."""
    if is_urdf(args.mechanism):
        if args.sensors or args.config:
            raise MbstateError(f"{args.mechanism}: --sensors and --config are not available for URDF files yet")
        info = urdf_report(load_spatial(args.mechanism), args.mechanism)
        print(json.dumps(info, indent=2) if args.json else format_urdf_text(info))
        return 0
    if args.config:
        node = load_node_config(args.config, mechanism=args.mechanism, sensors=args.sensors)
        mech, sensors, config = node.mech, node.sensors, node.estimator
    else:
        mech = load_mechanism(args.mechanism)
        sensors, config = (load_sensors(args.sensors, mech), EstimatorConfig()) if args.sensors else (None, None)
    info = report(mech, assembled(mech, {}))
    if sensors is not None:
        info["observability"] = observability_info(sensors, config, observability_at_rest(mech, sensors, config))
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(format_text(info) + ("\n" + format_observability(info["observability"]) if sensors is not None else ""))
    return 0
