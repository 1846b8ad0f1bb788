"""One lab cell: simulate the truth and its readings, estimate through the node's path, score.

1. Truth: forward dynamics of the scenario's mechanism (replay.simulation.forward_truth) from its
   release pose and rates (rest, or a URDF's ``initial_velocity``), sampled at the sensors' shortest
   period (integrated at substeps of at most replay.simulation.TRUTH_STEP), for the suite's duration;
   readings simulated from it with the sensor models built on the TRUE mechanism (sensors.virtual, seed of the cell).
2. Estimate: the estimator's model (errors and start offset, replay.lab.suite.Scenario.model_mechanism)
   with the sensor models built on it, the readings through the node's per-message path
   (replay.replay.replay_readings, as ``mbstate replay``) on a clock that does not advance (no
   degradation; the same numbers on every run) while each update's wall time is measured aside
   (replay.replay.MeasuredFixedClock): the cost per step, measured under whatever load the machine has.
3. Scores: RMSE of q, q̇, q̈ of each scored coordinate (angles wrapped) and of each unknown force,
   against the truth interpolated to the estimates' times, over the whole run (start included) and
   over t ≥ t0 + ``after``; with a true payload, the largest relative error of the estimated payload
   mass |m̂ − m| / m over t ≥ t0 + ``after`` (``payload_error``); and the series of the first seed for the
   report's plots.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from estimator.errors import MbstateError
from estimator.model_protocol import actuators, point_coordinates, start_configuration
from estimator.node.config import NodeConfig, NodeParams
from estimator.threads import one_blas_thread
from replay.clocks import MeasuredFixedClock
from replay.lab.suite import Cell, Scenario, Suite, load_suite
from replay.replay import replay_readings
from replay.simulation import forward_truth, sensor_step
from sensors.base import wrap_angle
from sensors.config import load_sensors
from sensors.messages import Reading
from sensors.virtual import Truth, simulate_readings

QUANTITIES = ("q", "qd", "qdd")
PLOT_POINTS = 2000  # samples kept of a series for the plots


@dataclass(frozen=True)
class Series:
    """The scored coordinates over time, for the plots: truth and estimate (columns = scored), σ of q
    (None when the estimator gives none), and the estimator's model-error states by name (``model``:
    ``gravity_error``, empty without them)."""

    t: np.ndarray
    truth: np.ndarray
    estimate: np.ndarray
    sigma: np.ndarray | None
    model: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class CellResult:
    """Scores of one cell: ``rmse[quantity][coordinate]`` over the whole run and ``rmse_after`` from
    ``after`` on (quantity q, qd, qdd; forces by actuator name under ``forces``); cost per step [ms]."""

    cell: Cell
    steps: int
    rmse: dict[str, dict[str, float]]
    rmse_after: dict[str, dict[str, float]]
    cost_ms: dict[str, float]
    error: str | None
    series: Series | None = field(default=None, repr=False)
    payload_error: float | None = None  # |m̂ − m| / m of the payload mass, largest from ``after`` on


@lru_cache(maxsize=8)
def _truth(suite_path: Path, scenario_name: str, dt: float, duration: float) -> Truth:
    """The scenario's truth (one per worker process and step: every seed, set and estimator share it)."""
    scenario = load_suite(suite_path).scenarios[scenario_name]
    mech = scenario.truth_mechanism()
    return forward_truth(mech, start_configuration(mech), scenario.start_velocity(mech), dt, duration)


def _rmse(error: np.ndarray) -> float:
    return float(np.sqrt(np.mean(error ** 2))) if error.size else float("nan")


def scores(scenario: Scenario, truth: Truth, estimates: list, angles: set[str], after: float,
           forces: tuple[str, ...], actuators: list[str]) -> tuple[dict, dict, Series]:
    """(whole-run RMSE, RMSE from ``after`` on, the series) of the estimates (module docstring, 3)."""
    kept = [e for e in estimates if truth.t[0] <= e.t <= truth.t[-1]]
    t = np.array([e.t for e in kept])
    late = t >= t[0] + after if len(t) else np.zeros(0, bool)
    names = list(scenario.truth_mechanism().coordinate_names)
    index = [names.index(c) for c in scenario.scored]
    whole, tail = {}, {}
    series_truth = series_estimate = None
    for quantity in QUANTITIES:
        true = np.array([np.interp(t, truth.t, getattr(truth, quantity)[:, i]) for i in index]).T.reshape(len(t), -1)
        estimate = np.array([getattr(e, quantity)[index] for e in kept]).reshape(len(t), -1)
        error = estimate - true
        for j, name in enumerate(scenario.scored):
            if quantity == "q" and name in angles:
                error[:, j] = wrap_angle(error[:, j])
        whole[quantity] = {name: _rmse(error[:, j]) for j, name in enumerate(scenario.scored)}
        tail[quantity] = {name: _rmse(error[late, j]) for j, name in enumerate(scenario.scored)}
        if quantity == "q":
            series_truth, series_estimate = true, true + error
    whole["forces"], tail["forces"] = {}, {}
    for name in forces:
        error = np.array([e.forces[name] for e in kept]) - np.interp(t, truth.t, truth.f[:, actuators.index(name)])
        whole["forces"][name], tail["forces"][name] = _rmse(error), _rmse(error[late])
    sigmas = [e.sigma for e in kept]
    sigma = (np.array([s["q"][index] for s in sigmas]) if sigmas and all(s is not None for s in sigmas) else None)
    every = max(1, len(t) // PLOT_POINTS)
    model = {name: np.array([e.model[name] for e in kept])[::every]
             for name in (kept[0].model if kept else {})}
    series = Series(t[::every], series_truth[::every], series_estimate[::every],
                    None if sigma is None else sigma[::every], model)
    return whole, tail, series


def payload_error(scenario: Scenario, estimates: list, after: float) -> float | None:
    """max |m̂ − m| / m over the estimates from t0 + ``after`` on (module docstring, 3); None without a
    true payload or a payload estimate (or no estimate that late)."""
    if scenario.payload is None or not estimates or "payload.mass" not in estimates[0].model:
        return None
    late = [e.model["payload.mass"] for e in estimates if e.t >= estimates[0].t + after]
    return float(np.max(np.abs(np.array(late) - scenario.payload.mass))) / scenario.payload.mass if late else None


def _named(suite: Suite, table: dict, kind: str, name: str):
    """``table[name]``; MbstateError when the suite, read again by the worker, no longer has it."""
    if name not in table:
        raise MbstateError(f"{suite.source}: no {kind} {name!r} any more (the file changed while the lab ran)")
    return table[name]


def simulated(suite: Suite, scenario: Scenario, sensor_set: str, seed: int,
              duration: float) -> tuple[Truth, list[Reading]]:
    """The truth of ``scenario`` for ``duration`` [s] and the readings of its ``sensor_set`` drawn with
    ``seed``, in stamp order (module docstring, 1)."""
    truth_mech = scenario.truth_mechanism()
    true_sensors = load_sensors(_named(suite, scenario.sensor_sets, "sensor set", sensor_set), truth_mech)
    truth = _truth(suite.source, scenario.name, sensor_step(true_sensors), duration)
    return truth, simulate_readings(true_sensors.sensors, truth, seed)


def run_cell(suite_path: Path, cell: Cell, duration: float | None = None, keep_series: bool = True) -> CellResult:
    """The cell of the module docstring (``duration`` overrides the suite's); an estimator that raises
    gives a result with ``error`` and the scores of the estimates before it. BLAS on one thread
    (estimator.threads), as in the node, whatever the worker was started with."""
    one_blas_thread()
    suite: Suite = load_suite(suite_path)
    scenario = _named(suite, suite.scenarios, "scenario", cell.scenario)
    duration = duration or suite.duration
    truth_mech, model = scenario.truth_mechanism(), scenario.model_mechanism()
    truth, readings = simulated(suite, scenario, cell.sensor_set, cell.seed, duration)
    path = scenario.sensor_sets[cell.sensor_set]
    model_sensors = load_sensors(path, model)
    estimator = _named(suite, suite.estimators, "estimator", cell.estimator)
    config = NodeConfig(source=f"{suite.source} ({cell.label()})", mechanism_path=scenario.mechanism,
                        sensors_path=path, mech=model, sensors=model_sensors, estimator=estimator,
                        node=dataclasses.replace(NodeParams(), max_future_s=max(1.0, duration)))
    clock = MeasuredFixedClock()
    run = replay_readings(config, [r.to_map() for r in readings], clock)
    points = set(point_coordinates(truth_mech))
    angles = {name for i, name in enumerate(truth_mech.coordinate_names) if i not in points}
    if run.estimates:
        whole, tail, series = scores(scenario, truth, run.estimates, angles, suite.after, estimator.unknown_forces,
                                     [name for name, _ in actuators(truth_mech)])
    else:
        whole, tail, series = {}, {}, None
    return CellResult(cell, len(run.estimates), whole, tail, clock.latency.summary_ms(), run.error,
                      series if keep_series else None, payload_error(scenario, run.estimates, suite.after))
