"""Simulated ground truth for virtual sensors (``mbstate simulate``, the accuracy benchmark).

Two kinds of motion, sampled at a fixed step ``dt`` from t = 0 (sensors.virtual.Truth):

- forward dynamics from a consistent (q0, q̇0) under constant actuator forces (zero by default);
- inverse dynamics along a prescribed trajectory of driven coordinates: the file's samples, their
  derivatives fitted as in ``mbstate inverse`` (estimator.drive_trajectory), are resampled to the step
  by quintic Hermite interpolation (position, velocity and acceleration continuous and consistent),
  and the drive forces are the actuators' truth.

A URDF open chain (estimator.spatial.model.SpatialModel) takes both motions too: forward dynamics
by classical Runge-Kutta 4 on ABA (estimator.spatial.simulate; damping and friction act), inverse
dynamics by RNEA along a trajectory of every joint (damping and friction included); its truth has
no multipliers (λ of size 0, a tree has no constraints). A URDF closed chain (sidecar loops) moves
by estimator.spatial.closed_dynamics: forward, Runge-Kutta of order 6 on the KKT accelerations with
the M-orthogonal projection onto the loops each step (constant forces on its actuators); inverse,
along a trajectory of as many driven joints as it has degrees of freedom (``closed_dynamics.inverse``,
checked before the first chunk: no mobility or another count of drives is one error line); its
truth carries the loop rows' multipliers λ (``lambda.<k>`` in the order of ``mbstate check``'s rows),
and an actuator's force is its joint's drive force (zero when its joint is not driven). A closed chain
with more degrees of freedom than drives (the Delta, whose rods spin) takes hybrid dynamics instead
(``hybrid_truth``: the drives on their samples, the other freedoms free; ``driven_truth`` picks it, for
the accuracy matrix), in one chunk.

A contact (``contact_truth``): a URDF tree moved as by the inverse truth while a wrench schedule
(``WrenchSchedule``) acts on a named frame; the drive torques hold against it and the truth carries it.

The sensors sample the truth (sensors.virtual); a step that divides every sensor period
(``sensor_step``) makes each sample exact. Forward dynamics integrates at a step of at most
``TRUTH_STEP`` whatever the sample step. A long run is simulated and sampled in chunks of
``CHUNK_S`` (``forward_truths``, ``inverse_truths``, ``simulated_records``), so that memory does not
grow with its length; a run of up to ``CHUNK_S`` is one chunk. Forward dynamics restarts each
chunk from the last state (the accelerations recomputed there), which is not bit-identical to
one long integration; inverse dynamics is solved instant by instant, the same either way; the
sensors draw chunk by chunk, so a seed gives other noise than in one chunk (but the same on
every run).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from estimator.drive_trajectory import DriveTrajectory, hermite_resample
from estimator.dynamics.forward import ForwardOptions, simulate
from estimator.dynamics.inverse import inverse_dynamics
from estimator.errors import MbstateError
from estimator.model import Mechanism
from estimator.spatial import assembly, closed_dynamics
from estimator.spatial.dynamics import body_wrenches
from estimator.spatial.model import SpatialModel, joint_order
from estimator.spatial.simulate import inverse_trajectory
from estimator.spatial.simulate import simulate as simulate_spatial
from estimator.timeseries import Trajectory
from sensors.base import Sensor
from sensors.config import SensorSet
from sensors.messages import Reading
from sensors.virtual import Truth, VirtualSensor

CHUNK_S = 60.0  # [s] of simulated time per chunk of a long run (a shorter run is one chunk)
TRUTH_STEP = 2.5e-4  # [s] longest integration step of forward dynamics; samples every dt


Model = Mechanism | SpatialModel
Chunk = Callable[[np.ndarray, np.ndarray, float, int, int], Truth]


def actuator_values(names: Sequence[str], forces: Mapping[str, float]) -> np.ndarray:
    """The actuators' forces in the order of ``names`` from {name: value}, zero where not given;
    MbstateError for an unknown name."""
    for name in forces:
        if name not in names:
            raise MbstateError(f"--forces: unknown actuator '{name}' (known: {', '.join(names) or 'none'})")
    return np.array([float(forces.get(name, 0.0)) for name in names])


def with_actuator_forces(mech: Mechanism, forces: Mapping[str, float]) -> Mechanism:
    """The mechanism with constant forces added on its actuators' coordinates (by actuator name)."""
    values = actuator_values([a.name for a in mech.actuators], forces)
    q_force = mech.arrays.q_force.copy()
    for actuator, value in zip(mech.actuators, values):
        q_force[actuator.coordinate] += value
    q_force.setflags(write=False)
    return dataclasses.replace(mech, arrays=mech.arrays._replace(q_force=q_force))


def sensor_step(sensors: SensorSet) -> float:
    """The shortest sensor period [s]: the default simulation step."""
    return 1.0 / max(s.params.rate for s in sensors.sensors)


def forward_truths(mech: Model, q0: np.ndarray, qd0: np.ndarray, dt: float, t_end: float,
                   forces: Mapping[str, float] | None = None, method: str = "ali3",
                   chunk_s: float = CHUNK_S) -> Iterator[Truth]:
    """Forward dynamics from (q0, q̇0) for ``t_end`` [s] sampled at step ``dt`` under constant actuator
    ``forces`` {name: N or N·m}, which are also the actuators' truth, in chunks of ``chunk_s`` of
    simulated time: each chunk starts from the previous one's last state (and repeats that sample).
    The integration step is dt split into the fewest equal substeps no longer than ``TRUTH_STEP``, so
    that the method's own discretization error (second order for ALi3) stays far below any sensor's
    noise however slow the sensors are: the truth is the mechanism's motion, not the integrator's.
    A spatial model integrates by RK4 on ABA, a closed chain by closed_dynamics.simulate (``method`` is
    not read)."""
    forces = dict(forces or {})
    steps, per = max(1, int(round(t_end / dt))), max(1, int(round(min(chunk_s, t_end) / dt)))
    substeps = max(1, math.ceil(dt / TRUTH_STEP - 1e-9))
    chunk = _spatial_forward(mech, forces) if isinstance(mech, SpatialModel) else _planar_forward(mech, forces, method)
    return _chunked(chunk, q0, qd0, dt, steps, per, substeps)


def _chunked(chunk: Chunk, q0: np.ndarray, qd0: np.ndarray, dt: float, steps: int, per: int,
             substeps: int) -> Iterator[Truth]:
    """:func:`forward_truths`' chunks, each from the last state of the one before."""
    done = 0
    while done < steps:
        count = min(per, steps - done)
        truth = chunk(q0, qd0, dt, count, substeps)
        yield dataclasses.replace(truth, t=truth.t + done * dt) if done else truth
        q0, qd0, done = truth.q[-1], truth.qd[-1], done + count


def _planar_forward(mech: Mechanism, forces: Mapping[str, float], method: str) -> Chunk:
    loaded = with_actuator_forces(mech, forces)

    def chunk(q0: np.ndarray, qd0: np.ndarray, dt: float, count: int, substeps: int) -> Truth:
        trajectory = simulate(loaded, q0, qd0, dt, count, ForwardOptions(method=method), substeps)
        return Truth.from_trajectory(mech, trajectory, {name: float(v) for name, v in forces.items()})

    return chunk


def _spatial_forward(model: SpatialModel, forces: Mapping[str, float]) -> Chunk:
    values = actuator_values(model.actuator_names, forces)
    tau = model.actuation() @ values

    def chunk(q0: np.ndarray, qd0: np.ndarray, dt: float, count: int, substeps: int) -> Truth:
        if model.loops:
            fine = closed_dynamics.simulate(model, q0, qd0, dt / substeps, count * substeps, tau=tau)
        else:
            fine = simulate_spatial(model, q0, qd0, dt / substeps, count * substeps, lambda t: tau)
        every = slice(None, None, substeps)
        return Truth(t=dt * np.arange(count + 1), q=fine.q[every], qd=fine.qd[every], qdd=fine.qdd[every],
                     lam=_multipliers(model, fine)[every], f=np.tile(values, (count + 1, 1)))

    return chunk


def _multipliers(model: SpatialModel, trajectory: Trajectory) -> np.ndarray:
    """λ (N, m) of a closed chain's trajectory, (N, 0) for a tree's."""
    return trajectory.lam if model.loops else np.zeros((len(trajectory.t), 0))


def forward_truth(mech: Model, q0: np.ndarray, qd0: np.ndarray, dt: float, t_end: float,
                  forces: Mapping[str, float] | None = None, method: str = "ali3") -> Truth:
    """:func:`forward_truths` in one chunk."""
    return next(forward_truths(mech, q0, qd0, dt, t_end, forces, method, math.inf))


def inverse_truths(mech: Model, drives: Sequence[str], samples: DriveTrajectory, dt: float,
                   t_end: float, chunk_s: float = CHUNK_S) -> Iterator[Truth]:
    """Inverse dynamics along ``samples`` of the ``drives`` coordinates, from the first sample for
    ``t_end`` [s] (or to the last sample, whichever is first) at step ``dt``, in chunks of
    ``chunk_s`` (each repeating the previous one's last sample; every instant is solved alone). A
    spatial tree's drives are all of its joints (estimator.spatial.model.joint_order), a closed chain's
    as many joints as its degrees of freedom (checked here, at the first sample)."""
    times = sample_times(samples, dt, t_end)
    derivatives = samples.derivatives()
    per = max(1, int(round(min(chunk_s, t_end) / dt)))
    if isinstance(mech, SpatialModel) and mech.loops:
        driven = closed_dynamics.driven_joints(mech, list(drives), "--drive")
        guess = mech.initial.copy()
        guess[driven] = derivatives[0][0]
        closed_dynamics.check_drives(mech, driven, assembly.assemble(mech, guess, driven))
        return _closed_inverse_chunks(mech, driven, samples, derivatives, times, per)
    if isinstance(mech, SpatialModel):
        order = joint_order(mech, list(drives), "--drive")
        derivatives = tuple(values[:, order] for values in derivatives)
    return _inverse_chunks(mech, drives, samples, derivatives, times, per)


def sample_times(samples: DriveTrajectory, dt: float, t_end: float) -> np.ndarray:
    """The instants at step ``dt`` from the first sample for ``t_end`` or to the last sample, whichever is first."""
    end = min(samples.t[0] + t_end, samples.t[-1])
    return samples.t[0] + dt * np.arange(int(np.floor((end - samples.t[0]) / dt + 1e-9)) + 1)


def driven_truth(mech: Model, drives: Sequence[str], samples: DriveTrajectory, dt: float, t_end: float) -> Truth:
    """:func:`inverse_truth`, except for a closed chain with more degrees of freedom than ``drives`` (the
    Delta's rods spin about their own axes): :func:`hybrid_truth` along the samples, resampled as for
    inverse dynamics."""
    if isinstance(mech, SpatialModel) and mech.loops:
        driven = closed_dynamics.driven_joints(mech, list(drives), "--drive")
        guess = mech.initial.copy()
        guess[driven] = samples.values[0]
        if len(driven) < closed_dynamics.check_mobility(mech, assembly.assemble(mech, guess, driven)):
            times = sample_times(samples, dt, t_end)
            return hybrid_truth(mech, driven, times, *hermite_resample(samples.t, *samples.derivatives(), times))
    return inverse_truth(mech, drives, samples, dt, t_end)


def hybrid_truth(model: SpatialModel, driven: Sequence[int], t: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                 acc: np.ndarray) -> Truth:
    """Hybrid dynamics of a closed chain (estimator.spatial.closed_dynamics.hybrid): the ``driven`` joints
    on their samples (N, k) at the times ``t``, the other freedoms free, from the sidecar's pose assembled
    with the driven joints at their first samples and the least-norm rates that agree with theirs."""
    q, qd = model.initial.copy(), np.zeros(model.dof)
    q[list(driven)], qd[list(driven)] = pos[0], vel[0]
    q0, qd0 = closed_dynamics.start_state(model, q, driven, qd, driven)
    return Truth.from_trajectory(model, closed_dynamics.hybrid(model, driven, t, pos, vel, acc, q0, qd0).trajectory)


def _resampled(samples: DriveTrajectory, derivatives: tuple, times: np.ndarray, per: int
               ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(times, positions, velocities, accelerations) of each chunk of ``per`` steps at ``times``."""
    for start in range(0, max(len(times) - 1, 1), per):
        chunk = times[start:start + per + 1]
        yield chunk, *hermite_resample(samples.t, *derivatives, chunk)


def _inverse_chunks(mech: Model, drives: Sequence[str], samples: DriveTrajectory, derivatives: tuple,
                    times: np.ndarray, per: int) -> Iterator[Truth]:
    """:func:`inverse_truths`' chunks of ``per`` steps at ``times``, from the samples' ``derivatives``."""
    for chunk, pos, vel, acc in _resampled(samples, derivatives, times, per):
        if isinstance(mech, SpatialModel):
            yield Truth.from_trajectory(mech, inverse_trajectory(mech, chunk, pos, vel, acc))
        else:
            yield Truth.from_trajectory(mech, inverse_dynamics(mech, drives, chunk, pos, vel, acc).trajectory)


def _closed_inverse_chunks(model: SpatialModel, driven: list[int], samples: DriveTrajectory, derivatives: tuple,
                           times: np.ndarray, per: int) -> Iterator[Truth]:
    """:func:`_inverse_chunks` of a closed chain (estimator.spatial.closed_dynamics.inverse), each chunk
    assembled from the last state of the one before (the same branch)."""
    start = None
    for chunk, pos, vel, acc in _resampled(samples, derivatives, times, per):
        truth = Truth.from_trajectory(model, closed_dynamics.inverse(model, driven, chunk, pos, vel, acc, start).trajectory)
        start = truth.q[-1]
        yield truth


def inverse_truth(mech: Model, drives: Sequence[str], samples: DriveTrajectory, dt: float,
                  t_end: float) -> Truth:
    """:func:`inverse_truths` in one chunk."""
    return next(inverse_truths(mech, drives, samples, dt, t_end, math.inf))


@dataclass(frozen=True)
class WrenchSchedule:
    """A wrench on frame ``frame`` that steps on and off: ``steps`` of (t_on, t_off, (m; f)) [s; N·m, N],
    in the frame's axes about its origin (estimator.spatial.dynamics.body_wrenches), applied for
    t_on ≤ t < t_off (the intervals apart)."""

    frame: str
    steps: tuple[tuple[float, float, np.ndarray], ...]

    def at(self, t: np.ndarray) -> np.ndarray:
        """The wrench (N, 6) at times t (N,)."""
        out = np.zeros((len(t), 6))
        for on, off, wrench in self.steps:
            out[(t >= on) & (t < off)] = wrench
        return out


def contact_truth(model: SpatialModel, drives: Sequence[str], samples: DriveTrajectory, dt: float, t_end: float,
                  schedule: WrenchSchedule) -> Truth:
    """:func:`inverse_truth` of a URDF tree whose tool meets a contact: the joints position-controlled along
    ``samples`` (the motion as without contact), the wrench of ``schedule`` applied on its frame, so that
    the drive torques (the actuators' truth) carry −Jᵀ W and the joint torque sensors feel it
    (sensors.joint_torque); the truth carries the wrench (``Truth.wrenches``), one chunk."""
    if model.loops:
        raise MbstateError(f"contact: {model.name} is a closed chain; a contact truth needs a URDF tree")
    times = sample_times(samples, dt, t_end)
    order = joint_order(model, list(drives), "--drive")
    _, pos, vel, acc = next(_resampled(samples, tuple(values[:, order] for values in samples.derivatives()),
                                       times, len(times)))
    applied = schedule.at(times)
    loads = np.array([body_wrenches(model, {schedule.frame: wrench}) for wrench in applied])
    truth = Truth.from_trajectory(model, inverse_trajectory(model, times, pos, vel, acc, loads))
    return dataclasses.replace(truth, wrenches={schedule.frame: applied})


def simulated_records(truths: Iterable[Truth], sensors: Sequence[Sensor], seed: int
                      ) -> Iterator[tuple[str, Any]]:
    """``("truth", State)`` at every step and ``("reading", Reading)`` of every sensor (sensor i
    drawing from its own generator seeded with (seed, i)), in time order, chunk by chunk: what
    comes after a chunk's end minus ``hold`` (ten times the largest stamp jitter) waits for the
    next chunk, so that jittered stamps stay in order across the seam. Ties: truth first, then
    sensor order, then seq — the order of sensors.virtual.simulate_readings. A chunk is held as
    arrays (its truth, each sensor's stamps and values); a record becomes an object only as it is
    yielded."""
    hold = 10.0 * max((s.params.noise.jitter for s in sensors), default=0.0)
    virtual: list[VirtualSensor] = []
    pending: list[tuple[tuple[float, int, int, int], tuple[str, Any]]] = []
    chunks = iter(truths)
    truth = next(chunks)
    while truth is not None:
        following = next(chunks, None)
        final = following is None
        if not virtual:
            virtual = [VirtualSensor(s, np.random.default_rng([seed, i]), float(truth.t[0]))
                       for i, s in enumerate(sensors)]
            first = 0
        else:
            first = 1  # the previous chunk's last sample
        chunk = _Chunk(truth, first, [(s.params.name, *v.sample(truth, final)) for s, v in zip(sensors, virtual)],
                       pending)
        order = chunk.order()
        cut = len(order) if final else int(np.searchsorted(chunk.t[order], float(truth.t[-1]) - hold))
        for row in order[:cut]:
            yield chunk.record(row)
        pending = [(chunk.key(row), chunk.record(row)) for row in order[cut:]]
        del chunk, order  # this chunk's arrays go before the next one is simulated
        truth = following


class _Chunk:
    """One chunk's records as arrays: sort keys (t, kind: 0 truth 1 reading, sensor index, seq) and
    where each record's payload is (the held-over records of the previous chunk, the truth's
    samples from ``first``, each sensor's ``(name, stamps, values, first seq)``)."""

    def __init__(self, truth: Truth, first: int, samples: list[tuple[str, np.ndarray, np.ndarray, int]],
                 pending: list[tuple[tuple[float, int, int, int], tuple[str, Any]]]) -> None:
        self.truth, self.samples, self.pending = truth, samples, pending
        held = np.array([key for key, _ in pending], float).reshape(-1, 4)
        truth_rows = np.arange(first, len(truth.t))
        parts = [(held[:, 0], held[:, 1], held[:, 2], held[:, 3], np.full(len(held), -1), np.arange(len(held))),
                 (truth.t[first:], np.zeros(len(truth_rows)), np.zeros(len(truth_rows)), np.zeros(len(truth_rows)),
                  np.zeros(len(truth_rows), int), truth_rows)]
        for index, (_, stamps, _, seq0) in enumerate(samples):
            count = len(stamps)
            parts.append((stamps, np.ones(count), np.full(count, index), seq0 + np.arange(count),
                          np.full(count, index + 1), np.arange(count)))
        self.t, self.kind, self.index, self.seq, self.source, self.row = (
            np.concatenate(columns) for columns in zip(*parts))

    def order(self) -> np.ndarray:
        """The records' rows in (t, kind, sensor, seq) order."""
        return np.lexsort((self.seq, self.index, self.kind, self.t))

    def key(self, i: int) -> tuple[float, int, int, int]:
        return float(self.t[i]), int(self.kind[i]), int(self.index[i]), int(self.seq[i])

    def record(self, i: int) -> tuple[str, Any]:
        source, row = int(self.source[i]), int(self.row[i])
        if source < 0:
            return self.pending[row][1]
        if source == 0:
            return "truth", self.truth.state(row)
        name, stamps, values, seq0 = self.samples[source - 1]
        return "reading", Reading(sensor=name, t=float(stamps[row]), seq=seq0 + row, value=values[row])
