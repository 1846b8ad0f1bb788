"""Simulated ground truth for virtual sensors (``mbstate simulate``, the accuracy benchmark).

Two kinds of motion, sampled at a fixed step ``dt`` from t = 0 (sensors.virtual.Truth):

- forward dynamics from a consistent (q0, q̇0) under constant actuator forces (zero by default);
- inverse dynamics along a prescribed trajectory of driven coordinates: the file's samples, their
  derivatives fitted as in ``mbstate inverse`` (estimator.drive_trajectory), are resampled to the step
  by quintic Hermite interpolation (position, velocity and acceleration continuous and consistent),
  and the drive forces are the actuators' truth.

The sensors sample the truth (sensors.virtual.simulate_readings); a step that divides every sensor
period (``sensor_step``) makes each sample exact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from estimator.drive_trajectory import DriveTrajectory, hermite_resample
from estimator.dynamics.forward import ForwardOptions, simulate
from estimator.dynamics.inverse import inverse_dynamics
from estimator.errors import MbstateError
from estimator.model import Mechanism
from sensors.config import SensorSet
from sensors.virtual import Truth


def with_actuator_forces(mech: Mechanism, forces: Mapping[str, float]) -> Mechanism:
    """The mechanism with constant forces added on its actuators' coordinates (by actuator name)."""
    names = {a.name: a.coordinate for a in mech.actuators}
    q_force = mech.arrays.q_force.copy()
    for name, value in forces.items():
        if name not in names:
            raise MbstateError(f"--forces: unknown actuator '{name}' (known: {', '.join(names) or 'none'})")
        q_force[names[name]] += value
    q_force.setflags(write=False)
    return dataclasses.replace(mech, arrays=mech.arrays._replace(q_force=q_force))


def sensor_step(sensors: SensorSet) -> float:
    """The shortest sensor period [s]: the default simulation step."""
    return 1.0 / max(s.params.rate for s in sensors.sensors)


def forward_truth(mech: Mechanism, q0: np.ndarray, qd0: np.ndarray, dt: float, t_end: float,
                  forces: Mapping[str, float] | None = None, method: str = "ali3") -> Truth:
    """Forward dynamics from (q0, q̇0) for ``t_end`` [s] at step ``dt`` under constant actuator
    ``forces`` {name: N or N·m}, which are also the actuators' truth."""
    forces = dict(forces or {})
    steps = max(1, int(round(t_end / dt)))
    trajectory = simulate(with_actuator_forces(mech, forces), q0, qd0, dt, steps, ForwardOptions(method=method))
    return Truth.from_trajectory(mech, trajectory, {name: float(v) for name, v in forces.items()})


def inverse_truth(mech: Mechanism, drives: Sequence[str], samples: DriveTrajectory, dt: float,
                  t_end: float) -> Truth:
    """Inverse dynamics along ``samples`` of the ``drives`` coordinates, from the first sample for
    ``t_end`` [s] (or to the last sample, whichever is first) at step ``dt``."""
    end = min(samples.t[0] + t_end, samples.t[-1])
    times = samples.t[0] + dt * np.arange(int(np.floor((end - samples.t[0]) / dt + 1e-9)) + 1)
    pos, vel, acc = hermite_resample(samples.t, *samples.derivatives(), times)
    return Truth.from_trajectory(mech, inverse_dynamics(mech, drives, times, pos, vel, acc).trajectory)
