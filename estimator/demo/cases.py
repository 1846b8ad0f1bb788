"""The machines ``mbstate demo`` runs (``--mechanism``): each one's packaged files and its ground truth.

- ``fourbar``: the four-bar with a driven crank (fourbar_crank.yaml) following θ(t) = 1.2 (1 − cos 2t)
  rad, by classical inverse dynamics at 1 ms, so the motor torque varies; a coupler IMU, a crank encoder
  and a rocker load cell; the crank torque estimated.
- ``panda``: the Franka Emika Panda arm (panda.urdf) moving each joint i about the arm's ready pose,
  qᵢ(t) = q₀ᵢ + aᵢ (1 − cos ωᵢ t), by RNEA at 1 ms (gravity included); an encoder on every joint; the
  seven drive torques estimated. The ωᵢ are whole multiples of one rate, so the motion repeats.
- ``delta``: the Delta robot (delta.urdf and its sidecar delta.yaml: a spanning tree and five ball-joint
  loop closures, 9 degrees of freedom) with its three motors following qᵢ(t) = aᵢ (1 − cos ωᵢ t) from the
  sidecar's assembled pose, the other six freedoms (the rods' spins about their own axes) moving freely:
  hybrid dynamics at 1 ms (replay.simulation.hybrid_truth), the motor torques its solution. Motor
  encoders and a platform IMU; the three motor torques estimated. The swing stays clear of the
  singular poses: Φq over the passive joints keeps its full rank, well conditioned, along it.

The files are package data (estimator/data), copies of the repository's configs (a test keeps them
identical), so the demo runs from an installed wheel as from the repository.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from estimator.dynamics.inverse import inverse_dynamics
from estimator.model import Mechanism
from estimator.spatial.model import SpatialModel
from estimator.spatial.simulate import inverse_trajectory
from replay.simulation import hybrid_truth
from sensors.virtual import Truth

TRUTH_STEP = 1e-3  # [s], divides every sensor period of the packaged sensor files


def crank_truth(mech: Mechanism, duration: float) -> Truth:
    """Inverse dynamics along θ(t) = 1.2 (1 − cos 2t) (the upstream four-bar's crank motion)."""
    t = _times(duration)
    theta, rate, acceleration = 1.2 * (1.0 - np.cos(2.0 * t)), 2.4 * np.sin(2.0 * t), 4.8 * np.cos(2.0 * t)
    return Truth.from_trajectory(mech, inverse_dynamics(mech, ["theta0"], t, theta, rate, acceleration).trajectory)


PANDA_READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # [rad] the arm's ready pose
PANDA_SWING = np.array([0.4, 0.3, 0.4, 0.35, 0.5, 0.4, 0.6])  # aᵢ [rad]: within the joint limits
PANDA_BEAT = 0.7  # [rad/s]: every ωᵢ a whole multiple of it, the motion's period 2π/PANDA_BEAT
PANDA_PACE = PANDA_BEAT * np.array([1, 2, 2, 1, 3, 2, 3])  # ωᵢ [rad/s]: rates under 1.3 rad/s


def arm_truth(model: SpatialModel, duration: float) -> Truth:
    """RNEA along qᵢ(t) = q₀ᵢ + aᵢ (1 − cos ωᵢ t) (module docstring)."""
    t = _times(duration)[:, None]
    phase = PANDA_PACE * t
    q = PANDA_READY + PANDA_SWING * (1.0 - np.cos(phase))
    qd = PANDA_SWING * PANDA_PACE * np.sin(phase)
    qdd = PANDA_SWING * PANDA_PACE**2 * np.cos(phase)
    return Truth.from_trajectory(model, inverse_trajectory(model, t[:, 0], q, qd, qdd))


DELTA_SWING = np.array([0.25, -0.2, 0.3])  # aᵢ [rad] of the three motors
DELTA_BEAT = 1.2  # [rad/s]: ωᵢ = DELTA_BEAT · (1, 2, 3), the motion's period 2π/DELTA_BEAT
DELTA_PACE = DELTA_BEAT * np.array([1, 2, 3])


def delta_truth(model: SpatialModel, duration: float) -> Truth:
    """Hybrid dynamics with the motors on qᵢ(t) = aᵢ (1 − cos ωᵢ t), the rods' spins free, from rest at the
    sidecar's pose (module docstring)."""
    t = _times(duration)[:, None]
    phase = DELTA_PACE * t
    pos = DELTA_SWING * (1.0 - np.cos(phase))
    vel = DELTA_SWING * DELTA_PACE * np.sin(phase)
    acc = DELTA_SWING * DELTA_PACE**2 * np.cos(phase)
    return hybrid_truth(model, [int(joint) for joint in model.actuated], t[:, 0], pos, vel, acc)


def _times(duration: float) -> np.ndarray:
    return TRUTH_STEP * np.arange(int(round(duration / TRUTH_STEP)) + 1)


@dataclass(frozen=True)
class DemoCase:
    """One machine of the demo: its ``title`` in the summary, its package data files (keys ``mechanism``,
    ``sensors``, ``estimator``, and a URDF's ``sidecar``, which the loader finds beside it), the ``truth``
    the virtual sensors read and that motion's ``period`` [s]."""

    title: str
    files: dict[str, str]
    truth: Callable[[Mechanism | SpatialModel, float], Truth]
    period: float


CASES = {
    "fourbar": DemoCase("four-bar", {"mechanism": "fourbar_crank.yaml", "sensors": "fourbar_sensors.yaml",
                                     "estimator": "fourbar_estimator.yaml"}, crank_truth, np.pi),
    "panda": DemoCase("Panda arm", {"mechanism": "panda.urdf", "sensors": "panda_sensors.yaml",
                                    "estimator": "panda_estimator.yaml"}, arm_truth, 2 * np.pi / PANDA_BEAT),
    "delta": DemoCase("Delta robot", {"mechanism": "delta.urdf", "sidecar": "delta.yaml",
                                      "sensors": "delta_sensors.yaml", "estimator": "delta_estimator.yaml"},
                      delta_truth, 2 * np.pi / DELTA_BEAT),
}
