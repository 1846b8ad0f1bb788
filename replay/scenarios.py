"""The four-bar scenario of the node benchmark and the online estimator's tests: configs/mechanisms/
fourbar_crank.yaml from rest at θ = 0 under the motor torque τ(t) = 20 + 10 sin(3t) N·m (held over
each 1 ms simulation step; Lagrange + RK4 at 1 ms), which swings the crank over ±3 rad and over the
top, sampled by the sensors of configs/sensors/fourbar.yaml (seeded); its readings fed through an
online estimator as the node and replay feed them; the crank angle and motor torque RMSE."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import numpy as np

from estimator.collector import steady_collection
from estimator.dynamics.forward import ForwardOptions, consistent_initial_state, integrate, multipliers
from estimator.mechanism_file import load_mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.interface import StepEstimate
from replay.pacing import paced
from replay.simulation import with_actuator_forces
from sensors.base import wrap_angle
from sensors.config import SensorSet, load_sensors
from sensors.messages import Reading
from sensors.virtual import Truth, simulate_readings

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
MECHANISM, SENSORS = CONFIGS / "mechanisms" / "fourbar_crank.yaml", CONFIGS / "sensors" / "fourbar.yaml"
DT = 1e-3
TRANSIENT = 0.2  # [s] left out of the RMSE (start-up)


def motor_torque(t: float) -> float:
    """τ(t) [N·m] of the scenario."""
    return 20.0 + 10.0 * np.sin(3.0 * t)


@cache
def scenario(t_end: float = 5.0, seed: int = 1) -> tuple:
    """(mech, sensor set, truth, readings in stamp order)."""
    mech = load_mechanism(MECHANISM)
    sensors = load_sensors(SENSORS, mech)
    q, qd = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    steps = int(round(t_end / DT))
    rows = {"q": [], "qd": [], "qdd": [], "lam": [], "f": []}
    for k in range(steps + 1):
        torque = motor_torque(k * DT)
        driven = with_actuator_forces(mech, {"motor": torque})
        qs, qds, qdds = integrate(driven, q, qd, DT, 1, ForwardOptions(method="lagrange"))
        for key, value in zip(rows, (q, qd, qdds[0], multipliers(driven, q, qd, qdds[0]), [torque])):
            rows[key].append(np.asarray(value, float))
        q, qd = qs[1], qds[1]
    truth = Truth(t=DT * np.arange(steps + 1), **{key: np.array(value) for key, value in rows.items()})
    return mech, sensors, truth, simulate_readings(sensors.sensors, truth, seed)


def feed(mech, sensors: SensorSet, config: EstimatorConfig, readings: list[Reading],
         clock=time.perf_counter, realtime: bool = False) -> tuple[list[StepEstimate], dict, float]:
    """Every reading through add/advance in order, as fast as possible or, ``realtime``, each at its
    stamp (replay.pacing, as a live node gets them); (estimates, counters, wall seconds)."""
    estimator = OnlineEstimator(mech, sensors, config, clock)
    estimates: list[StepEstimate] = []
    with steady_collection():
        start = time.perf_counter()
        for reading in paced(readings) if realtime else readings:
            estimator.add(reading)
            estimates += estimator.advance(reading.t)
        wall = time.perf_counter() - start
    return estimates, estimator.counters, wall


def accuracy(truth: Truth, estimates: list[StepEstimate]) -> tuple[float, float]:
    """RMSE of the crank angle [rad] and of the motor torque [N·m] after the transient."""
    kept = [e for e in estimates if e.t >= TRANSIENT]
    index = np.round(np.array([e.t for e in kept]) / DT).astype(int)
    crank = wrap_angle(np.array([e.q[4] for e in kept]) - truth.q[index, 4])
    torque = np.array([e.forces["motor"] for e in kept]) - truth.f[index, 0]
    return float(np.sqrt(np.mean(crank**2))), float(np.sqrt(np.mean(torque**2)))
