"""A mechanism file estimated twice, as written and with the angle coordinates no actuator needs removed
(points only, as the MBSE library's files come): the same truth and readings for both, each removed
angle and its rate measured from the estimated points, RMSE of both runs (tests of the choice of
independent coordinates, issue 35)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from estimator.constraints import angle_coordinates
from estimator.kinematics import solve_velocity_problem
from estimator.mechanism_file import build_mechanism
from estimator.model import Mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.yaml_file import read_yaml
from replay.clocks import FixedClock
from replay.simulation import forward_truth
from sensors.base import wrap_angle
from sensors.config import build_sensors
from sensors.virtual import simulate_readings

TRUTH_STEP = 1e-3  # [s]


def without_free_angles(path: Path) -> tuple[Mechanism, Mechanism, list[str]]:
    """(the file's mechanism, the same without the angle coordinates no actuator acts on, their names)."""
    document = read_yaml(path)
    full = build_mechanism(document, str(path))
    driven = {full.coordinate_names[a.coordinate] for a in full.actuators}
    angles = [full.coordinate_names[i] for i in range(full.n) if i not in set(full.point_coordinates)]
    removed = [name for name in angles if name not in driven]
    reduced = copy.deepcopy(document)
    kept = [entry for k, entry in enumerate(document.get("relative_coordinates") or [])
            if entry.get("name", f"theta{k}") in driven]
    reduced["relative_coordinates"] = kept
    return full, build_mechanism(reduced, f"{path} (points only)"), removed


def with_angles(full: Mechanism, reduced: Mechanism, q: np.ndarray, qd: np.ndarray,
                near: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) of ``full`` from those of ``reduced``: the shared coordinates copied, each missing angle
    the geometric angle of the points (on the turn nearest ``near``, the full q) and its rate from
    Φq q̇ = 0 with the others' rates held."""
    q_full, qd_full = np.zeros(full.n), np.zeros(full.n)
    known = [full.coordinate_names.index(name) for name in reduced.coordinate_names]
    q_full[known], qd_full[known] = q, qd
    a = full.arrays
    for coordinate, alpha in zip(*angle_coordinates(q_full, a.constants, a.c_kind, a.c_idx)):
        if coordinate not in known:
            q_full[coordinate] = near[coordinate] + wrap_angle(alpha - near[coordinate])
    return q_full, solve_velocity_problem(full, q_full, qd_full[known], known)


@dataclass(frozen=True)
class AngleErrors:
    """RMSE of the removed angles [rad] and their rates [rad/s], estimated with them (``full``) and
    measured from the points of the estimate without them (``points``), one entry per angle; how often
    each run switched its independent coordinates."""

    names: list[str]
    full: tuple[np.ndarray, np.ndarray]
    points: tuple[np.ndarray, np.ndarray]
    switches: tuple[int, int]


def angle_errors(path: Path, sensors: dict, config: EstimatorConfig, t_end: float, seed: int) -> AngleErrors:
    """The file at ``path`` released at rest from its pose, read by ``sensors`` (a sensor file's map,
    noise ``seed``), estimated with and without its free angle coordinates (module docstring)."""
    full, reduced, names = without_free_angles(path)
    truth = forward_truth(full, full.q0, np.zeros(full.n), TRUTH_STEP, t_end)
    readings = simulate_readings(build_sensors(sensors, full, "test").sensors, truth, seed)
    columns = [full.coordinate_names.index(name) for name in names]
    results, switches = [], []
    for mech in (full, reduced):
        estimator = OnlineEstimator(mech, build_sensors(sensors, mech, "test"), config, FixedClock())
        angle, rate = [], []
        for reading in readings:
            estimator.add(reading)
            for estimate in estimator.advance(reading.t):
                row = int(round(estimate.t / TRUTH_STEP))
                q, qd = ((estimate.q, estimate.qd) if mech is full else
                         with_angles(full, reduced, estimate.q, estimate.qd, truth.q[row]))
                angle.append(wrap_angle(q[columns] - truth.q[row, columns]))
                rate.append(qd[columns] - truth.qd[row, columns])
        assert estimator.counters["reinitializations"] == 0
        switches.append(estimator.partitions.switches)
        results.append(tuple(np.sqrt(np.mean(np.square(e), axis=0)) for e in (angle, rate)))
    return AngleErrors(names, results[0], results[1], tuple(switches))
