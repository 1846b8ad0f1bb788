"""Contact detection and the tool wrench (``mbstate bench contact``; issue 39, "Contact").

Set-up: the Panda (configs/mechanisms/urdf/panda.urdf) moving along its drive trajectory (configs/
trajectories/panda.txt, the demo's ready pose and swings), its joints position-controlled (inverse
dynamics: the contact does not change the motion), encoders of 2^14 counts and joint torque sensors
at 1 kHz (configs/sensors/matrix/panda_tau.yaml), readings seeded. Two runs of ``duration``:

- contact: a wrench on the tool frame (TOOL) stepping on and off (``contact_schedule``: seeded, a force
  of 5–20 N and a moment of 0.5–2 N·m in random directions of the tool's axes, on for 8–15 % and off for
  6–12 % of the run, from 10 % of it; a 10 s run has four or five steps); the drive torques and the
  torque sensors carry −Jᵀ W (replay.simulation.contact_truth);
- free: the same motion without contact.

Each method (an ``estimator.kind``; ``wrenches: [TOOL]``; the smoother with the drive torques unknown; the
defaults but the motion's white-jerk density ``jerk_random_walk``, the accuracy matrix's for the Panda's
driven motion, which the null-jerk filter under the momentum observer reads too) runs on the readings by
the node's per-message path (replay.replay_readings) with a FixedClock. Scores, over the
estimates from SETTLE of the run on (the start-up's transient left out): the residual ê − e of the
wrench's force and moment parts apart, each as a Euclidean norm [N, N·m]; threshold = THRESHOLD_SIGMAS × its
root mean square over the free run (the standard deviation of a residual whose truth is zero, the bias
included); an alarm when either norm of the estimate is past its threshold; detection delay per step-on:
the first estimate past a threshold at or after the step, minus the step's time (missed: none before the
step-off); false alarms: alarms begun in the free run (and the share of its estimates in alarm); RMSE of
the force and moment during contact.
Then the same with the estimator's model file edited, every link's mass and inertia MASS_ERROR heavier
(the truth exact): its own thresholds, and also the false alarms at the exact model's thresholds. A
kind that publishes no wrench on TOOL is reported as "missing wrench output".
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from estimator.benchmarks import CONFIGS, machine
from estimator.benchmarks.accuracy import load_matrix
from estimator.drive_trajectory import load_drive_trajectory
from estimator.errors import MbstateError
from estimator.node.config import NodeConfig, NodeParams
from estimator.online.config import KINDS, WRENCH_KINDS, EstimatorConfig
from estimator.spatial.model import SpatialModel, load_spatial
from replay.clocks import FixedClock
from replay.replay import replay_readings
from replay.simulation import WrenchSchedule, contact_truth, sensor_step
from sensors.config import load_sensors
from sensors.virtual import Truth, simulate_readings

MECHANISM = CONFIGS / "urdf" / "panda.urdf"
SENSORS = CONFIGS.parent / "sensors" / "matrix" / "panda_tau.yaml"
TRAJECTORY = CONFIGS.parent / "trajectories" / "panda.txt"
TOOL = "panda_hand_tcp"
DURATION = 10.0  # [s] each run
SEED = 1  # readings; the schedule draws from SEED too
FORCE = (5.0, 20.0)  # [N] the steps' force magnitudes
MOMENT = (0.5, 2.0)  # [N·m] the steps' moment magnitudes
START, ON, OFF = 0.1, (0.08, 0.15), (0.06, 0.12)  # shares of the run: first step-on, on and off spans
SETTLE = 0.05  # share of the run left out of the scores at its start
THRESHOLD_SIGMAS = 5.0
MASS_ERROR = 0.1  # the edited model's links are this much heavier
MISSING = "missing wrench output"


def contact_schedule(duration: float, seed: int = SEED) -> WrenchSchedule:
    """The contact run's steps on TOOL (module docstring)."""
    rng = np.random.default_rng(seed)
    steps, t = [], START * duration
    while True:
        on, off = rng.uniform(*ON) * duration, rng.uniform(*OFF) * duration
        if t + on > duration:
            return WrenchSchedule(TOOL, tuple(steps))
        moment, force = (rng.normal(size=3) for _ in range(2))
        wrench = np.concatenate((rng.uniform(*MOMENT) * moment / np.linalg.norm(moment),
                                 rng.uniform(*FORCE) * force / np.linalg.norm(force)))
        steps.append((t, t + on, wrench))
        t += on + off


def heavier_urdf(path: Path, factor: float, folder: Path) -> Path:
    """A copy of the URDF at ``path`` in ``folder`` with every link's mass and inertia times ``factor``."""
    tree = ET.parse(path)
    for inertial in tree.getroot().iter("inertial"):
        for element, keys in (("mass", ("value",)), ("inertia", ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))):
            node = inertial.find(element)
            for key in keys if node is not None else ():
                if key in node.attrib:
                    node.set(key, repr(factor * float(node.get(key))))
    out = folder / path.name
    tree.write(out)
    return out


@dataclass(frozen=True)
class Scores:
    """One method on one model (module docstring); None where there is no wrench to score."""

    threshold_force: float | None  # [N]
    threshold_moment: float | None  # [N·m]
    delays: list[float | None]  # [s] per step-on; None: missed
    false_alarms: int | None  # alarms begun in the free run
    alarm_share: float | None  # of the free run's estimates in alarm
    force_rmse: float | None  # [N] during contact
    moment_rmse: float | None  # [N·m]
    error: str | None = None  # the run's error, or MISSING

    @property
    def missed(self) -> int | None:
        return None if self.error else sum(d is None for d in self.delays)

    @property
    def mean_delay(self) -> float | None:
        found = [d for d in self.delays if d is not None]
        return float(np.mean(found)) if found else None


@dataclass(frozen=True)
class Run:
    """The estimated and true tool wrench at the scored estimates' times."""

    t: np.ndarray
    estimated: np.ndarray  # (N, 6)
    true: np.ndarray  # (N, 6)


def _norms(wrench: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.linalg.norm(wrench[:, :3], axis=1), np.linalg.norm(wrench[:, 3:], axis=1)


def _alarms(run: Run, thresholds: tuple[float, float]) -> np.ndarray:
    moment, force = _norms(run.estimated)
    return (force > thresholds[0]) | (moment > thresholds[1])


def _onsets(alarm: np.ndarray) -> int:
    return int(np.sum(alarm[1:] & ~alarm[:-1]) + (1 if alarm.size and alarm[0] else 0))


def estimate_run(mech: SpatialModel, mechanism_path: Path, kind: str, truth: Truth, readings: list[dict[str, Any]],
                 schedule: WrenchSchedule, settings: EstimatorConfig) -> Run | str:
    """The tool wrench of ``kind`` with the model ``mech`` (its sensors read on it) from ``readings`` of
    ``truth``, or the error (MISSING when it publishes none)."""
    sensors = load_sensors(SENSORS, mech)
    unknown = mech.actuator_names if kind == "smoother" else ()
    estimator = dataclasses.replace(settings, kind=kind, wrenches=(TOOL,) if kind in WRENCH_KINDS else (),
                                    unknown_forces=unknown)
    config = NodeConfig(f"bench contact ({kind})", mechanism_path, SENSORS, mech, sensors, estimator, NodeParams())
    result = replay_readings(config, readings, FixedClock())
    if result.error is not None:
        return result.error
    start = truth.t[0] + SETTLE * (truth.t[-1] - truth.t[0])
    kept = [e for e in result.estimates if start <= e.t <= truth.t[-1]]
    if not kept or any(TOOL not in e.wrenches for e in kept):
        return MISSING
    t = np.array([e.t for e in kept])
    return Run(t, np.array([e.wrenches[TOOL] for e in kept]), schedule.at(t))


def score(contact: Run | str, free: Run | str, schedule: WrenchSchedule,
          thresholds: tuple[float, float] | None = None) -> Scores:
    """The module docstring's scores; ``thresholds`` (force, moment): given instead of the free run's own."""
    if isinstance(contact, str) or isinstance(free, str):
        return Scores(None, None, [None] * len(schedule.steps), None, None, None, None,
                      contact if isinstance(contact, str) else free)
    moment, force = _norms(free.estimated)
    own = tuple(THRESHOLD_SIGMAS * float(np.sqrt(np.mean(norm ** 2))) for norm in (force, moment))
    limits = thresholds or own
    alarm = _alarms(contact, limits)
    delays: list[float | None] = []
    for on, off, _ in schedule.steps:
        past = np.flatnonzero(alarm & (contact.t >= on - 1e-9) & (contact.t < off))
        delays.append(float(contact.t[past[0]] - on) if past.size else None)
    touching = np.linalg.norm(contact.true, axis=1) > 0.0
    error = contact.estimated[touching] - contact.true[touching]
    moment_error, force_error = _norms(error)
    false = _alarms(free, limits)
    return Scores(limits[0], limits[1], delays, _onsets(false), float(np.mean(false)),
                  float(np.sqrt(np.mean(force_error ** 2))) if error.size else None,
                  float(np.sqrt(np.mean(moment_error ** 2))) if error.size else None)


def contact_benchmark(kinds: Sequence[str], duration: float = DURATION,
                      settings: EstimatorConfig | None = None) -> dict[str, Any]:
    """Every kind's scores with the exact model and the heavier one (module docstring), as a JSON-ready map."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise MbstateError(f"--kinds: unknown estimator kind {unknown[0]!r} (known: {', '.join(KINDS)})")
    settings = settings or EstimatorConfig(jerk_random_walk=load_matrix().scenarios["panda"].jerk_random_walk)
    exact = load_spatial(MECHANISM)
    schedule = contact_schedule(duration)
    samples = load_drive_trajectory(TRAJECTORY, exact.dof)
    sensors = load_sensors(SENSORS, exact)
    dt = sensor_step(sensors)
    truths = {"contact": contact_truth(exact, exact.joint_names, samples, dt, duration, schedule),
              "free": contact_truth(exact, exact.joint_names, samples, dt, duration, WrenchSchedule(TOOL, ()))}
    readings = {name: [r.to_map() for r in simulate_readings(sensors.sensors, truth, SEED)]
                for name, truth in truths.items()}
    methods: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        heavy_path = heavier_urdf(MECHANISM, 1.0 + MASS_ERROR, Path(folder))
        models = {"exact": (exact, MECHANISM), "mass_off": (load_spatial(heavy_path), heavy_path)}
        for kind in kinds:
            runs = {(label, name): estimate_run(mech, path, kind, truth, readings[name], schedule, settings)
                    for label, (mech, path) in models.items() for name, truth in truths.items()}
            exact_scores = score(runs["exact", "contact"], runs["exact", "free"], schedule)
            heavy_scores = score(runs["mass_off", "contact"], runs["mass_off", "free"], schedule)
            at_exact = (None if exact_scores.threshold_force is None or heavy_scores.error
                        else score(runs["mass_off", "contact"], runs["mass_off", "free"], schedule,
                                   (exact_scores.threshold_force, exact_scores.threshold_moment)))
            methods[kind] = {"exact": _plain(exact_scores), "mass_off": _plain(heavy_scores),
                             "mass_off_at_exact_thresholds": None if at_exact is None else
                             {"false_alarms": at_exact.false_alarms, "alarm_share": at_exact.alarm_share}}
    return {"machine": machine(), "duration_s": float(truths["contact"].t[-1]), "seed": SEED, "tool": TOOL,
            "observer_gain": settings.observer_gain, "threshold_sigmas": THRESHOLD_SIGMAS, "settle_share": SETTLE,
            "mass_error": MASS_ERROR,
            "steps": [{"on_s": on, "off_s": off, "moment": w[:3].tolist(), "force": w[3:].tolist()}
                      for on, off, w in schedule.steps],
            "methods": methods}


def _plain(scores: Scores) -> dict[str, Any]:
    return {**dataclasses.asdict(scores), "mean_delay": scores.mean_delay, "missed": scores.missed}


def _cell(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def contact_table(results: dict[str, Any]) -> str:
    """The results as a table: one row per method and model."""
    lines = [f"contact benchmark: Panda, tool {results['tool']}, {results['duration_s']:g} s with "
             f"{len(results['steps'])} wrench steps and {results['duration_s']:g} s without (seed {results['seed']}); "
             f"threshold {results['threshold_sigmas']:g} × rms of the free run's |f̂|, |m̂|; {results['machine']}",
             f"{'method':18s} {'model':8s} {'thr N':>7s} {'thr N·m':>7s} {'delay ms':>9s} {'max ms':>7s} "
             f"{'missed':>6s} {'false':>5s} {'F rmse N':>9s} {'M rmse N·m':>10s}  note"]
    for kind, method in results["methods"].items():
        for model in ("exact", "mass_off"):
            s = method[model]
            found = [d for d in s["delays"] if d is not None]
            note = s["error"] or ""
            at_exact = method["mass_off_at_exact_thresholds"]
            if model == "mass_off" and at_exact is not None:
                note = (f"at the exact model's thresholds: {at_exact['false_alarms']} false alarms, "
                        f"{100 * at_exact['alarm_share']:.0f} % of the free run in alarm")
            mean = None if s["mean_delay"] is None else 1e3 * s["mean_delay"]
            lines.append(f"{kind:18s} {model:8s} {_cell(s['threshold_force'], '.3f'):>7s} "
                         f"{_cell(s['threshold_moment'], '.3f'):>7s} {_cell(mean, '.1f'):>9s} "
                         f"{_cell(1e3 * max(found) if found else None, '.1f'):>7s} {_cell(s['missed'], 'd'):>6s} "
                         f"{_cell(s['false_alarms'], 'd'):>5s} {_cell(s['force_rmse'], '.3f'):>9s} "
                         f"{_cell(s['moment_rmse'], '.3f'):>10s}  {note[:100]}")
    return "\n".join(lines)


def print_contact(kinds: Sequence[str], duration: float, as_json: bool) -> dict[str, Any]:
    """Run ``contact_benchmark`` and print its table or JSON."""
    results = contact_benchmark(kinds, duration)
    print(json.dumps(results, indent=2) if as_json else contact_table(results))
    return results
