"""Virtual sensors: readings from a simulated trajectory with the imperfections of real devices.

For a sensor of rate f the sample instants are t_k = t_0 + k/f within the trajectory; the state at
t_k is the trajectory's nearest sample (simulate at a step that divides the sensor periods: then
it is exact). The reading is

    z_k = present(saturate(quantize(h(x(t_k)) + b_k + w_k))),   stamp_k = t_k + j_k,

with white noise w_k ~ N(0, N² f) (density N), bias b_k = bias + Σ_{i≤k} ε_i, ε_i ~ N(0, K²/f)
(random walk K, starting at the configured turn-on bias), quantization to the nearest multiple of
Δ, clipping to the saturation range, the encoders' wrap-around (``present``) and stamp jitter
j_k ~ N(0, σ_j²). Every random draw comes from the generator passed in (seeded by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from estimator.errors import MbstateError
from estimator.model_protocol import Model, actuators
from estimator.timeseries import Trajectory
from sensors.base import Sensor, State
from sensors.messages import Reading


@dataclass(frozen=True)
class Truth:
    """Ground truth at times t (N,): q, q̇, q̈ (N, n), λ (N, m), actuator forces f (N, a) and the external
    wrenches applied on named frames (frame → (N, 6), (m; f) in the frame's axes about its origin; none
    without contact; replay.simulation.contact_truth)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    f: np.ndarray
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def from_trajectory(cls, mech: Model, trajectory: Trajectory,
                        actuator_forces: dict[str, np.ndarray | float] | None = None) -> Truth:
        """From a solved trajectory; ``actuator_forces`` maps actuator names to values (constant or per
        sample), default: the trajectory's forces on each actuator's coordinate, else zero."""
        count, drives = len(trajectory.t), actuators(mech)
        f = np.zeros((count, len(drives)))
        for j, (name, coordinate) in enumerate(drives):
            if actuator_forces and name in actuator_forces:
                f[:, j] = actuator_forces[name]
            else:
                f[:, j] = trajectory.forces.get(trajectory.coordinate_names[coordinate], 0.0)
        lam = np.zeros((count, 0)) if trajectory.lam is None else trajectory.lam
        return cls(t=np.asarray(trajectory.t, float), q=trajectory.q, qd=trajectory.qd, qdd=trajectory.qdd,
                   lam=lam, f=f)

    def state(self, i: int) -> State:
        return State(t=float(self.t[i]), q=self.q[i], qd=self.qd[i], qdd=self.qdd[i], lam=self.lam[i], f=self.f[i],
                     wrenches={name: values[i] for name, values in self.wrenches.items()})

    def sample_indices(self, rate: float, t0: float | None = None, first: int = 0,
                       final: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Sample instants t_k = t0 + k/rate (t0: the first sample's time by default), k ≥ ``first``,
        within the trajectory — before its last sample unless ``final`` (a chunk of a longer run:
        the next chunk starts there) — and the nearest sample of each."""
        t0 = self.t[0] if t0 is None else t0
        t1 = self.t[-1]
        step = float(np.max(np.diff(self.t))) if len(self.t) > 1 else 0.0
        if step > 1.0 / rate * (1.0 + 1e-9):
            raise MbstateError(f"trajectory step {step:g} s is longer than the sensor period {1.0 / rate:g} s")
        last = np.floor((t1 - t0) * rate + 1e-9) if final else np.ceil((t1 - t0) * rate - 1e-9) - 1
        instants = t0 + np.arange(first, int(last) + 1) / rate
        right = np.clip(np.searchsorted(self.t, instants), 1, len(self.t) - 1)
        nearest = np.where(instants - self.t[right - 1] <= self.t[right] - instants, right - 1, right)
        return instants, nearest


class VirtualSensor:
    """One sensor's readings along a truth given whole or in consecutive chunks (each starting at the
    previous one's last sample): sample instants, ``seq``, the bias's random walk and the draws
    from ``rng`` go on from chunk to chunk. Within a chunk the draws come in the order walk, white
    noise, jitter, so a run in one chunk draws as :func:`virtual_readings` always has."""

    def __init__(self, sensor: Sensor, rng: np.random.Generator, t0: float) -> None:
        self.sensor, self.rng, self.t0 = sensor, rng, t0
        self.next = 0  # k of the next sample instant
        self.bias: np.ndarray | float = sensor.params.noise.bias

    def readings(self, truth: Truth, final: bool = True) -> list[Reading]:
        """The readings at the instants of this chunk (module docstring), in sample order."""
        stamps, values, first = self.sample(truth, final)
        name = self.sensor.params.name
        return [Reading(sensor=name, t=float(stamps[k]), seq=first + k, value=values[k]) for k in range(len(stamps))]

    def sample(self, truth: Truth, final: bool = True) -> tuple[np.ndarray, np.ndarray, int]:
        """:meth:`readings` as arrays: stamps (N,), values (N, d) and the first one's ``seq`` (the
        others follow by one), without a Python object per reading."""
        sensor, rng = self.sensor, self.rng
        params, noise = sensor.params, sensor.params.noise
        instants, nearest = truth.sample_indices(params.rate, self.t0, self.next, final)
        count = len(instants)
        if count == 0:
            return np.empty(0), np.empty((0, sensor.dimension)), self.next
        ideal = np.empty((count, sensor.dimension))
        for k, i in enumerate(nearest):  # one sample's objects at a time, not a list of them all
            ideal[k] = sensor.measure(truth.state(i))
        walk = rng.normal(0.0, noise.random_walk / np.sqrt(params.rate), size=ideal.shape)
        bias = self.bias + np.cumsum(walk, axis=0)
        values = ideal + bias + rng.normal(0.0, noise.density * np.sqrt(params.rate), size=ideal.shape)
        if noise.quantum > 0.0:
            values = np.round(values / noise.quantum) * noise.quantum
        if noise.saturation is not None:
            values = np.clip(values, *noise.saturation)
        values = sensor.present(values)
        stamps = instants + rng.normal(0.0, noise.jitter, size=count)
        first, self.next, self.bias = self.next, self.next + count, bias[-1]
        return stamps, values, first


def virtual_readings(sensor: Sensor, truth: Truth, rng: np.random.Generator) -> list[Reading]:
    """The readings of one sensor along ``truth`` (see the module docstring), in sample order."""
    return VirtualSensor(sensor, rng, float(truth.t[0])).readings(truth)


def simulate_readings(sensors: Sequence[Sensor], truth: Truth, seed: int) -> list[Reading]:
    """Readings of every sensor, merged in stamp order; sensor i draws from its own generator
    seeded with (seed, i), so adding a sensor leaves the others' readings unchanged."""
    readings = []
    for index, sensor in enumerate(sensors):
        readings += virtual_readings(sensor, truth, np.random.default_rng([seed, index]))
    return sorted(readings, key=lambda r: r.t)
