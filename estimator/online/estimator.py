"""The online estimator: readings in, one state estimate per grid step out, on GTSAM's incremental
fixed-lag smoother (estimator.smoother). The node (sockets) and replay (a log) drive it the same way:
``add`` each reading in arrival order, then ``advance`` to the newest stamp seen; no wall-clock
time enters the numbers (only the latency and, through it, the degradation decisions).

Model. Any model of estimator.model_protocol, a planar Mechanism or a URDF tree (SpatialModel): what the
estimator asks of it (constraint rows, independent coordinates, assembly, the acceleration noise's
metric, the model-error states' terms) are the protocol's members, so one code path serves both. A tree
has no constraint rows (z = q) and, for now, no model-error states, observability check or kinematics-only
mode (docs/spatial.md, "The online estimator on a tree"); its unknown load is the payload state θ
(EstimatorConfig ``payload``, estimator.spatial.payload).

Time grid. Steps t_k = t0 + k h, h = 1/rate, in sensor time; t0 is set at start-up. Step k is
processed once the newest sensor time reaches t_k + delay_steps·h (default half a step: the
readings that attach to k have then arrived when stamps arrive in order).

Graph per step (estimator.factors.estimation_state): a stacked state x_k = [q; q̇; q̈; F; g; …; θ; Ḟ; b; w; λ]
(w: the external wrenches on the frames of EstimatorConfig ``wrenches``, estimator.online.wrench_states)
with one factor holding the model rows (constraints and dynamics) AND the step's readings
(estimator.factors.observation_stack), one native linear factor with the integrator on the independent
coordinates z = q[I] (at the start the actuated coordinates when valid, else the angles:
estimator.kinematics.suggested_independent; checked at each step's prediction and switched where they
become ill-conditioned, so the partition is a property of the step: estimator.online.partitions), the
force model's rows (F a random walk, or the integral of Ḟ, a random walk, or F free and the driven z̈
a random walk) and the random walks of g, b and w, and at step 0 a native prior from the start-up
solution (estimator.online.startup). Only s_k = [z; ż; z̈; F; g; Ḟ; b; w] is a GTSAM variable: the other
columns (dependent q, q̇, q̈ and λ) meet their own step's factor alone and are eliminated from it
before GTSAM sees it, and read back through the step's lift (estimator.factors.reduced_state). The
step's factor is linearized at the step's prediction; without relinearization (the default,
``relinearize_threshold`` null) it is added as that native linear factor, else as a Python factor that
GTSAM can evaluate at a new linearization point. The native factor has no Python callback in GTSAM's
update.

Relinearization. Without ``relinearize_threshold`` each step factor is linearized once; after an
update the rows of the window's newest and oldest steps are evaluated at their estimates (the newest
moves most with its readings; the oldest is frozen into the marginal next, after the later readings
smoothed it), and where the part of their linearization error that reaches s (what the eliminated
columns do not absorb) exceeds ``linearization_tolerance`` (in σ of the rows) that step's factor is
swapped, in GTSAM, for one linearized at its estimate and the update is repeated (at most
``max_relinearizations`` times): Gauss-Newton while the estimate is far from the readings
(start-up, a jump), two evaluations per update once it tracks. Only the two ends are checked and
swapped: a step between them is checked when it is the oldest, and a relinearization costs two
steps' rows, not the window's. Swapping the newest factor changes only the root of iSAM2's tree;
swapping the oldest re-eliminates the whole window. So when the oldest is off, the next steps at the
old end (``OLD_END_SHARE`` of the window; all of a window shorter than ``SHORT_WINDOW``) are checked
too and those off are swapped with it, in the same update: they are then found in tolerance when
they become the oldest, and the window is re-eliminated once for all of them instead of once per step
(tight model rows, whose tolerance is tight too, otherwise pay that at nearly every step). A window
that short (10 steps at 1 kHz) leaves the steps between its ends linearized at their predictions, far
from a start the readings are still pulling over, and marginalizes them within a few milliseconds:
the model-error states (EstimatorConfig) then take that start's error up as the model's, unless the
whole window is linearized again (Gauss-Newton on the window while it is far off).

Process noise. The integrator rows carry the white acceleration the model does not explain
(``acceleration_noise`` A, estimator.online.config: covariance A² h on ż and A² h³/12 on z along the
mechanism's motion, isotropic in the bodies' angular accelerations and seen through z, the same whichever
coordinates are picked: estimator.online.drafting.Drafter.weighted; auto: matched to what the model leaves
unexplained, estimator.online.acceleration_noise), so the readings
can pull the trajectory off the discrete model's; a start the position sensors do not fix is fitted to
the other readings (estimator.online.startup.readings_position: an IMU's accelerometers), with the σ
they fix it to, and where they do not either gets the wide ``guess_sigma`` prior on z (auto: the file's
pose turned by GUESS_ANGLE, estimator.online.scales). The walks of the
unknown forces and of the driven accelerations have the densities their estimates show
(estimator.online.walk_scale, ``auto``), the process factors built again as those move.

Steps drafted ahead. Once the estimates of an update are out (at the next ``add``), the steps of the
next update (one, or c when coalescing, see Load) are drafted: each one's initial guess predicted
from the states before it (solved, or the guess of the step before in the same update), its model
rows linearized there and its process factor built (``DraftStep``); each of its readings is
linearized at the guess on arrival (observation_stack.LinearizedStep). When the steps are due, the
update only stacks those rows into each step's factor (the native one, or a Python factor whose
memory holds that linearization, estimator.factors.frozen) and runs the smoother, asking GTSAM for
the states it outputs and predicts from only. The same rows, computed earlier: the numbers do not
change (tested), and the work moves out of the update's latency. The window's estimate (for a solver recovery) and a
garbage collection that falls due are computed there too, between steps (estimator.smoother,
estimator.collector).

Output. The estimate of step k is published with the update of step k + ``output_delay`` (0: its
own), read from the window then (the states that update asks GTSAM for reach back to it); the steps
still held back when the input ends (``advance`` with ``final``) are published then.

Readings. A reading attaches to its nearest step, evaluated at its own stamp through the step's
derivatives (the Taylor shift of observation_stack; no interpolating factor). Disposition:
``pending`` for a step not yet processed (in the step's factor later); ``used`` for a processed step
still in the window (steps newest − lag … newest: its own factor, added with the next update);
``late`` for older steps (counted, logged at debug level, not used); ``dropped`` is counted when the
pending buffer (``max_pending`` readings) is full and the oldest pending reading is discarded (the
new one is still ``pending``); ``ignored``: a reading the state cannot use (a load cell on λ without
dynamics, a known actuator) or one from before the grid's start; ``outlier``: a reading the gate
(estimator.online.outliers, EstimatorConfig Outliers) refused, not used.

Start-up. Readings are buffered until every usable sensor has reported once (or ``startup_timeout``
of sensor time has passed since the first) and ``startup_span`` of sensor time has passed; t0 is then
the middle of the span, and the initial state and the forces' prior are solved from the buffer
(estimator.online.startup: the encoders fitted over the span). Readings stamped before t0 − h/2 served only
the start-up; the later ones attach to the steps from t0 on.
The sensors' observability is checked there (estimator.online.observability): directions they cannot see
are logged once as a warning and flag every estimate ``unobservable``. A start-up that fails (a
non-finite state, a singular fit, a mechanism that does not assemble) drops its buffer (counted in
``dropped`` and ``startup_failures``) and starts again from the readings that follow.

Solver failure. When the smoother fails twice in a row (estimator.smoother.SolverFailure), or an
estimate of the update's steps is not finite or is off its model rows by more than IMPLAUSIBLE σ
(the solver has left the mechanism; σ of the rows, or the defaults' where the configured ones are
tighter: the estimate's own lift is off the rows to second order in its update, which tighter rows
do not shrink), the steps of that update are not published (those of earlier
updates that ``output_delay`` still holds back are, from their last estimates) and the estimator
goes back to start-up (``reset`` with reason ``reinitialized``, counted in ``reinitializations``):
the next ``startup_span`` of readings gives a new grid and start state, as after the ``reset``
command (step numbers from 0), and the estimates of its first window are flagged
``reinitialized``. The run never ends on a solver failure. ``reset`` with reason ``resync`` is the
same restart when the sensors' time has moved (estimator.node.intake, flag ``resync``).

Load (estimator.online.governor). Every update is timed with the injected ``clock``, from the
moment its steps are due (the graph is built from their drafts) to their estimates (smoother update,
estimate, outputs); the latency of each step it covered is its share, the update's time divided by
the number of those steps, and a step whose share exceeds ``latency_budget_ms`` is an overrun.
Degradation, one level at a time: an update with overruns raises the level; after
``recover_steps`` calm steps whose mean share is under ``recover_fraction`` of the budget it is
lowered by one (counted in ``recoveries``, flag ``recovered``). Level 1 ("degraded"): no marginal
sigmas and, with relinearization on, factors answer relinearizations from their last linearization
(estimator.factors.frozen); level L ≥ 2 also coalesces c = min(L, max_coalesce) grid steps into one
smoother update ("coalesced": the first c − 1 steps wait for the last), all c drafted ahead, so the
per-step cost falls with c (estimator.benchmarks.node reports it). A level that changes nothing is
skipped. Pending readings are bounded, so the input never grows without limit. With a clock that
does not advance (replay.clocks.FixedClock) every latency is 0 and replay is fully deterministic.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

import gtsam
import numpy as np

from estimator.collector import collect_if_due
from estimator.dynamics.inverse import drive_forces_at
from estimator.errors import MbstateError, one_line
from estimator.factors.adapter import gtsam_factor
from estimator.factors.estimation_state import EstimationLayout, prior_relation
from estimator.factors.frozen import FreezeSwitch, freezable
from estimator.factors.keys import X, TimeGrid
from estimator.factors.native import linearized_factor
from estimator.factors.observation_stack import (LinearizedStep, Observation, SensorTerm, sensor_term,
                                                 squared_innovation, stacked_step_error, whitened_reading)
from estimator.factors.reduced_state import Lift, StepRelation, Unresolved
from estimator.kinematics import AssemblyError
from estimator.model_protocol import (Model, actuators, constraint_count, independent_coordinates, independent_rows,
                                      model_errors, payload_terms)
from estimator.online.acceleration_noise import AccelerationNoise
from estimator.online.config import EstimatorConfig
from estimator.online.drafting import Drafter, DraftStep
from estimator.online.governor import LoadGovernor
from estimator.online.interface import COUNTERS, PAYLOAD_KEYS, RESTARTS, StepEstimate
from estimator.online.mass_states import mass_terms
from estimator.spatial.payload import published as payload_published
from estimator.online.observability import ObservabilityReport, observability
from estimator.online.outliers import OutlierGate
from estimator.online.partitions import Partitions
from estimator.online.readings import StepReadings
from estimator.online.scales import guess_sigma
from estimator.online.startup import (KnownVelocity, determines_position, initial_state, position_motions,
                                      readings_position, start_anchor)
from estimator.online.step_model import step_model
from estimator.online.walk_scale import AdaptiveWalks
from estimator.online.wrench_states import wrench_frames, wrench_walk
from estimator.smoother import FixedLagSmoother, SmootherOptions, SolverFailure
from estimator.spatial.link_masses import LinkMassTerms
from sensors.base import Sensor
from sensors.config import SensorSet
from sensors.messages import Reading

log = logging.getLogger(__name__)
IMPLAUSIBLE = 1e6  # [σ of the model rows, the defaults' or looser: StepModel.off_by] an estimate off by more has failed
OLD_END_SHARE = 0.1  # the share of the window at its old end swapped together (module docstring, Relinearization)
SHORT_WINDOW = 0.05  # [s] a window (lag / rate) shorter than this: its old end is all of it (ibid.)


class OnlineEstimator:
    """See the module docstring. Its parts: ``model`` (the step's model rows), ``terms`` (each sensor's
    rows, by sensor name; None for one the state cannot use), ``drafter``, ``readings`` (attached to
    their steps), ``gate`` (outliers), ``governor`` (load), ``smoother`` and, once started, ``grid``."""

    def __init__(self, mech: Model, sensors: SensorSet, config: EstimatorConfig,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        named = actuators(mech)
        forces = named_indices("unknown_forces", config.unknown_forces, [name for name, _ in named], "actuator")
        dynamics = config.dynamics
        if not dynamics and not constraint_count(mech):
            raise MbstateError("estimator.dynamics: false (kinematics only) needs constraints, and the model "
                               "has none: its only model rows are its dynamics")
        assembled = start_anchor(mech, config.initial_state)
        rows = tuple(int(r) for r in independent_rows(mech, assembled))
        gravity, masses, lengths = model_errors(mech, rows)
        states = lengths is not None  # False: a URDF model, whose only terms are its link masses: auto leaves all off
        config = config.with_model_states(gravity=gravity, masses=states and len(masses.names) >= 2,
                                          lengths=states and bool(lengths.names), friction=states)
        explicit = [key for key in ("gravity_sigma", "length_sigma") if getattr(config, key) is not None]
        if explicit and not states:
            raise MbstateError(f"estimator.{explicit[0]}: the gravity and length error states are planar only for "
                               "now (issue 39): the model has no terms for them; leave it auto (null here)")
        self.mech, self.sensors, self.config, self.clock = mech, sensors, config, clock
        self.masses = mass_terms(masses, sensors.sensors) if config.mass_sigma is not None else None
        if self.masses is not None and len(self.masses.names) < 2:
            raise MbstateError("estimator.mass_sigma: the mass errors move mass between bodies, and the "
                               f"mechanism has {len(self.masses.names)} body with mass")
        self.lengths = lengths if config.length_sigma is not None else None
        self.frames = wrench_frames(mech, config)  # the external wrenches' frames (estimator.online.wrench_states)
        independent = tuple(int(i) for i in independent_coordinates(mech, assembled, len(rows)))
        self.force_coordinates = [named[j][1] for j in forces]
        config = config.with_force_model(jerk_applies=all(c in independent for c in self.force_coordinates))
        self.config = config
        self.frictions = friction_coordinates(mech, config, independent)
        self.payload = None if config.payload is None else payload_terms(mech, config.payload)
        self.payload_sizes = (config.payload_sigmas(self.payload.body_mass, self.payload.reach) if self.payload
                              else (np.zeros(0), np.zeros(0)))  # (start σ, walk densities) of θ
        self.layout = EstimationLayout(mech.n, rows if dynamics else (), forces if dynamics else (),
                                       tuple(s.dimension if s.params.bias_state else 0 for s in sensors.sensors),
                                       gravity=config.gravity_sigma is not None,
                                       independent=independent if rows else None,  # no rows: z = q
                                       force_rates=config.force_model == "smooth",
                                       masses=0 if self.masses is None else len(self.masses.names),
                                       lengths=0 if self.lengths is None else len(self.lengths.names),
                                       frictions=self.frictions, payload=self.payload is not None,
                                       wrenches=config.wrenches)
        self.terms: dict[str, SensorTerm | None] = {
            s.params.name: sensor_term(self._reading_states(s), i, self.layout, constraint_count(mech), len(named))
            for i, s in enumerate(sensors.sensors)}
        off = [mech.coordinate_names[c] for c in self.force_coordinates if c not in self.layout.integrated]
        if dynamics and config.force_model == "jerk" and off:
            raise MbstateError(f"estimator.force_model jerk: the unknown forces must act on independent "
                               f"coordinates, and {off[0]!r} is not one (independent: "
                               f"{', '.join(mech.coordinate_names[i] for i in self.layout.integrated)})")
        self.model = step_model(mech, self.layout, config, rows, self.force_coordinates, self.masses, self.lengths,
                                self.payload, self.frames)
        jerk = dynamics and config.force_model == "jerk"
        self.partitions = Partitions(mech, self.layout, rows, config.integrator_order,
                                     self.force_coordinates if jerk else ())
        self.drafter = Drafter(config, self.layout, self.partitions, self.model, sensors.sensors,
                               self.force_coordinates,
                               None if self.frames is None else wrench_walk(self.frames, assembled, config),
                               self.payload_sizes[1])
        self.walks = AdaptiveWalks(config, self.layout, self.drafter)
        self.acceleration_noise = AccelerationNoise(config, self.layout, self.drafter, self.partitions)
        self._freeze = FreezeSwitch()
        self._unit: dict[int, gtsam.noiseModel.Base] = {}
        self._counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.governor = LoadGovernor(config, self._counters, self._freeze)
        self.reset()
        self._counters["resets"] = 0
        self._assembled = assembled
        self._warm_up(assembled)

    def _warm_up(self, q: np.ndarray) -> None:
        """Evaluate the step factor once with a reading of every sensor, so that the compiled kernels are
        loaded (or compiled) here and not in the first steps."""
        x = np.zeros(self.layout.size)
        x[:self.layout.n] = q
        observations = [Observation(term, np.zeros(term.sensor.dimension), term.whitening(None), 0.5 * self.config.dt)
                        for term in self.terms.values() if term is not None]
        stacked_step_error(self.model.rows, self.model.weights, observations)(x)

    # ---- interface ------------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self.grid is not None

    @property
    def counters(self) -> dict[str, int]:
        """Totals since construction (kept by ``reset``), with the current degradation ``level``:
        readings (all added), their dispositions pending/used/late/dropped/ignored, steps processed,
        overruns (steps over the latency budget), degraded_steps, coalesced_steps, recoveries (level
        lowered), solver_recoveries (smoother restarts, estimator.smoother), resets, resyncs and
        reinitializations (``reset`` by reason), startup_failures, outlier (readings the gate refused)."""
        return {**self._counters, "level": self.governor.level}

    @property
    def next_step(self) -> int:
        """The first grid step not yet processed."""
        return self._next

    def reset(self, reason: str | None = None) -> None:
        """Back to start-up: buffers, window and degradation level cleared, counters kept. ``reason``:
        None (the reset command), ``resync`` (the sensors' time moved, estimator.node.intake),
        ``caught_up`` (the node skipped a backlog of its input, estimator.node.backlog) or
        ``reinitialized`` (the solver failed): counted under its own name, and the estimates of the first
        window after the next start-up carry it as a flag."""
        self._reason = reason
        self.gate = OutlierGate(self.config)
        self.grid: TimeGrid | None = None
        self._buffer: list[Reading] = []
        self._first: float | None = None
        self._next = 0
        self._published = 0  # the first step whose estimate is not out (output_delay)
        self.readings = StepReadings(self.config.max_pending, self.config.lag, self._counters)
        self.states: dict[int, np.ndarray] = {}  # solved states of the window's last steps, guesses beyond
        self._prior = None
        self._window: dict[int, tuple[LinearizedStep, int]] = {}  # native step factors: rows and GTSAM slot
        self._lifts: dict[int, Lift] = {}  # x(s) of the steps in the window (estimator.factors.reduced_state)
        self.partitions.reset()
        self.observability: ObservabilityReport | None = None  # set at start-up (estimator.online.observability)
        self.smoother = FixedLagSmoother(SmootherOptions(
            lag=self.config.lag, factorization=self.config.factorization,
            relinearize_threshold=self.config.relinearize_threshold))
        self.governor.reset()
        self.walks.restart()
        self._counters[RESTARTS.get(reason, "resets")] += 1

    def add(self, reading: Reading) -> str:
        """Take one validated reading; its disposition (module docstring)."""
        self._between_steps()
        self._counters["readings"] += 1
        term = self.terms.get(reading.sensor)
        if term is None:
            return self._count("ignored")
        if self.grid is None:
            if self._first is None:
                self._first = reading.t
            self._buffer.append(reading)
            if len(self._buffer) > self.config.max_pending:
                self._buffer.pop(0)
                self._counters["dropped"] += 1
            return self._count("pending")
        return self._count(self._attach(reading, term))

    def advance(self, sensor_time: float, final: bool = False) -> list[StepEstimate]:
        """Process every due grid step (t_k + delay ≤ ``sensor_time``); [] until started. While
        coalescing, due steps fewer than a group wait for more, unless ``final`` (the input has ended:
        a log's end, the node's shutdown), which processes them in an update of their own."""
        if self.grid is None and not self._start(sensor_time):
            return []
        due = int(np.floor((sensor_time - self.grid.t0) / self.grid.dt - self.config.delay_steps + 1e-9))
        estimates: list[StepEstimate] = []
        while self.grid is not None and due - self._next + 1 >= (1 if final else self.governor.group_size):
            # (grid None: the update failed and the estimator went back to start-up)
            estimates += self._update(range(self._next, min(due + 1, self._next + self.governor.group_size)))
        if final and self.grid is not None:
            estimates += self._held(sigmas=True)
        return estimates

    def _between_steps(self) -> None:
        """The work an update leaves for later, done here, after its estimates are out: the steps of the
        next update drafted (``_draft_step``), the window's estimate kept for a solver recovery
        (estimator.smoother) and a due garbage collection (estimator.collector)."""
        if self.grid is not None:
            for k in range(self._next, self._next + self.governor.group_size):
                if k not in self.readings.drafts:
                    self.readings.drafts[k] = self._draft_step(k)
        self.smoother.keep_window()
        collect_if_due()

    # ---- readings -------------------------------------------------------------------------------
    def _count(self, disposition: str) -> str:
        self._counters[disposition] += 1
        return disposition

    def _attach(self, reading: Reading, term: SensorTerm) -> str:
        """The disposition of a reading for the running grid (module docstring, Readings), not counted.
        Checked by the outlier gate against the state of its reference step (outliers.OutlierGate); when
        that is its own step's draft guess, the rows it gets there are evaluated once, for both."""
        k = self.grid.step(reading.t)
        observation = Observation(term, reading.value, term.whitening(reading.cov), reading.t - self.grid.time(k))
        j, rows = self.gate.reference(k, self.states, self._next), None
        if j is not None:
            draft = self.readings.drafts.get(k) if j == k else None
            if draft is not None:
                error, jacobian, distance = whitened_reading(observation, draft.rows.x0)
                rows = (error, jacobian)
            else:
                distance = squared_innovation(observation, self.states[j],
                                              observation.delta + (k - j) * self.config.dt)
            if self.gate.refuses(reading.sensor, distance):
                return "outlier"
        return self.readings.place(observation, k, self._next, rows)

    def _start(self, sensor_time: float) -> bool:
        """Start-up (module docstring): True once the grid and the initial state are set."""
        if not self._buffer:
            return False
        usable = {name for name, term in self.terms.items() if term is not None}
        by_sensor: dict[str, list[Reading]] = {}
        for reading in self._buffer:
            by_sensor.setdefault(reading.sensor, []).append(reading)
        if set(by_sensor) != usable and sensor_time - self._first < self.config.startup_timeout:
            return False
        if sensor_time - self._first < self.config.startup_span:
            return False
        t0 = max(self._first, max(r.t for r in self._buffer) - 0.5 * self.config.startup_span)
        known = KnownVelocity.of(self.config)
        fixing = [self.terms[name].sensor for name in position_motions(by_sensor, self.terms, t0)]
        try:
            with np.errstate(all="ignore"):
                x0, force_sigmas = initial_state(self.mech, self.layout, by_sensor, self.terms, t0, self._assembled,
                                                  known)
                determined = determines_position(self.mech, x0[:self.layout.n], fixing)
                guess = guess_sigma(self.mech, self.config)
                found = None if determined else readings_position(self.mech, self.layout, by_sensor, self.terms, t0,
                                                                   x0[:self.layout.n], float(guess.min()), known)
                if found is not None:  # the other readings fix the position: start there
                    x0, force_sigmas = initial_state(self.mech, self.layout, by_sensor, self.terms, t0, found[0],
                                                     known)
            if not np.isfinite(x0).all():
                raise FloatingPointError("a non-finite start state")
        except (np.linalg.LinAlgError, AssemblyError, FloatingPointError) as exc:
            log.warning("start-up at t = %.6f s failed (%s): starting again from the next readings", t0,
                        one_line(exc))
            self._counters["startup_failures"] += 1
            self._counters["dropped"] += len(self._buffer)
            self._buffer, self._first = [], None
            return False
        sigmas = self._prior_sigmas()
        if not self.layout.wrenches:  # (the start-up's fit of F takes the external wrenches as zero)
            sigmas[self.layout.force] = np.minimum(sigmas[self.layout.force], force_sigmas)
        if not determined:  # a guess, or what the other readings fix
            sigmas[:self.layout.n] = (guess if found is None
                                      else max(self.config.position_sigma, found[1]))
        self.partitions.choose(0, x0[:self.layout.n])
        shared = self.partitions.layout_of(0).shared
        self._prior = StepRelation(prior_relation(x0[shared], sigmas[shared]))
        self.observability = observability(self.mech, self.sensors, self.layout, self.config, x0)
        if not self.observability.observable:
            log.warning("start-up at t = %.6f s: %s", t0, self.observability.summary())
        elif self.observability.not_checked:
            log.info("start-up at t = %.6f s: %s", t0, self.observability.summary())
        self.states[0] = x0
        self.grid = TimeGrid(t0, self.config.dt)
        self.readings.drafts = {0: self._draft_step(0)}
        for reading in self._buffer:  # counted pending when buffered: now placed on the grid
            if reading.t >= t0 - 0.5 * self.config.dt:
                self._recount("pending", self._attach(reading, self.terms[reading.sensor]))
        self._buffer = []
        return True

    def _recount(self, was: str, disposition: str) -> None:
        """A reading counted under ``was`` moves to ``disposition``."""
        self._counters[was] -= 1
        self._counters[disposition] += 1

    def _reading_states(self, sensor: Sensor) -> Sensor:
        """``sensor`` reading the external wrenches and the link masses the state carries (a kind whose
        reading depends on neither is itself)."""
        if self.frames is not None:
            sensor = sensor.with_wrenches(self.frames)
        if isinstance(self.masses, LinkMassTerms):
            sensor = sensor.with_masses(self.masses)
        return sensor

    def _prior_sigmas(self) -> np.ndarray:
        config, layout, n = self.config, self.layout, self.layout.n
        sigmas = np.full(layout.size, config.free_sigma)
        sigmas[:n] = config.position_sigma
        sigmas[n:2 * n] = config.velocity_sigma
        sigmas[layout.force] = config.force_sigma
        sigmas[layout.force_rate] = 3.0 * config.force_rms_rate
        if layout.gravity:
            sigmas[layout.gravity_error] = config.gravity_sigma
        if layout.masses:
            sigmas[layout.mass_error] = config.mass_sigma
        if layout.lengths:
            sigmas[layout.length_error] = config.length_sigma
        if layout.frictions:
            sigmas[layout.friction] = config.friction_sigma
        sigmas[layout.wrench] = config.wrench_sigma
        sigmas[layout.payload_state] = self.payload_sizes[0]
        for i, sensor in enumerate(self.sensors.sensors):
            if sensor.params.bias_state:
                sigmas[layout.bias_of(i)] = sensor.params.noise.bias_sigma
        return sigmas

    # ---- steps ----------------------------------------------------------------------------------
    def _noise(self, rows: int) -> gtsam.noiseModel.Base:
        if rows not in self._unit:
            self._unit[rows] = gtsam.noiseModel.Unit.Create(rows)
        return self._unit[rows]

    def _step_factor(self, step: int, rows: LinearizedStep) -> gtsam.NonlinearFactor:
        """The factor of a step's model rows and readings on its s, the dependent columns eliminated
        (estimator.factors.reduced_state; the step's lift kept): linearized at ``rows.x0``, as a native
        factor when the estimator never relinearizes, else a Python factor that knows that linearization."""
        error, [jacobian] = linearization = rows.linearization()
        state = self.partitions.reduced(step)
        reduced, block, self._lifts[step] = state.reduce(rows.x0, error, jacobian)
        noise, key, shared = self._noise(len(reduced)), X(step), state.layout.shared
        if self.config.relinearize_threshold is None:
            return linearized_factor(noise, [key], [rows.x0[shared]], reduced, [block])
        function = freezable(rows.error_function(), self._freeze, (rows.x0, linearization))
        known = (rows.x0[shared], reduced, block)
        return gtsam_factor(noise, [key], state.eliminating(function, self._lifts, step, known))

    def _late_factor(self, step: int, observations: list[Observation]) -> gtsam.CustomFactor:
        """The Python factor of the late readings of a step in the window, through the step's lift."""
        rows = sum(o.term.sensor.dimension for o in observations)
        error = stacked_step_error(None, None, observations)
        return gtsam_factor(self._noise(rows), [X(step)],
                            self.partitions.reduced(step).through(freezable(error, self._freeze),
                                                                  self._lifts[step]))

    def _draft_step(self, k: int) -> DraftStep:
        """Step k made ready (drafting.DraftStep): guessed from the states before it, which are solved
        for the step after an update, with its pending readings."""
        guess = self.states[0] if k == 0 else self.drafter.predict(k, self.states)
        self.states[k] = guess
        self.partitions.choose(k, guess[:self.layout.n])
        return self.drafter.draft(k, guess, self.readings.pending.pop(k, []), self._prior)

    def _update(self, group: range) -> list[StepEstimate]:
        """One smoother update over the grid steps of ``group`` and their estimates."""
        start = self.clock()
        level = self.governor.level
        graph, values, stamps = gtsam.NonlinearFactorGraph(), gtsam.Values(), {}
        drafts = []
        solver_recoveries = self.smoother.recoveries
        newest = group[-1]
        # the states to publish (output_delay) and to predict the next steps from
        oldest = max(0, min(self._published, newest + 1 - self.config.integrator_order))
        kept = range(oldest, newest + 1)
        try:
            for k in group:
                draft = self.readings.due(k, self._draft_step)
                drafts.append(draft)
                graph.add(self._step_factor(k, draft.rows))
                graph.add(draft.process)
                values.insert(X(k), draft.rows.x0[self.partitions.layout_of(k).shared])
                stamps[X(k)] = float(k)
            for step, observations in self.readings.take_late().items():
                graph.add(self._late_factor(step, observations))
            solved = self._solved(kept, self.smoother.update_for(graph, values, stamps, self._keys(kept)))
            self._track_step_factors(drafts, solver_recoveries)
            solved, newest_rows = self._relinearize(kept, solved)
            self._check_plausible(solved[len(kept) - len(group):], newest_rows)
        except (SolverFailure, Unresolved) as exc:
            return self._reinitialize(group, exc)
        # the states kept (solved), and the guesses of any steps drafted beyond this update
        self.acceleration_noise.observe(group[0], self.states.get(group[0] - 1), solved[kept.index(group[0])])
        self.states = {j: x for j, x in self.states.items() if j > newest} | dict(zip(kept, solved))
        for k in group:
            self.walks.observe(self.states[k])
        self.walks.rescale_if_moved()  # the steps drafted from here on
        self._lifts = {j: lift for j, lift in self._lifts.items() if j >= newest - self.config.lag - 1}
        self.partitions.forget(newest - self.config.lag - self.config.integrator_order)
        self._next = newest + 1
        published = range(self._published, max(self._published, newest + 1 - self.config.output_delay))
        outputs = [self._output(k) for k in published]
        share = (self.clock() - start) / len(group)
        flags = ["degraded"] * (level >= 1) + ["coalesced"] * (len(group) > 1)
        if self.smoother.recoveries > solver_recoveries:
            self._counters["solver_recoveries"] += 1
            flags.append("solver_recovery")
        recovered = self.governor.record(share, len(group))
        self._counters["steps"] += len(group)
        self._counters["degraded_steps"] += len(group) * (level >= 1)
        self._counters["coalesced_steps"] += len(group) * (len(group) > 1)
        return self._estimates(published, outputs, share, flags, recovered)

    def _estimates(self, steps: range, outputs: list[tuple], latency: float, flags: list[str],
                   recovered: bool = False) -> list[StepEstimate]:
        """The StepEstimates of ``steps`` from their ``outputs`` (``_output``), now published together."""
        self._published = steps.stop
        flags = flags + ["unobservable"] * (not self.observability.observable)
        restarted = [self._reason] if self._reason else []
        return [StepEstimate(step=k, t=self.grid.time(k), q=q, qd=qd, qdd=qdd, forces=forces, lam=lam, sigma=sigma,
                             latency=latency, update_steps=len(steps), flags=tuple(
                                 flags + ["startup"] * (k == 0) + ["recovered"] * (recovered and k == steps[-1])
                                 + restarted * (k <= self.config.lag)), model=model, wrenches=wrenches)
                for k, (q, qd, qdd, forces, lam, sigma, model, wrenches) in zip(steps, outputs)]

    def _held(self, sigmas: bool) -> list[StepEstimate]:
        """The estimates of the processed steps that ``output_delay`` still holds back, published now (the
        input has ended, or the solver failed after them) from their last estimates; with their marginal
        σ only if ``sigmas`` (not after a failure, which may have left the smoother's tree unusable)."""
        held = range(self._published, self._next)
        if not held:
            return []  # no clock read: a replay's RecordedClock pairs two reads with each recorded update
        start = self.clock()
        outputs = [self._output(k, sigmas) for k in held]
        return self._estimates(held, outputs, (self.clock() - start) / len(held), [])

    def _check_plausible(self, states: list[np.ndarray], newest_rows: np.ndarray | None = None) -> None:
        """SolverFailure for a step's new estimate that is not finite or whose model rows are off by more
        than IMPLAUSIBLE σ (StepModel.off_by: the solver has left the mechanism, a poisoned linear system); ``newest_rows``:
        the last state's rows over their σ, when ``_relinearize`` evaluated them there."""
        for i, x in enumerate(states):
            if not np.isfinite(x).all():
                off = np.inf
            else:
                off = self.model.off_by(x, newest_rows if i == len(states) - 1 else None)
            if not off <= IMPLAUSIBLE:
                raise SolverFailure(f"an estimate off its model rows by {off:.3g} σ")

    def _reinitialize(self, group: range, exc: SolverFailure | Unresolved) -> list[StepEstimate]:
        """The solver failed on the steps of ``group`` (none of them is published): back to start-up,
        from the readings that arrive next, with reason ``reinitialized``."""
        log.warning("steps %d–%d at t = %.6f s: %s; re-initializing from the next readings", group[0], group[-1],
                    self.grid.time(group[-1]), one_line(exc))
        held = self._held(sigmas=False)
        self.reset("reinitialized")
        return held

    def _track_step_factors(self, drafts: list[DraftStep], solver_recoveries: int) -> None:
        """Remember the GTSAM slots of the native step factors in the window (the step factor of each draft
        comes first of its two factors in the update), for ``_relinearize``."""
        if self.config.relinearize_threshold is not None or not self.config.max_relinearizations:
            return
        if self.smoother.recoveries > solver_recoveries:
            self._window = {}  # a restarted smoother holds none of the old factors
        slots = self.smoother.new_factor_indices
        for i, draft in enumerate(drafts):
            self._window[draft.step] = (draft.rows, slots[2 * i])
        oldest = drafts[-1].step - self.config.lag
        self._window = {k: entry for k, entry in self._window.items() if k >= oldest}

    def _relinearize(self, kept: range, solved: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Linearize again where the window's linearization is off by more than the tolerance at its
        estimate (EstimatorConfig, Solver). Checked on the newest step (its readings move it most) and
        on the oldest (its linearization is frozen into the marginal when it leaves the window; the
        later readings have smoothed it furthest): each of the two that is off is linearized again at
        its estimate and the update repeated, at most ``max_relinearizations`` times; a step between
        them is looked at when it is the oldest, or with the oldest when that is off (module docstring).
        The estimates of ``kept``, and the newest step's model
        rows over their σ at its estimate if the last check evaluated them there (else None)."""
        tolerance = self.config.linearization_tolerance
        newest_rows = None
        for _ in range(self.config.max_relinearizations):
            if not self._window:
                break
            ends = {k: solved[-1] if k == kept[-1] else self.estimate(k)
                    for k in (kept[-1], min(self._window)) if k in self._window}
            exact = {k: self.model.weighted(x) for k, x in ends.items()}
            off = [k for k, x in ends.items() if self._linearization_off(k, x, exact[k], tolerance)]
            if min(self._window) in off:
                off += self._old_end_off(min(self._window) + 1, kept[-1], ends, tolerance)
            if not off:
                newest_rows = exact.get(kept[-1])
                break
            graph, remove, moved = gtsam.NonlinearFactorGraph(), [], []
            for k in off:
                rows, slot = self._window[k]
                moved.append((k, rows.at(ends[k])))
                remove.append(slot)
                graph.add(self._step_factor(k, moved[-1][1]))
            recoveries = self.smoother.recoveries
            solved = self._solved(kept, self.smoother.replace_factors(remove, graph, self._keys(kept)))
            if self.smoother.recoveries > recoveries:
                self._window = {}
                break
            for (k, rows), slot in zip(moved, self.smoother.new_factor_indices):
                self._window[k] = (rows, slot)
            self._counters["relinearizations"] += 1
        return solved, newest_rows

    def _old_end_off(self, first: int, newest: int, ends: dict[int, np.ndarray], tolerance: float) -> list[int]:
        """The steps from ``first`` on in the old end's share of the window (``OLD_END_SHARE``; all of a window
        shorter than ``SHORT_WINDOW``; the newest step apart) whose linearization is off at their estimates,
        which are added to ``ends``."""
        short = self.config.lag * self.config.dt < SHORT_WINDOW - 1e-9
        share = self.config.lag if short else max(1, math.ceil(OLD_END_SHARE * self.config.lag))
        off = []
        for k in range(first, min(first - 1 + share, newest)):
            if k in self._window:
                ends[k] = x = self.estimate(k)
                if self._linearization_off(k, x, self.model.weighted(x), tolerance):
                    off.append(k)
        return off

    def _linearization_off(self, k: int, x: np.ndarray, exact: np.ndarray, tolerance: float) -> bool:
        """Whether the linearization of step k's factor is off at x (its model rows there over their σ:
        ``exact``) by more than ``tolerance`` σ in a row left on s once d is eliminated
        (estimator.factors.reduced_state; what d absorbs moves only d, along the lift). Those rows are an
        orthogonal map of the residual: no larger than its norm."""
        residual = self._window[k][0].linearization_residual(x, exact)
        return bool(residual @ residual > tolerance ** 2
                    and np.max(np.abs(self._lifts[k].remaining(residual)), initial=0.0) > tolerance)

    def estimate(self, k: int) -> np.ndarray:
        """The smoother's current estimate of step k's stacked state (k in the window)."""
        return self._lifts[k](self.smoother.estimate(X(k)))

    @staticmethod
    def _keys(steps: range) -> list[int]:
        """The keys of the states of ``steps``."""
        return [X(k) for k in steps]

    def _solved(self, steps: range, vectors: list[np.ndarray]) -> list[np.ndarray]:
        """The stacked states of ``steps`` from the estimates of their s."""
        return [self._lifts[k](s) for k, s in zip(steps, vectors)]

    def _output(self, k: int, sigmas: bool = True) -> tuple:
        """(q, q̇, q̈, forces, λ, sigma, model, wrenches) of step k from its estimate (sigma: with
        ``publish_sigmas``, at level 0, if ``sigmas``)."""
        n, layout, mech = self.layout.n, self.layout, self.mech
        x = self.states[k]
        q, qd, qdd = x[:n].copy(), x[n:2 * n].copy(), x[2 * n:3 * n].copy()
        if self.config.dynamics:
            lam = np.zeros(constraint_count(mech))
            lam[layout.row_indices] = x[layout.lam]
            values = x[layout.force]
        else:  # kinematics only: the inverse dynamics of the estimated motion
            lam, values, _ = drive_forces_at(mech, q, qd, qdd, self.force_coordinates)
        forces = {name: float(v) for name, v in zip(self.config.unknown_forces, values)}
        sigma = None
        if sigmas and self.config.publish_sigmas and self.governor.level == 0:
            std = np.sqrt(self._lifts[k].variances(self.smoother.marginal_covariance(X(k))))
            sigma = {"q": std[:n], "qd": std[n:2 * n], "forces": std[layout.force]}
            sigma |= {f"wrench.{name}": s for name, s in zip(layout.wrenches, std[layout.wrench].reshape(-1, 6))}
            if layout.payload:
                sigma["payload"] = std[layout.payload_state]
        model = {"gravity_error": float(x[layout.gravity_error][0])} if layout.gravity else {}
        if layout.masses:
            mu = self.masses.distribution @ x[layout.mass_error]
            model |= {f"mass_error.{name}": float(v) for name, v in zip(self.masses.names, mu)}
        if layout.lengths:
            model |= {f"length_error.{name}": float(v) for name, v in zip(self.lengths.names, x[layout.length_error])}
        names = (mech.coordinate_names[i] for i in layout.frictions)
        model |= {f"friction.{name}": float(v) for name, v in zip(names, x[layout.friction])}
        if layout.payload:
            model |= dict(zip(PAYLOAD_KEYS, map(float, payload_published(x[layout.payload_state]))))
        wrenches = dict(zip(layout.wrenches, x[layout.wrench].reshape(-1, 6).copy()))
        return q, qd, qdd, forces, lam, sigma, model, wrenches


def friction_coordinates(mech: Model, config: EstimatorConfig, independent: tuple[int, ...]) -> tuple[int, ...]:
    """The coordinates whose viscous friction the state carries (EstimatorConfig ``friction_sigma``):
    ``friction_coordinates`` by name, or the ``independent`` coordinates; none without ``friction_sigma``."""
    if config.friction_sigma is None:
        return ()
    if not config.friction_coordinates:
        return independent
    return named_indices("friction_coordinates", config.friction_coordinates, mech.coordinate_names, "coordinate")


def named_indices(key: str, names: Sequence[str], known: Sequence[str], noun: str) -> tuple[int, ...]:
    """The indices in ``known`` of the ``names`` of EstimatorConfig ``key`` (``noun``: what they name);
    MbstateError naming the first unknown one (a configuration built in code is not checked against the
    mechanism by the file's reader)."""
    unknown = [name for name in names if name not in known]
    if unknown:
        raise MbstateError(f"estimator.{key}: unknown {noun} {unknown[0]!r} "
                           f"(known: {', '.join(known)[:200] or 'none'})")
    return tuple(list(known).index(name) for name in names)
