"""What a log records about the mechanism and sensors it was made with, and the check that a
configuration may replay it (replay.replay).

Header keys (estimator.logfile), written by the node and by ``mbstate simulate`` (``setup_header``):
``mechanism`` and ``sensors_file`` (the files), ``coordinates``, ``constraints`` (their names,
which say the body and the kind: ``crank: distance 0-1``), ``actuators`` and
``actuator_coordinates`` (each actuator's coordinate; older logs lack it), ``sensors`` (the parsed
sensor file: ids, kinds and settings) and ``parameters``, the model's values by what they are
(``model_parameters``; logs written before it have the other keys).

Check of a header against a configuration (``check_recorded_for``):

- other coordinates or other constraints, or a sensor id of both with another kind: the readings
  do not fit the configured state or sensor models: MbstateError, one line;
- the same structure with other parameters (masses, lengths, gravity, …), actuators or sensor
  settings (mounting, noise, …): a deliberately imperfect model, allowed with a note naming them;
  sensors of one side only (a replay with a subset of the sensors) get a note too;
- a header without some of these keys (an older log has no ``parameters``; a log written by other
  tools may have none): a warning naming what was not compared.

The node itself has no log to compare: its sensor file is checked against its mechanism when it is
loaded (sensors.config: every body, link, constraint and actuator a sensor names must exist).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from estimator.errors import MbstateError, nesting_depth
from estimator.model import ONE, ZERO, Mechanism
from estimator.model_protocol import actuators, constraint_names
from estimator.node.config import NodeConfig
from estimator.spatial.model import SpatialModel
from sensors.config import SensorSet

CHECKED = ("coordinates", "constraints", "sensors", "parameters")
SHOWN = 6  # names shown in a message before "… (N in all)"
HEADER_DEPTH = 16  # the sensor configuration, the deepest part of a header, takes 5 levels


def model_parameters(mech: Mechanism) -> dict[str, list[float]]:
    """Every value of the model the estimator uses, by what it is: gravity, each body's mass, inertia,
    centre of mass and length, each constraint's coefficients and the constants it reads (fixed
    points, constant angles; not the 1 and 0 every model has), the constant generalized forces other
    than gravity, the springs' and torques' parameters."""
    arrays, n = mech.arrays, mech.n
    values: dict[str, list[float]] = {"gravity": list(mech.gravity)}
    for body in mech.bodies:
        values[f"mass of {body.name}"] = [body.mass]
        values[f"inertia of {body.name}"] = [body.inertia]
        values[f"centre of mass of {body.name}"] = list(body.cog)
        values[f"length of {body.name}"] = [body.length]
    for row, name in enumerate(mech.constraint_names):
        constants = [arrays.constants[i - n] for i in arrays.c_idx[row] if i >= n and i - n not in (ONE, ZERO)]
        values.setdefault(f"constraint {name}", []).extend([*arrays.c_coef[row], *constants])
    values["constant forces"] = list(arrays.q_force - mech.gravity_z[:n])
    values["springs"] = list(arrays.spring_par.ravel())
    values["torsional springs"] = list(arrays.torsion_par.ravel())
    values["body torques"] = list(arrays.torque_val)
    return {label: [float(x) for x in entries] for label, entries in values.items()}


def setup_header(mech: Mechanism | SpatialModel, sensors: SensorSet, mechanism_path: str | Path,
                 sensors_path: str | Path) -> dict[str, Any]:
    """The header keys of a log that say what it was recorded for (module docstring), from the model
    protocol; a spatial model (a URDF) has no ``parameters`` (the URDF file is the record)."""
    named = actuators(mech)
    header: dict[str, Any] = {"mechanism": str(mechanism_path), "sensors_file": str(sensors_path),
                              "sensors": sensors.document, "coordinates": list(mech.coordinate_names),
                              "constraints": list(constraint_names(mech)), "actuators": [name for name, _ in named],
                              "actuator_coordinates": [mech.coordinate_names[c] for _, c in named]}
    return header if isinstance(mech, SpatialModel) else {**header, "parameters": model_parameters(mech)}


def shortened(names: Sequence[str], shown: int = SHOWN) -> str:
    """``a, b, c`` — the first ``shown`` names and how many in all when there are more."""
    if not names:
        return "none"
    text = ", ".join(names[:shown])
    return text if len(names) <= shown else f"{text}, … ({len(names)} in all)"


def check_recorded_for(path: str | Path, header: dict[str, Any], config: NodeConfig) -> list[str]:
    """Check a log's header against the configuration's mechanism and sensors (module docstring):
    raises MbstateError on a mismatch (also for a header nested deeper than any writer makes one,
    HEADER_DEPTH levels), returns the lines to show (notes, a warning)."""
    if nesting_depth(header, HEADER_DEPTH) > HEADER_DEPTH:
        raise MbstateError(f"{path}: the header record is nested more than {HEADER_DEPTH} levels deep")
    mech = config.mech
    recorded_mech = Path(str(header.get("mechanism", "(not named)"))).name
    configured_mech = config.mechanism_path.name
    for key, configured in (("coordinates", mech.coordinate_names), ("constraints", constraint_names(mech))):
        if key in header and _names(header[key]) != list(configured):
            raise MbstateError(f"{path}: recorded for mechanism {recorded_mech} with {key} "
                               f"{shortened(_names(header[key]))}; the config's mechanism {configured_mech} has "
                               f"{shortened(list(configured))}")
    lines = []
    if "sensors" in header:
        lines += _sensor_notes(path, header["sensors"], config.sensors)
    differing = []
    if "parameters" in header:
        differing = [label for label, values in model_parameters(mech).items()
                     if not _same(header["parameters"], label, values)]
    if "actuators" in header and _names(header["actuators"]) != [name for name, _ in actuators(mech)]:
        differing.append("actuators")
    if differing:
        lines.append(f"note: the model's parameters differ from the log's ({shortened(differing)}): "
                     f"estimating with an imperfect model")
    missing = [key for key in CHECKED if key not in header]
    if missing:
        lines.append(f"warning: {path}: the header records no {', '.join(missing)}: not compared with "
                     f"the configuration")
    return lines


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _same(recorded: Any, label: str, values: list[float]) -> bool:
    """Whether the header's ``parameters`` hold ``values`` under ``label`` (to rounding: a constant
    force is recorded after gravity was added to it and taken off again)."""
    entry = recorded.get(label) if isinstance(recorded, dict) else None
    try:
        entry = np.asarray(entry, float)
    except (TypeError, ValueError):
        return False
    return entry.shape == (len(values),) and bool(np.allclose(entry, values, rtol=1e-12, atol=1e-12))


def _sensor_notes(path: str | Path, document: Any, sensors: SensorSet) -> list[str]:
    """MbstateError for a sensor id of both with another kind; notes for other settings and for ids
    of one side only."""
    entries = document.get("sensors") if isinstance(document, dict) else None
    recorded = {str(name): entry for name, entry in entries.items()} if isinstance(entries, dict) else {}
    kinds = {name: entry.get("kind") if isinstance(entry, dict) else None for name, entry in recorded.items()}
    configured = {s.params.name: s.params.kind for s in sensors.sensors}
    other_kind = [name for name in configured if name in kinds and kinds[name] != configured[name]]
    if other_kind:
        raise MbstateError(f"{path}: recorded with sensors {shortened([f'{n} ({kinds[n]})' for n in other_kind])}; "
                           f"the config's sensors are {shortened([f'{n} ({configured[n]})' for n in other_kind])}")
    lines = []
    settings = sensors.document["sensors"]
    other_settings = [name for name in configured if name in recorded and recorded[name] != settings[name]]
    if other_settings:
        lines.append(f"note: the settings of sensor(s) {shortened(other_settings)} differ from the log's: "
                     f"estimating with an imperfect sensor model")
    only_log = [name for name in recorded if name not in configured]
    only_config = [name for name in configured if name not in recorded]
    if only_log or only_config:
        lines.append(f"note: sensors only in the log (their readings are unknown to the configuration): "
                     f"{shortened(only_log)}; only in the configuration (never read): {shortened(only_config)}")
    return lines
