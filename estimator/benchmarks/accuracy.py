"""The accuracy matrix of the online estimator: mechanisms × sensor sets × motions
(``mbstate bench accuracy``).

The matrix is configs/bench/accuracy.yaml (documented in configs/bench/README.md): each mechanism
with each of its sensor sets (a encoders on the joints, b encoders and gyroscopes, c an IMU only, d
encoders, IMU and a load cell; the URDF arms' enc, imu, tau and ft; configs/sensors/matrix/) and each
motion it has. One cell:

1. Ground truth at 1 ms (replay.simulation, the code of ``mbstate simulate``): ``driven`` — inverse
   dynamics along the mechanism's drive trajectory, the drive torques are the truth of the unknown
   forces (a closed chain with more freedoms than drives, the Delta: hybrid dynamics, the other freedoms
   free, replay.simulation.driven_truth); ``free`` — forward dynamics without forces, released at rest from
   the file's configuration or the matrix's start. The sensors sample it with their noise (seed 1).
2. Accuracy: the readings through the node's own per-message path (replay.replay.feed, the code of
   ``mbstate replay``) with a ``FixedClock``, so no step is degraded and the numbers are
   deterministic. The estimator's settings are those of the base configuration, with
   ``unknown_forces`` the driven actuators (driven motion) or none (free motion). Its mechanism is
   drawn at the truth's first pose (``q0``, the anchor of its start-up and of its assembly mode):
   the file's pose, except for a free motion from a chosen start, which is then as if the file
   had been drawn there — an IMU-only set has no absolute position to start from otherwise.
3. Latency: the same readings through the same path again, timed with the wall clock and fed as
   fast as possible; p50 / p99 of the steps' latency and the overruns of the budget. A machine
   stall inside a step counts too (estimator.benchmarks.machine_stalls, reported alongside).

Errors against the truth, linearly interpolated to each estimate's time, over the whole run (no
start-up window left out): the joints' angles (the coordinates carrying the encoders of
sets a, b, d) [rad, wrapped] and rates [rad/s], per joint; every point coordinate together [m,
m/s]; each unknown force [N or N·m], also as a share of the truth's range over the run. A cell whose
estimator raises is reported, not fatal: ``error`` keeps the message, the errors cover the estimates
before it, and the smoother's recoveries are counted (``solver_recoveries``).

Bars of issue 10 (``failed_bars``): angle RMSE below a fifth of the encoder quantum on every joint
(sets with encoders), unknown-force RMSE at most 3 % of its range, no smoother recovery or abort,
p99 latency at most 1 ms (the budget at 1 kHz).

``defaults`` (``--defaults``): the matrix as a user runs it. The estimator gets the base's ``rate`` and
``lag`` and the cell's unknown forces, every other key at its default (no per-cell ``force_rate`` or
``jerk_random_walk``, no exact-model settings), and the file's mechanism as drawn: its start-up starts
from the file's configuration and the readings, not from the truth. The bars hold for the cells whose
sensors determine the state, those the estimator's start-up check (estimator.online.observability)
finds every direction of the state seen in (``observable``); the others are reported beside them.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from estimator.assembly import assembled, coordinate_indices
from estimator.benchmarks import CONFIGS, machine, machine_stalls
from estimator.benchmarks.node import stall_line
from estimator.drive_trajectory import load_drive_trajectory
from estimator.errors import MbstateError
from estimator.model_protocol import Model, actuators, drawn_at, load_model, point_coordinates
from estimator.node.config import NodeConfig, load_node_config
from estimator.online.config import EstimatorConfig
from estimator.section import Section
from estimator.yaml_file import read_yaml
from replay.clocks import FixedClock
from replay.replay import replay_readings
from replay.simulation import driven_truth, forward_truth, sensor_step
from sensors.base import wrap_angle
from sensors.config import SensorSet, load_sensors
from sensors.virtual import Truth, simulate_readings

MATRIX = CONFIGS.parent / "bench" / "accuracy.yaml"
MOTIONS = ("driven", "free")
SEED = 1
ANGLE_BAR = 0.2  # joint angle RMSE < ANGLE_BAR × encoder quantum
FORCE_BAR = 0.03  # unknown-force RMSE <= FORCE_BAR × its range over the run
LATENCY_BAR_MS = 1.0  # p99 step latency [ms]
ERROR_CHARACTERS = 160  # of an error message under the table
STALL_SECONDS = 2.0  # of machine_stalls before and after the matrix


@dataclass(frozen=True)
class Scenario:
    """One mechanism of the matrix: its file, the joints whose angles are reported, the drive
    trajectory of those joints (None: no driven motion) and the free motion's start (None: no free
    motion; ``initial`` held while assembling near the file's coordinates, ``guess`` replacing some);
    the sensor ``sets`` it has."""

    name: str
    mechanism: Path
    joints: tuple[str, ...]
    trajectory: Path | None
    force_rate: float | None  # the drive torques' typical rate of change (EstimatorConfig.force_rate)
    jerk_random_walk: float | None  # the drive motion's white-jerk density (EstimatorConfig, force_model jerk)
    initial: dict[str, float] | None
    guess: dict[str, float]
    sets: tuple[str, ...]

    def motions(self) -> tuple[str, ...]:
        return tuple(m for m, present in zip(MOTIONS, (self.trajectory, self.initial)) if present is not None)


@dataclass(frozen=True)
class Cell:
    mechanism: str
    set: str
    motion: str

    def label(self) -> str:
        return f"{self.mechanism} {self.set} {self.motion}"


@dataclass(frozen=True)
class Matrix:
    """The matrix file, loaded: base node configuration, sensor-file pattern, sets and scenarios."""

    source: Path
    base: NodeConfig
    sensors: str
    sets: dict[str, str]
    scenarios: dict[str, Scenario]

    def sensor_file(self, mechanism: str, name: str) -> Path:
        return Path(self.sensors.format(mechanism=mechanism, set=name))

    def cells(self, mechanisms: Sequence[str] = (), sets: Sequence[str] = (),
              motions: Sequence[str] = ()) -> list[Cell]:
        """Every cell of the chosen mechanisms, sets and motions (all when empty), in file order."""
        for kind, chosen, known in (("mechanism", mechanisms, self.scenarios), ("set", sets, self.sets)):
            unknown = [name for name in chosen if name not in known]
            if unknown:
                raise MbstateError(f"unknown {kind} '{unknown[0]}' (known: {', '.join(known)})")
        return [Cell(name, s, motion)
                for name, scenario in self.scenarios.items() if not mechanisms or name in mechanisms
                for s in scenario.sets if not sets or s in sets
                for motion in scenario.motions() if not motions or motion in motions]


def _scenario(section: Section, name: str, base: Path, set_names: Sequence[str], default_sets: list[str]
              ) -> Scenario:
    joints = section.raw("joints")
    if not isinstance(joints, list) or not joints or not all(isinstance(j, str) for j in joints):
        raise section.error("joints", f"must be a list of coordinate names, got {joints!r}")
    driven = section.section("driven") if section.has("driven") else None
    trajectory = base / driven.text("trajectory") if driven else None
    force_rate = driven.number("force_rate", positive=True) if driven else None
    jerk = driven.number("jerk_random_walk", positive=True) if driven else None
    if driven:
        driven.finish()
    free = section.section("free") if section.has("free") else None
    initial = free.number_map("initial") if free else None
    guess = free.number_map("guess") if free else {}
    if free:
        free.finish()
    sets = section.raw("sets", default_sets)
    if not isinstance(sets, list) or not sets or not all(s in set_names for s in sets):
        raise section.error("sets", f"must be a list of the matrix's sets ({', '.join(set_names)}), got {sets!r}")
    scenario = Scenario(name, base / section.text("file"), tuple(joints), trajectory, force_rate, jerk, initial,
                        guess, tuple(sets))
    section.finish()
    if not scenario.motions():
        raise section.error("driven", "a mechanism needs a driven or a free motion (or both)")
    return scenario


def load_matrix(path: str | Path = MATRIX) -> Matrix:
    """Read and check the matrix file (configs/bench/README.md); MbstateError naming the key."""
    path = Path(path)
    top = Section(str(path), "(top)", read_yaml(path))
    base = path.parent
    sets = top.section("sets")
    set_names = {str(name): sets.text(name) for name in sets.data}
    sets.finish()
    default_sets = top.raw("default_sets")
    if not isinstance(default_sets, list) or not all(s in set_names for s in default_sets):
        raise top.error("default_sets", f"must be a list of the sets ({', '.join(set_names)}), got {default_sets!r}")
    mechanisms = top.section("mechanisms")
    scenarios = {str(name): _scenario(mechanisms.section(name), str(name), base, list(set_names), default_sets)
                 for name in mechanisms.data}
    mechanisms.finish()
    pattern = str(base / top.text("sensors"))
    if "{mechanism}" not in pattern or "{set}" not in pattern:
        raise top.error("sensors", "must contain {mechanism} and {set}")
    matrix = Matrix(path, load_node_config(base / top.text("estimator")), pattern, set_names, scenarios)
    top.finish()
    return matrix


def truth_of(scenario: Scenario, motion: str, mech: Model, sensors: SensorSet, duration: float) -> Truth:
    """The cell's ground truth (see the module docstring)."""
    dt = sensor_step(sensors)
    if motion == "driven":
        samples = load_drive_trajectory(scenario.trajectory, len(scenario.joints))
        return driven_truth(mech, scenario.joints, samples, dt, duration)
    q0 = assembled(mech, scenario.initial, f"{scenario.name}: free", scenario.guess)
    return forward_truth(mech, q0, np.zeros(mech.n), dt, duration)


@dataclass(frozen=True)
class CellResult:
    """Errors [SI] and timing of one cell (see the module docstring); None where not measured."""

    mechanism: str
    set: str
    motion: str
    duration_s: float  # simulated
    steps: int  # estimates of the accuracy run
    quantum: float | None  # finest encoder quantum of the set [rad]; None without encoders
    joint_rmse: dict[str, float]  # [rad]
    point_rmse: float | None  # [m]
    joint_rate_rmse: dict[str, float]  # [rad/s]
    point_velocity_rmse: float | None  # [m/s]
    force_rmse: dict[str, float]  # [N or N·m]
    force_range: dict[str, float]  # truth's max − min over the run
    solver_recoveries: int
    error: str | None  # the accuracy run's error (it aborted)
    observable: bool = True  # the estimator's start-up check found every direction of the state seen
    p50_ms: float | None = None
    p99_ms: float | None = None
    overruns: int | None = None

    def force_share(self) -> dict[str, float]:
        """Force RMSE over the truth's range."""
        return {name: rmse / self.force_range[name] if rmse is not None and self.force_range[name] > 0.0
                else float("inf") for name, rmse in self.force_rmse.items()}

    def failed_bars(self, margin: float = 1.0) -> list[str]:
        """The issue's bars this cell misses, each loosened by ``margin`` (a NaN misses, and so does a cell
        without estimates: its errors are None)."""
        failed = []
        angle_bar = margin * ANGLE_BAR * (self.quantum or 0.0)
        if self.quantum is not None and not all(v is not None and v < angle_bar for v in self.joint_rmse.values()):
            failed.append("angle")
        if not all(v <= margin * FORCE_BAR for v in self.force_share().values()):
            failed.append("force")
        if self.solver_recoveries or self.error is not None:
            failed.append("solver")
        if self.p99_ms is not None and not self.p99_ms <= margin * LATENCY_BAR_MS:
            failed.append("p99")
        return failed


def _rmse(error: np.ndarray) -> float | None:
    return float(np.sqrt(np.mean(error**2))) if error.size else None


def errors(mech: Model, truth: Truth, estimates: Sequence[Any], joints: Sequence[str],
           forces: Sequence[str]) -> dict[str, Any]:
    """RMSE of the estimates against the truth at their times, over the whole run (see the module
    docstring)."""
    kept = [e for e in estimates if truth.t[0] <= e.t <= truth.t[-1]]
    t = np.array([e.t for e in kept])

    def truth_at(values: np.ndarray) -> np.ndarray:
        return np.array([np.interp(t, truth.t, column) for column in values.T]).T.reshape(len(t), values.shape[1])

    q, qd = (np.array([getattr(e, key) for e in kept]).reshape(len(t), mech.n) for key in ("q", "qd"))
    q_error, qd_error = q - truth_at(truth.q), qd - truth_at(truth.qd)
    index = coordinate_indices(mech, joints, "joints")
    points = list(point_coordinates(mech))
    names = [name for name, _ in actuators(mech)]
    f_true = truth_at(truth.f)
    return {"joint_rmse": {name: _rmse(wrap_angle(q_error[:, i])) for name, i in zip(joints, index)},
            "point_rmse": _rmse(q_error[:, points]),
            "joint_rate_rmse": {name: _rmse(qd_error[:, i]) for name, i in zip(joints, index)},
            "point_velocity_rmse": _rmse(qd_error[:, points]),
            "force_rmse": {name: _rmse(np.array([e.forces[name] for e in kept]) - f_true[:, names.index(name)])
                           for name in forces},
            "force_range": {name: float(np.ptp(truth.f[:, names.index(name)])) for name in forces}}


def driven_actuators(mech: Model, joints: Sequence[str]) -> tuple[str, ...]:
    """The actuators acting on the driven joints: the unknown forces of a driven cell."""
    return tuple(name for name, on in actuators(mech) if mech.coordinate_names[on] in joints)


def run_cell(matrix: Matrix, cell: Cell, duration: float, timing: bool = True, defaults: bool = False) -> CellResult:
    """Simulate one cell, estimate it with a FixedClock (accuracy) and, ``timing``, again with the wall
    clock (latency); ``defaults``: with the estimator a user gets (module docstring)."""
    scenario = matrix.scenarios[cell.mechanism]
    mech = load_model(scenario.mechanism)
    sensors_path = matrix.sensor_file(cell.mechanism, cell.set)
    sensors = load_sensors(sensors_path, mech)
    truth = truth_of(scenario, cell.motion, mech, sensors, duration)
    readings = [r.to_map() for r in simulate_readings(sensors.sensors, truth, SEED)]
    unknown = driven_actuators(mech, scenario.joints) if cell.motion == "driven" else ()
    if defaults:  # as a user would: the file's mechanism and the defaults but for the grid and the unknowns
        base = matrix.base.estimator
        estimator = EstimatorConfig(rate=base.rate, lag=base.lag, unknown_forces=unknown)
    else:  # the matrix's help: the truth's first pose and the scenario's force scales
        mech = drawn_at(mech, truth.q[0])  # the start-up anchor: the release pose
        estimator = dataclasses.replace(matrix.base.estimator, unknown_forces=unknown,
                                        force_rate=scenario.force_rate if unknown else None,
                                        jerk_random_walk=scenario.jerk_random_walk if unknown
                                        else matrix.base.estimator.jerk_random_walk)
    config = dataclasses.replace(matrix.base, source=f"{matrix.source} ({cell.label()})",
                                 mechanism_path=scenario.mechanism, sensors_path=sensors_path, mech=mech,
                                 sensors=sensors, estimator=estimator)
    accuracy = replay_readings(config, readings, FixedClock())
    quanta = [s.params.noise.quantum for s in sensors.sensors if s.params.kind == "encoder"]
    result = CellResult(cell.mechanism, cell.set, cell.motion, float(truth.t[-1] - truth.t[0]),
                        len(accuracy.estimates), min(quanta) if quanta else None,
                        **errors(mech, truth, accuracy.estimates, scenario.joints, unknown),
                        solver_recoveries=int(accuracy.counters.get("solver_recoveries", 0)), error=accuracy.error,
                        observable=not any("unobservable" in e.flags for e in accuracy.estimates))
    if not timing:
        return result
    timed = replay_readings(config, readings, time.perf_counter)
    latency = 1e3 * np.array([e.latency for e in timed.estimates])
    if not latency.size:
        return result
    budget = config.estimator.latency_budget_ms
    return dataclasses.replace(result, p50_ms=float(np.percentile(latency, 50)),
                               p99_ms=float(np.percentile(latency, 99)), overruns=int(np.sum(latency > budget)))


def _number(value: float | None, spec: str = ".2e") -> str:
    return "—" if value is None else format(value, spec)


HEADER = (f"{'mechanism':15s} {'set':3s} {'motion':6s} {'Δ rad':>8s} {'angle rad (/Δ)':>18s} {'points m':>8s} "
          f"{'rate rad/s':>10s} {'vel m/s':>8s} {'force (% range)':>17s} {'p50 ms':>6s} {'p99 ms':>6s} "
          f"{'solver':>6s}  result")


def short(error: str) -> str:
    """An error message's first sentence, at most ERROR_CHARACTERS long."""
    text = error.split(". ")[0]
    return text if len(text) <= ERROR_CHARACTERS else text[:ERROR_CHARACTERS - 1] + "…"


def row(result: CellResult, note: int | None = None) -> str:
    """One table row: the worst joint and force, the bars missed, or (``note``: its number under the
    table) the step at which the estimator raised."""
    def worst(values: dict[str, float | None]) -> float | None:
        known = [v for v in values.values() if v is not None]
        return max(known, key=lambda v: np.inf if np.isnan(v) else v) if known else None

    angle = worst(result.joint_rmse)
    angle_text = _number(angle) + (f" ({angle / result.quantum:.2g})" if angle is not None and result.quantum else "")
    shares = result.force_share()
    name = max(shares, key=lambda key: shares[key], default=None)
    force_text = "—" if name is None else f"{_number(result.force_rmse[name], '.3g')} ({100 * shares[name]:.3g}%)"
    failed = result.failed_bars()
    outcome = ("ok" if not failed else "misses " + ", ".join(failed)) + ("" if result.observable else " (unobservable)")
    if result.error is not None:
        outcome = f"aborted at step {result.steps} [{note}]"
    return (f"{result.mechanism:15s} {result.set:3s} {result.motion:6s} {_number(result.quantum):>8s} "
            f"{angle_text:>18s} {_number(result.point_rmse):>8s} {_number(worst(result.joint_rate_rmse)):>10s} "
            f"{_number(result.point_velocity_rmse):>8s} {force_text:>17s} {_number(result.p50_ms, '.3f'):>6s} "
            f"{_number(result.p99_ms, '.3f'):>6s} {result.solver_recoveries:6d}  {outcome}")


def bars_text() -> str:
    return (f"bars: angle RMSE < Δ/{1 / ANGLE_BAR:g} on every encoder joint (Δ: encoder quantum), unknown-force "
            f"RMSE <= {100 * FORCE_BAR:g} % of its range, no smoother recovery, p99 <= {LATENCY_BAR_MS:g} ms")


def _plain(value: Any) -> Any:
    """JSON-ready: non-finite numbers become None."""
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def accuracy_matrix(duration: float, mechanisms: Sequence[str] = (), sets: Sequence[str] = (),
                    motions: Sequence[str] = (), as_json: bool = False,
                    path: str | Path = MATRIX, estimator: str | Path | None = None,
                    defaults: bool = False) -> list[CellResult]:
    """Run the chosen cells one at a time and print the table (rows as they finish) or, ``as_json``,
    one JSON object at the end (progress on stderr); the results. ``estimator``: a node configuration
    whose estimator settings replace those of the matrix file's ``estimator``; ``defaults``: the
    estimator a user gets (module docstring)."""
    matrix = load_matrix(path)
    if estimator is not None:
        matrix = dataclasses.replace(matrix, base=load_node_config(estimator))
    cells = matrix.cells(mechanisms, sets, motions)
    settings = (f"defaults (rate {matrix.base.estimator.rate:g} Hz, lag {matrix.base.estimator.lag})" if defaults
                else f"of {Path(matrix.base.source).name}")
    if not cells:
        raise MbstateError("no cell of the matrix has that mechanism, set and motion")
    before = machine_stalls(STALL_SECONDS)
    if not as_json:
        print(f"accuracy matrix: {len(cells)} cells of {duration:g} s (seed {SEED}), RMSE over the whole run, "
              f"estimator {settings}; {machine()}")
        print(bars_text())
        print(stall_line(before))
        print(HEADER, flush=True)
    results: list[CellResult] = []
    notes: list[str] = []
    for cell in cells:
        if as_json:
            print(f"{cell.label()} ...", file=sys.stderr, flush=True)
        results.append(run_cell(matrix, cell, duration, defaults=defaults))
        if results[-1].error is not None:
            notes.append(f"[{len(notes) + 1}] {cell.label()}: {short(results[-1].error)}")
        if not as_json:
            print(row(results[-1], len(notes)), flush=True)
    after = machine_stalls(STALL_SECONDS)
    if as_json:
        print(json.dumps({"machine": machine(), "estimator": settings, "duration_s": duration,
                          "seed": SEED, "rmse_window": "whole run",
                          "bars": {"angle_rmse_per_quantum": ANGLE_BAR, "force_rmse_per_range": FORCE_BAR,
                                   "p99_ms": LATENCY_BAR_MS},
                          "stalls_before": dataclasses.asdict(before), "stalls_after": dataclasses.asdict(after),
                          "cells": [_plain({**dataclasses.asdict(r), "force_share": r.force_share(),
                                            "failed_bars": r.failed_bars()}) for r in results]}, indent=2))
    else:
        passed = sum(not r.failed_bars() for r in results)
        determined = [r for r in results if r.observable]
        print("\n".join(notes + [stall_line(after)]))
        print(f"{passed} of {len(results)} cells meet every bar ({sum(not r.failed_bars() for r in determined)} of the "
              f"{len(determined)} whose sensors determine the state); smoother recoveries in "
              f"{sum(r.solver_recoveries > 0 for r in results)}, aborted {sum(r.error is not None for r in results)}")
    return results
