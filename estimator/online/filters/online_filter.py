"""A filter behind the online estimator's interface (estimator.online.estimator.OnlineEstimator: ``add``,
``advance`` with ``final``, ``reset``, ``counters``, ``started``, ``observability``), so that the node,
replay and the lab run it on the same readings (``estimator.kind`` in the configuration).

Time grid, start-up and readings as for the smoother: steps t_k = t0 + k h; readings are buffered until
every usable sensor has reported (or ``startup_timeout``) and ``startup_span`` has passed, t0 is then the
middle of the span and the start state is solved from the buffer by estimator.online.startup (the same
code as the smoother's), with the prior σ ``position_sigma`` and ``velocity_sigma`` on z and ż. A reading
attaches to its nearest step and is used when that step is processed (t_k + delay_steps·h reached);
the filter corrects step k with the readings of step k only, evaluated at t_k (the stamp's offset from
t_k, at most h/2, is not carried: readings on the grid's instants are exact), so a reading of a step
already processed is ``late``. Step k > 0: prediction from step k − 1, then the correction.

Not carried by the filters: unknown forces (``unknown_forces`` must be empty: an error; likewise
``gravity_sigma``, ``mass_sigma``, ``length_sigma``, ``friction_sigma``, ``force_noise`` and a
non-zero ``output_delay``), sensors' bias states (the bias is taken as zero), robust losses, load
cells on λ (``ignored``). Estimates: q, q̇ and q̈ of the model at the corrected state, λ from the
equations of motion there, σ of q and q̇ from the covariance when ``publish_sigmas``; a filter whose state
has ``model`` and ``wrenches`` (the momentum observer) publishes them too (none for the others). Every update
covers one step (no degradation or coalescing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from estimator.errors import MbstateError
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.keys import TimeGrid, drop_oldest
from estimator.factors.observation_stack import SensorTerm, sensor_term
from estimator.kinematics import AssemblyError
from estimator.model_protocol import Model, actuators, constraint_count, multipliers
from estimator.online.config import AUTO, EstimatorConfig
from estimator.online.filters.error_ekf import ErrorEKF, Measurement
from estimator.online.filters.momentum_observer import MomentumObserver
from estimator.online.filters.null_jerk import NullJerkKF
from estimator.online.filters.ukf import UnscentedKF
from estimator.online.interface import COUNTERS, RESTARTS, StepEstimate
from estimator.online.startup import KnownVelocity, initial_state, start_anchor
from sensors.config import SensorSet
from sensors.messages import Reading

log = logging.getLogger(__name__)
FILTERS = {"error_ekf": lambda mech, config, sensors: ErrorEKF(mech, config.acceleration_density),
           "ukf": lambda mech, config, sensors: UnscentedKF(mech, config.acceleration_density),
           "null_jerk": lambda mech, config, sensors: NullJerkKF(mech, config.filter_jerk_walk),
           "momentum_observer": MomentumObserver}  # kind → the filter of a model, its configuration and sensors


class OnlineFilter:
    """See the module docstring; the filter by ``config.kind``."""

    def __init__(self, mech: Model, sensors: SensorSet, config: EstimatorConfig,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        if config.kind not in FILTERS:
            raise MbstateError(f"estimator.kind: {config.kind!r} is not a filter (filters: {', '.join(FILTERS)})")
        if config.unknown_forces:
            raise MbstateError(f"estimator.unknown_forces: the {config.kind} filter does not estimate forces "
                               f"(got {', '.join(config.unknown_forces)}); use kind: smoother")
        for key, name in (("gravity_sigma", "the gravity error"), ("mass_sigma", "the mass errors"),
                          ("length_sigma", "the length errors"), ("friction_sigma", "friction")):
            if getattr(config, key) not in (None, AUTO):
                raise MbstateError(f"estimator.{key}: the {config.kind} filter does not estimate {name}; "
                                   "use kind: smoother")
        if config.force_noise:
            raise MbstateError(f"estimator.force_noise: the {config.kind} filter's process noise is "
                               "acceleration_noise alone; use kind: smoother")
        if config.output_delay:
            raise MbstateError(f"estimator.output_delay: the {config.kind} filter publishes each step as it comes "
                               "(it keeps no window to smooth); use kind: smoother")
        self.mech, self.sensors, self.config, self.clock = mech, sensors, config, clock
        self.layout = EstimationLayout(mech.n, (), (), tuple(s.dimension if s.params.bias_state else 0
                                                             for s in sensors.sensors))
        self._terms: dict[str, SensorTerm | None] = {
            s.params.name: sensor_term(s, i, self.layout, constraint_count(mech), len(actuators(mech)))
            for i, s in enumerate(sensors.sensors)}
        self._assembled = start_anchor(mech, config.initial_state)
        self._counters = dict.fromkeys(COUNTERS, 0)
        self.observability = None
        self.reset()
        self._counters["resets"] = 0

    @property
    def started(self) -> bool:
        return self._grid is not None

    @property
    def counters(self) -> dict[str, int]:
        """As OnlineEstimator.counters (the filter never degrades: level 0)."""
        return {**self._counters, "level": 0}

    def reset(self, reason: str | None = None) -> None:
        """Back to start-up, counters kept; counted under ``reason`` (as OnlineEstimator.reset; no flag)."""
        self._grid: TimeGrid | None = None
        self._buffer: list[Reading] = []
        self._first: float | None = None
        self._next = 0
        self._pending: dict[int, list[Measurement]] = {}
        self._pending_count = 0
        self._filter = FILTERS[self.config.kind](self.mech, self.config, self.sensors)
        self._counters[RESTARTS.get(reason, "resets")] += 1

    def add(self, reading: Reading) -> str:
        """Take one validated reading; its disposition (pending, late, dropped, ignored)."""
        self._counters["readings"] += 1
        if self._terms.get(reading.sensor) is None:
            return self._count("ignored")
        if self._grid is None:
            self._first = reading.t if self._first is None else self._first
            self._buffer.append(reading)
            if len(self._buffer) > self.config.max_pending:
                self._buffer.pop(0)
                self._counters["dropped"] += 1
            return self._count("pending")
        return self._attach(reading)

    def advance(self, sensor_time: float, final: bool = False) -> list[StepEstimate]:
        """Process every due step (t_k + delay ≤ ``sensor_time``); ``final`` changes nothing (one step per update)."""
        if self._grid is None and not self._start(sensor_time):
            return []
        due = int(np.floor((sensor_time - self._grid.t0) / self._grid.dt - self.config.delay_steps + 1e-9))
        estimates = []
        while self._next <= due:
            estimates.append(self._step(self._next))
            self._next += 1
        return estimates

    def _count(self, disposition: str) -> str:
        self._counters[disposition] += 1
        return disposition

    def _attach(self, reading: Reading) -> str:
        k = self._grid.step(reading.t)
        if k < self._next:
            return self._count("late")
        term = self._terms[reading.sensor]
        dimension = term.sensor.dimension
        covariance = (term.sigma ** 2 * np.eye(dimension) if reading.cov is None
                      else np.asarray(reading.cov, float).reshape(dimension, dimension))
        self._pending.setdefault(k, []).append(Measurement(term.sensor, np.asarray(reading.value, float).reshape(-1),
                                                           covariance))
        self._pending_count += 1
        if self._pending_count > self.config.max_pending:
            drop_oldest(self._pending)
            self._pending_count -= 1
            self._counters["dropped"] += 1
        return self._count("pending")

    def _start(self, sensor_time: float) -> bool:
        """The smoother's start-up rule and solution (module docstring); True once started."""
        if not self._buffer:
            return False
        by_sensor: dict[str, list[Reading]] = {}
        for reading in self._buffer:
            by_sensor.setdefault(reading.sensor, []).append(reading)
        usable = {name for name, term in self._terms.items() if term is not None}
        waited = sensor_time - self._first
        if (set(by_sensor) != usable and waited < self.config.startup_timeout) or waited < self.config.startup_span:
            return False
        t0 = max(self._first, max(r.t for r in self._buffer) - 0.5 * self.config.startup_span)
        x0, _ = initial_state(self.mech, self.layout, by_sensor, self._terms, t0, self._assembled,
                              KnownVelocity.of(self.config))
        n = self.mech.n
        self._filter.start(x0[:n], x0[n:2 * n], self.config.position_sigma, self.config.velocity_sigma)
        self._grid = TimeGrid(t0, self.config.dt)
        buffer, self._buffer = self._buffer, []
        for reading in buffer:
            if reading.t >= t0 - 0.5 * self.config.dt:
                self._counters["pending"] -= 1  # counted again by _attach
                self._attach(reading)
        return True

    def _step(self, k: int) -> StepEstimate:
        """Predict to step k (k > 0), correct with its readings, and the estimate."""
        start = self.clock()
        if k > 0:
            self._filter.predict(self.config.dt)
        measurements = self._pending.pop(k, [])
        self._pending_count -= len(measurements)
        try:
            self._filter.correct(measurements)
        except AssemblyError as exc:
            log.warning("step %d: correction out of the mechanism's reach, not applied (%s)", k, exc)
        state = self._filter.state
        sigma = None
        if self.config.publish_sigmas:
            sigma_q, sigma_qd = self._filter.sigmas()
            sigma = {"q": sigma_q, "qd": sigma_qd, "forces": np.zeros(0)}
        lam = multipliers(self.mech, state.q, state.qd, state.qdd)
        self._counters["steps"] += 1
        return StepEstimate(step=k, t=self._grid.time(k), q=state.q.copy(), qd=state.qd.copy(),
                            qdd=state.qdd.copy(), forces={}, lam=lam, sigma=sigma, latency=self.clock() - start,
                            update_steps=1, flags=("startup",) if k == 0 else (),
                            model=getattr(state, "model", {}), wrenches=getattr(state, "wrenches", {}))
