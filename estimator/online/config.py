"""Settings of the online estimator (estimator.online.estimator): the ``estimator:`` section.

Every key, its default and its unit is documented on :class:`EstimatorConfig`; the defaults suit
the four-bar with the sensors of configs/sensors/fourbar.yaml. :meth:`EstimatorConfig.from_section`
reads and validates a YAML section (estimator.section.Section): an unknown key or a bad value is one
error naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from estimator.errors import MbstateError, shown
from estimator.model_protocol import Model, actuators, payload_terms
from estimator.section import Section
from estimator.smoother import FACTORIZATIONS
from estimator.spatial.frame_wrenches import movable_frames
from estimator.spatial.model import SpatialModel

KINDS = ("smoother", "error_ekf", "ukf", "null_jerk", "momentum_observer")
WRENCH_KINDS = ("smoother", "momentum_observer")  # the kinds that estimate the ``wrenches``
FORCE_MODELS = ("walk", "smooth", "jerk")
FORCE_RATE_TIME = 0.0625  # [s]: K = √T × force_rate (EstimatorConfig, Unknown inputs)
FORCE_STEP_SHARE = 0.1  # the smooth force model's steps: a walk of this share of K (EstimatorConfig)
WALK_STARTS = {"force_random_walk": 5.0, "jerk_random_walk": 1.0}  # auto densities until the motion is seen
FILTER_JERK = 10.0  # [rad/s³/√Hz] the null_jerk filter's jerk density with jerk_random_walk auto
WALK_MEMORY = 1.0  # [s] time constant of the auto densities' mean (estimator.online.walk_scale)
WALK_FLOOR = 1e-3  # the auto densities' least value, as a share of their start value
WALK_SHARE = 0.1  # an auto density is at least this share of its one-horizon match (estimator.online.walk_scale)
ACCELERATION_START = 0.3  # [rad/s²/√Hz] auto acceleration_noise until the motion is seen (and the filters')
ACCELERATION_FLOOR = 0.01  # the auto acceleration_noise's least value, as a share of ACCELERATION_START
ACCELERATION_HORIZON = 0.5  # [s] the horizon the auto acceleration_noise is matched over
ACCELERATION_MEMORY = 2.0  # [s] time constant of its mean (estimator.online.acceleration_noise)
DYNAMICS_KEYS = ("gravity_sigma", "mass_sigma", "friction_sigma", "force_noise", "payload",
                 "wrenches")  # act on the equations of motion
NULLABLE = ("relinearize_threshold", "force_rate", "outlier_gate", "gravity_sigma", "mass_sigma",
            "length_sigma", "friction_sigma", "payload")  # may be null
AUTO = "auto"  # a size left to the estimator (EstimatorConfig.with_model_states, with_force_model; walk_scale)
CHOICES = {"kind": KINDS, "factorization": FACTORIZATIONS, "force_model": (*FORCE_MODELS, AUTO)}  # keys that take a name
MODEL_STATES = {"gravity_sigma": 0.2, "mass_sigma": 0.1, "length_sigma": 0.01, "friction_sigma": 1.0}  # auto sizes
MODEL_WALKS = {"gravity_sigma": "gravity_random_walk", "mass_sigma": "mass_random_walk",
               "length_sigma": "length_random_walk", "friction_sigma": "friction_random_walk"}  # each state's walk
MODEL_MEMORY = 1e6  # [s] an auto model-error walk moves its state by its prior σ over this time (model_walk)
PAYLOAD_SIZES = ("payload_mass_sigma", "payload_offset_sigma")  # the payload's start σ (payload_sigmas)
PAYLOAD_WALKS = ("payload_random_walk",)  # its walk, relative to the start σ
STATES_LAG = 5  # [steps] the least window (lag) with auto model-error states (with_model_states)
STANDARD_GRAVITY = 9.81  # [m/s²] the acceleration that makes the mechanism's masses a weight (scales)
DYNAMICS_SHARE = 1e-5  # auto dynamics_sigma: this share of the mechanism's weight (estimator.online.scales)
GUESS_ANGLE = 0.3  # [rad] auto guess_sigma on angles; on points, times the bodies' mean length (scales)
SCALED = ("dynamics_sigma", "guess_sigma")  # σ keys whose auto is the mechanism's scale (estimator.online.scales)
OBSERVER_GAIN = 50.0  # [1/s] the momentum observer's K_O (configs/estimator/README.md, "`observer_gain`")
# largest values of the keys with a natural bound (every other number: estimator.section.LIMIT in magnitude)
MAXIMA = {"rate": 1e6, "lag": 100_000, "max_relinearizations": 100, "max_coalesce": 10_000,
          "recover_steps": 10_000_000, "max_pending": 10_000_000, "startup_timeout": 3600.0,
          "latency_budget_ms": 3.6e6}


@dataclass(frozen=True)
class EstimatorConfig:
    """The online estimator's settings (SI units; σ are standard deviations of a factor's rows).

    Kind
      ``kind``: ``smoother`` (default; this module's fixed-lag smoother, estimator.online.estimator),
      ``error_ekf`` (the errorEKF baseline, estimator.online.filters.error_ekf), ``ukf`` (the unscented
      filter on the same error state, estimator.online.filters.ukf) or ``null_jerk`` (a null-jerk Kalman
      filter per coordinate, no dynamics: the arm baseline, estimator.online.filters.null_jerk; free
      coordinates only, a URDF tree): the same readings, grid, start-up and outputs. The filter reads
      ``rate``, ``delay_steps``, the start-up keys, ``position_sigma`` and ``velocity_sigma`` (its start
      covariance on the independent coordinates z and ż), ``publish_sigmas``, ``max_pending`` and
      ``acceleration_noise`` (Model, below; auto: ACCELERATION_START) as the density of the white
      acceleration noise on each independent coordinate, its process noise (the literature's plant
      noise); ``null_jerk`` reads ``jerk_random_walk`` (auto: FILTER_JERK) as the density of the
      white jerk on each coordinate instead. ``momentum_observer`` (the generalized-momentum observer
      of the external joint torques and the ``wrenches``, estimator.online.filters.momentum_observer; a
      URDF tree with a joint torque sensor on every joint) runs the ``null_jerk`` filter on the other
      sensors for q, q̇ and q̈ and reads ``observer_gain`` [1/s], K_O of ṙ = K_O (τ_ext − r): the
      bandwidth of its estimate (configs/estimator/README.md gives the trade-off and the figures).
    Time grid and window
      ``rate`` [Hz] grid rate; ``lag`` [steps] smoother window behind the newest step (N_w ≥ 1);
      ``delay_steps`` [steps] a step t_k is processed once the newest sensor time reaches
      t_k + delay_steps/rate, so that readings stamped up to half a step after t_k (they attach to
      step k) are in its factor instead of arriving late (0: process at t_k).
      ``integrator_order``: 2 (trapezoidal, two states per factor) or 3 (Adams-Moulton 3, three).
    Unknown inputs
      ``unknown_forces``: actuator names (mech.actuators) whose force/torque is a state variable;
      other actuators are taken as zero. ``force_random_walk`` [N/√s or N·m/√s]: density K of their
      random walk, F_k − F_{k−1} ~ N(0, K² dt); ``auto`` (default): K of each force matched to its
      estimate over T = FORCE_RATE_TIME (estimator.online.walk_scale: K² = a + b T from the estimate's
      variogram V(τ) = E[(F(t) − F(t − τ))²] ≈ c + a τ + b τ² at τ = T, 2T, 3T, so that the estimate's
      own error c is left out; running means over WALK_MEMORY, from WALK_STARTS until those horizons are
      seen, at least WALK_SHARE of the one-horizon match √(V(T)/T) and WALK_FLOOR of the start).
      ``force_rate`` [N/s or N·m/s] instead of K (null: K as
      given): the typical (rms) rate of change of the unknown forces, which a user knows from the drive
      (≈ range × angular frequency of the motion); then K = ``FORCE_RATE_TIME``^½ × force_rate, a
      random walk that over FORCE_RATE_TIME changes by what the force does (configs/estimator/README.md gives the
      trade-off it balances: noise from a larger K, lag from a smaller). ``force_sigma`` [N or N·m]:
      σ of their start prior. ``force_model``: ``auto`` (default): ``jerk`` where the unknown forces
      act on independent coordinates, else ``smooth``; ``smooth`` (F and its rate Ḟ in the
      state, Ḟ a random walk of density J = K / FORCE_RATE_TIME and F the trapezoidal integral of
      Ḟ plus steps of a walk of density FORCE_STEP_SHARE × K: a force that changes smoothly,
      followed without a walk's lag, that may still jump (a stop its rate cannot follow); the
      start prior of Ḟ has σ 3 K/√FORCE_RATE_TIME, three times the rms rate), ``walk`` (F
      itself a random walk of density K) or ``jerk`` (F free at each step, set by the equations of
      motion; the accelerations of the coordinates the forces act on, which must be independent
      coordinates, a white-jerk random walk of density ``jerk_random_walk`` (``auto``, the default:
      matched to the estimated accelerations as K is to the forces, so D = √T × their rms jerk for a
      smooth motion), and no
      ``acceleration_noise`` on them: a drive that follows a smooth motion, its torque the inverse
      dynamics of that motion).
      ``gravity_sigma`` [1]: with a number, the state carries g, the relative error of the model's
      gravity (the equations of motion use (1 + g) Q_g, Q_g the model's gravity force), with a start
      prior N(0, gravity_sigma²) and a random walk of density ``gravity_random_walk`` [1/√s]; the
      accelerometers read (1 + g) times the model's gravity too (sensors.accelerometer). A model-error
      state for a model whose gravity is off (null: gravity as in the model; auto, below), seen
      through the motion gravity drives and the accelerometers; it needs the dynamics.
      ``mass_sigma`` [1]: with a number, the state carries μ_b for each body b with mass, the relative
      error of its mass (its mass and inertia, hence its share M_b of M and Q_g,b of Q_g, are
      (1 + μ_b) times the model's: a body's density off), with start priors N(0, mass_sigma²) and random
      walks of density ``mass_random_walk`` [1/√s] (null: masses as in the model; auto, below). A
      model-error state seen through the motion the masses' weight and inertia shape. A common factor
      of every mass is not seen in free motion (λ scales with it) nor beside unknown forces: the state
      keeps the model's total mass and moves mass between the bodies (estimator.mass.BodyMassTerms).
      It needs the dynamics and at least two bodies with mass. On a URDF model each link with mass
      (its whole spatial inertia scaled; estimator.spatial.link_masses), the total left free when a joint
      torque or force-torque sensor reads the joint wrenches (estimator.online.mass_states); ``auto``
      is null there.
      ``length_sigma`` [1]: with a number, the state carries ℓ_b for each body b held at its length
      L_b by a distance row (a bar between two joints), the relative error of that length (the row
      u·u − L_b² becomes u·u − L_b² (1 + ℓ_b)², estimator.lengths), with start priors
      N(0, length_sigma²) and random walks of density ``length_random_walk`` [1/√s] (null: lengths as
      in the model; auto, below). A model-error state seen through the geometry of the motion;
      the mass matrix keeps the model's lengths (exact for bodies whose inertia and centre of gravity
      scale with the length, as a uniform rod's). With or without the dynamics.
      ``friction_sigma`` [N·m·s/rad or N·s/m]: with a number, the state carries c_i for each coordinate
      i of ``friction_coordinates`` (names; empty, the default: the independent coordinates, as
      ``mbstate check`` lists them), a viscous friction coefficient the model lacks (the equations of
      motion get the generalized force −c_i q̇_i on coordinate i: a joint's friction where its angle is
      a coordinate, a slider's where its travel is), on top of the model's own dampers, with start
      priors N(0, friction_sigma²) and random walks of density ``friction_random_walk`` [the same unit
      per √s] (null: friction as in the model; auto, below). A model-error
      state seen through the energy the motion loses; it needs the dynamics.
      ``auto``, the default of these four: each state at the size MODEL_STATES gives (g 0.2, μ 0.1,
      ℓ 0.01, c 1.0) where it applies (:meth:`with_model_states`): the smoother with the dynamics, a
      model not said exact (``acceleration_noise`` above 0), no unknown forces (which take up the same
      error) and a window ``lag`` of at least STATES_LAG steps, and a gravity, two bodies with mass or a
      bar in the mechanism; else null. A number carries the state wherever it is given (an error where
      it cannot be carried). ``auto``, the default of the four walks: the state's σ over
      √MODEL_MEMORY (:meth:`model_walk`): a model's masses, lengths, friction and gravity are
      constants, and the walk only keeps the state from freezing over a node's run of days.
      ``payload``: the name of a link of a spatial model (a URDF) that carries an unknown payload (null,
      the default: none): the state carries θ = (m, h, Θ), its inertial parameters in the link's frame
      (m [kg], h = m c [kg·m] with c its centre of mass, Θ [kg·m²] its rotational inertia about the link
      origin), whose joint forces Jᵀ W_p (its weight and inertia, estimator.spatial.payload) join the
      equations of motion; start prior N(0, diag(σ_m², σ_h² 1, σ_Θ² 1)) with σ_m ``payload_mass_sigma`` [kg],
      σ_h = σ_m σ_c, σ_Θ = σ_m σ_c² (σ_c ``payload_offset_sigma`` [m]), random walks of density
      ``payload_random_walk`` [1/√s] times each one's σ. ``auto`` (the default of these three): σ_m the mass
      of the body the link rides on (a payload up to the link's own mass), σ_c the model's mean distance
      between consecutive joints (a payload within a link's length of its link's origin), and the walk
      1/√MODEL_MEMORY, the model-error states' (a payload held for the run; one picked up and put down
      during the run wants 1/√T, T the time it is held). Its mass is seen through the weight and inertia
      it adds, h and Θ through their moments.
      It needs the dynamics and the smoother.
    Model
      ``dynamics``: true — per step M q̈ + Φqᵀλ − Q − E F = 0 (σ ``dynamics_sigma`` [N, N·m]; ``auto``,
      the default: DYNAMICS_SHARE of the mechanism's weight Σ m_b × STANDARD_GRAVITY,
      estimator.online.scales) with the constraints; false — the kinematics-only estimator for comparison: the same graph without
      the dynamics rows, λ and F, with a white-jerk random walk on q̈ (density ``jerk_random_walk``
      [m/s³/√Hz, rad/s³/√Hz], auto as above, which the ``jerk`` force model uses too); its forces are then computed
      from each estimate by inverse dynamics.
      ``constraint_sigma`` [m], ``velocity_constraint_sigma`` [m/s], ``acceleration_constraint_sigma``
      [m/s²]: σ of the rows Φ, Φq q̇ and Φq q̈ − γ. The linearization error of the velocity rows grows
      with δq δq̇ and that of the acceleration rows with δq̇², δq̇ the correction a step's readings make
      to its predicted velocity; the dependent coordinates, eliminated inside the step
      (estimator.factors.reduced_state), absorb it, and what reaches the independent coordinates is
      checked (Solver, below).
      ``integrator_sigma`` [m, m/s]: σ of the integrator rows (z/ż and ż/z̈), at least their
      truncation error.
      ``acceleration_noise`` [rad/s²/√Hz]: density A of a white acceleration along the mechanism's
      motion that the model does not explain (model error: masses, gravity, friction,
      discretization), the process noise; isotropic in the bodies' angular accelerations (the moving
      bodies' ω̇ share A², Σ_b Var ω̇_b = dof A²; a motion that turns no body is measured by its
      points' speed over the bodies' mean length: kinematics.motion_tangent), seen through the
      independent coordinates z (chosen per step, estimator.online.partitions) as Cov z̈ = A² T[I] T[I]ᵀ
      (estimator.online.drafting.Drafter.weighted), the same whichever coordinates the file has; on a
      pendulum's angle A² exactly. Over a step h of the trapezoidal rule it leaves the velocity rows a
      residual of covariance A² h and the position rows one of A² h³/12 (times T[I] T[I]ᵀ),
      uncorrelated (∫ of the white noise and its integral over the step); the rows are whitened by
      them (with ``integrator_sigma`` as a floor). 0: the model is exact (configs/estimator/README.md
      gives the trade-off). ``auto`` (the default): A matched to the velocity changes the model leaves
      unexplained over ACCELERATION_HORIZON (estimator.online.acceleration_noise), from
      ACCELERATION_START, at least ACCELERATION_FLOOR of it, with the smoother and the dynamics;
      ACCELERATION_START elsewhere (the filters, kinematics only, where it does not act).
      ``force_noise`` {name: S_i} [N/√Hz, N·m/√Hz]: process noise on the dynamics where the model's
      forces are known to be less good on some coordinates (a joint with friction or play the model
      lacks, an actuator's coordinate, named by the coordinate or the actuator): a white generalized
      force of density S_i on coordinate i, which moves every coordinate the mass matrix couples to it.
      Held over a step h it is the equation of motion of coordinate i with σ_i = hypot(dynamics_sigma,
      S_i/√h) (estimator.online.step_model); it needs the dynamics.
    External wrenches (estimator.online.wrench_states)
      ``wrenches``: names of frames of a URDF model (its links or its sidecar's frames, not on the fixed
      base) whose external wrench w_f = (t; f) [N·m; N], in the frame's axes about its origin, the state
      carries (empty, the default: none): the equations of motion get the applied wrench, −Σ_f J_fᵀ w_f
      (the RNEA's applied wrenches), and the joint torque and force-torque sensors read the part
      beyond their joint. Contact at a tool, a payload's weight. It needs the dynamics; a planar model
      has no named frames. ``wrench_sigma`` [N·m, N]: σ of their start prior on every component.
      ``wrench_random_walk`` [N·m/√s, N/√s]: density K_w of their random walk, w_k − w_{k−1} ~
      N(0, K_w² h), the same on every component; ``auto`` (the default): per component, the unknown
      forces' walk density K (``force_random_walk`` or ``force_rate``, auto: its start value) over the
      largest lever through which a joint feels that component at the start configuration (the
      largest |J_f| entry of its row; at least 1 for a moment, at least the bodies' mean length for a
      force, for a component no joint feels), all components then scaled together so that their walk
      in joint space reaches K on the most loaded joint: the wrench walks as much as a drive torque
      does (estimator.online.wrench_states.wrench_walk).
    Start-up (estimator.online.startup)
      ``startup_span`` [s]: the readings of this much sensor time from the first one are fitted for the
      start state at the middle of the span, t0 (encoders: value, rate and acceleration); the grid starts
      at t0. ``startup_timeout`` [s] sensor time after the first reading after which the estimator starts
      without the sensors that have not reported. ``initial_state``: values of named coordinates
      {name: value}, or the name of one of the mechanism file's ``configurations``, held while the
      mechanism file's configuration is assembled into the anchor q_a that the start-up solution
      starts from (and stays on the branch of); without absolute sensors the start is q_a.
      ``initial_velocity``: velocities of named coordinates at t0 {name: value} [m/s, rad/s], or
      ``rest`` (all zero), known to ``velocity_sigma``: rows of the start-up's velocity problem beside
      the readings (with ``startup_span`` 0, t0 is the first reading's time: a rig released from rest
      starts at rest). ``position_sigma`` [m, rad], ``velocity_sigma`` [m/s, rad/s]: σ of the start
      prior on z and ż, centred on the start-up solution (z̈ gets ``free_sigma``, loose; the dependent
      coordinates and λ follow from the model rows). When the
      position sensors do not fix every degree of freedom at t0 (rank of [Φq; ∂h/∂q] below n), the
      other readings are fitted for the position (accelerometers: gravity and the motion it drives;
      estimator.online.startup.readings_position), and the prior on z gets the σ they fix its worst-seen
      direction to (at least ``position_sigma``); where that is not below ``guess_sigma`` [m, rad]
      either (rate sensors only, unknown forces), the start is a guess, the file's configuration, and its
      prior on z has ``guess_sigma`` instead (``auto``, the default: GUESS_ANGLE on angles and GUESS_ANGLE
      times the bodies' mean length on point coordinates, the file's pose turned by that angle;
      estimator.online.scales).
    Solver
      ``relinearize_threshold``: null (default) — never relinearize: each step's factor is linearized
      once, at the step's prediction, and added as a native linear factor (no Python callback in
      GTSAM); a number — iSAM2 relinearizes a state whose update exceeds it in any component, and
      the step's factor, a Python factor, is evaluated there again. ``factorization`` CHOLESKY or QR.
      With null, the linearization is checked after each update instead: when the newest or the
      oldest step's rows, evaluated at its estimate, differ from their linearization by more than
      ``linearization_tolerance`` [σ of the rows] in any row that reaches the independent
      coordinates (estimator.online.estimator, Relinearization), that step is linearized again at
      its estimate (with the oldest, the steps after it at the window's old end that are off too)
      and the update repeated, at most ``max_relinearizations`` times per update (0:
      never). Far from the truth (start-up, after a jump)
      the estimate then converges like Gauss-Newton; once it tracks, the check is all it costs.
    Output
      ``publish_sigmas``: marginal standard deviations of q, q̇ and F in every estimate (one iSAM2
      marginal covariance per step; estimator.benchmarks.node reports its cost).
      ``output_delay`` [steps, 0 … lag + 1 − max_coalesce]: the estimate of step k is published with
      the update of step k + output_delay, smoothed by the readings of the steps after it (a fixed-lag
      smoother's output; 0: each step's estimate with its own update, from the readings up to it).
      The steps still held back when the input ends are published then.
    Load (estimator.online.estimator module docstring)
      ``latency_budget_ms`` [ms] per step; ``max_coalesce`` [steps] most grid steps per smoother update
      at the deepest degradation level; after ``recover_steps`` steps without an overrun the level steps
      back by one if their mean latency is under ``recover_fraction`` of the budget; ``max_pending``
      readings kept for unprocessed steps.
    Outliers (estimator.online.estimator module docstring, Readings)
      ``outlier_gate`` [σ]: a reading whose squared Mahalanobis distance d² = rᵀ R⁻¹ r (r: the reading
      less its prediction, R: its covariance) exceeds outlier_gate² (a chi-square statistic against a
      threshold) is dropped as an ``outlier`` (null: no gate). R leaves out the prediction's own
      uncertainty, which a fast motion makes large for the readings of q̈ and λ (the prediction holds
      q̈ over a step; configs/estimator/README.md gives the figures of clean runs), so the default
      gates gross errors only. After ``outlier_release``
      outliers in a row from one sensor its readings are taken again until one passes the gate (the
      prediction, not the sensor, was off).
    """

    kind: str = "smoother"
    rate: float = 1000.0
    lag: int = 10
    delay_steps: float = 0.5
    integrator_order: int = 2
    unknown_forces: tuple[str, ...] = ()
    force_random_walk: float | str = AUTO
    force_rate: float | None = None
    force_sigma: float = 100.0
    force_model: str = AUTO
    gravity_sigma: float | str | None = AUTO
    gravity_random_walk: float | str = AUTO
    mass_sigma: float | str | None = AUTO
    mass_random_walk: float | str = AUTO
    length_sigma: float | str | None = AUTO
    length_random_walk: float | str = AUTO
    friction_sigma: float | str | None = AUTO
    friction_random_walk: float | str = AUTO
    friction_coordinates: tuple[str, ...] = ()
    payload: str | None = None
    payload_mass_sigma: float | str = AUTO
    payload_offset_sigma: float | str = AUTO
    payload_random_walk: float | str = AUTO
    dynamics: bool = True
    dynamics_sigma: float | str = AUTO
    acceleration_noise: float | str = AUTO
    force_noise: tuple[tuple[str, float], ...] = ()
    wrenches: tuple[str, ...] = ()
    wrench_sigma: float = 100.0
    wrench_random_walk: float | str = AUTO
    jerk_random_walk: float | str = AUTO
    constraint_sigma: float = 1e-5
    velocity_constraint_sigma: float = 3e-4
    acceleration_constraint_sigma: float = 1e-2
    integrator_sigma: float = 1e-6
    startup_timeout: float = 0.05
    startup_span: float = 0.05
    initial_state: tuple[tuple[str, float], ...] = ()
    initial_velocity: tuple[tuple[str, float], ...] = ()
    position_sigma: float = 1e-2
    guess_sigma: float | str = AUTO
    velocity_sigma: float = 1.0
    free_sigma: float = 1e3
    relinearize_threshold: float | None = None
    factorization: str = "QR"
    linearization_tolerance: float = 1.0
    max_relinearizations: int = 3
    publish_sigmas: bool = False
    output_delay: int = 0
    latency_budget_ms: float = 1.0
    max_coalesce: int = 4
    recover_steps: int = 200
    recover_fraction: float = 0.5
    max_pending: int = 10_000
    outlier_gate: float | None = 3000.0
    outlier_release: int = 5
    observer_gain: float = OBSERVER_GAIN

    def __post_init__(self) -> None:
        positive = ("rate", "force_sigma", "wrench_sigma",
                    "constraint_sigma", "velocity_constraint_sigma", "acceleration_constraint_sigma", "integrator_sigma",
                    "startup_timeout", "position_sigma", "velocity_sigma",
                    "free_sigma", "latency_budget_ms", "linearization_tolerance", "observer_gain")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise MbstateError(f"estimator.{name}: must be a positive number, got {shown(getattr(self, name))}")
        for name, maximum in MAXIMA.items():
            if not getattr(self, name) <= maximum:
                raise MbstateError(f"estimator.{name}: must be at most {maximum:g}, got {shown(getattr(self, name))}")
        checks = (("lag", self.lag >= 1, "at least 1 step"), ("delay_steps", 0.0 <= self.delay_steps < 1.0,
                  "in [0, 1)"), ("integrator_order", self.integrator_order in (2, 3), "2 or 3"),
                  ("relinearize_threshold", self.relinearize_threshold is None or self.relinearize_threshold >= 0.0,
                   "null or at least 0"),
                  ("factorization", self.factorization in FACTORIZATIONS, f"one of {', '.join(FACTORIZATIONS)}"),
                  ("kind", self.kind in KINDS, f"one of {', '.join(KINDS)}"),
                  ("force_model", self.force_model in CHOICES["force_model"],
                   f"one of {', '.join(CHOICES['force_model'])}"),
                  *((key, getattr(self, key) == AUTO or getattr(self, key) > 0.0, "auto or a positive number")
                    for key in (*WALK_STARTS, *SCALED, "wrench_random_walk")),
                  ("max_relinearizations", self.max_relinearizations >= 0, "at least 0"),
                  ("output_delay", 0 <= self.output_delay <= self.most_output_delay,
                   f"in [0, lag + 1 − max_coalesce = {self.most_output_delay}] steps (the step it holds back must "
                   "still be in the window after a coalesced update)"),
                  ("acceleration_noise", self.acceleration_noise == AUTO or self.acceleration_noise >= 0.0,
                   "auto or at least 0"),
                  ("force_noise", all(np.isfinite(s) and s >= 0.0 for _, s in self.force_noise),
                   "a map of coordinate or actuator names to densities of at least 0"),
                  ("force_rate", self.force_rate is None or self.force_rate > 0.0, "null or a positive number"),
                  *((key, getattr(self, key) in (None, AUTO) or getattr(self, key) > 0.0,
                     "auto, null or a positive number") for key in MODEL_STATES),
                  *((key, getattr(self, key) == AUTO or getattr(self, key) >= 0.0, "auto or at least 0")
                    for key in (*MODEL_WALKS.values(), *PAYLOAD_WALKS)),
                  *((key, getattr(self, key) == AUTO or getattr(self, key) > 0.0, "auto or a positive number")
                    for key in PAYLOAD_SIZES),
                  ("payload", self.payload is None or self.kind == "smoother",
                   "null with a filter (kind: smoother carries the payload state)"),
                  ("wrenches", not self.wrenches or self.kind in WRENCH_KINDS,
                   "empty with kind error_ekf, ukf or null_jerk (the smoother and the momentum observer estimate "
                   "external wrenches)"),
                  ("startup_span", 0.0 <= self.startup_span <= 10.0, "in [0, 10] s"),
                  ("max_coalesce", self.max_coalesce >= 1, "at least 1"), ("recover_steps", self.recover_steps >= 1,
                  "at least 1"), ("recover_fraction", 0.0 < self.recover_fraction <= 1.0, "in (0, 1]"),
                  ("max_pending", self.max_pending >= 1, "at least 1"),
                  ("outlier_gate", self.outlier_gate is None or self.outlier_gate > 0.0, "null or a positive number"),
                  ("outlier_release", self.outlier_release >= 1, "at least 1"))
        for name, ok, requirement in checks:
            if not ok:
                raise MbstateError(f"estimator.{name}: must be {requirement}, got {shown(getattr(self, name))}")
        if not self.dynamics:
            needing = [name for name in DYNAMICS_KEYS if getattr(self, name) not in (None, (), AUTO)]
            if needing:
                raise MbstateError(f"estimator.{needing[0]}: needs the dynamics (dynamics: true): the "
                                   "kinematics-only estimator has no equations of motion for it to act on")
        if self.lag < self.integrator_order - 1:
            raise MbstateError(f"estimator.lag: integrator order {self.integrator_order} needs a lag of at least "
                               f"{self.integrator_order - 1} steps, got {self.lag}")

    @property
    def force_walk(self) -> float:
        """K, the random-walk density of the unknown forces (from ``force_rate`` when it is given; auto: its
        start value)."""
        if self.force_rate is not None:
            return np.sqrt(FORCE_RATE_TIME) * self.force_rate
        return WALK_STARTS["force_random_walk"] if self.force_random_walk == AUTO else self.force_random_walk

    @property
    def jerk_walk(self) -> float:
        """D, the white-jerk density of the walked accelerations (auto: its start value)."""
        return WALK_STARTS["jerk_random_walk"] if self.jerk_random_walk == AUTO else self.jerk_random_walk

    @property
    def filter_jerk_walk(self) -> float:
        """The null_jerk filter's white-jerk density: ``jerk_random_walk``, or (auto) FILTER_JERK (the filter does
        not match it to the motion)."""
        return FILTER_JERK if self.jerk_random_walk == AUTO else self.jerk_random_walk

    @property
    def acceleration_density(self) -> float:
        """A, the density of the white acceleration noise (auto: its start value, ACCELERATION_START)."""
        return ACCELERATION_START if self.acceleration_noise == AUTO else self.acceleration_noise

    @property
    def adapts_force_walk(self) -> bool:
        """K follows the estimated forces (estimator.online.walk_scale): ``force_random_walk`` auto and no
        ``force_rate``."""
        return self.force_random_walk == AUTO and self.force_rate is None

    def with_force_model(self, jerk_applies: bool) -> EstimatorConfig:
        """This configuration with ``force_model`` auto resolved: ``jerk`` where it applies (the unknown forces
        act on independent coordinates), else ``smooth``."""
        if self.force_model != AUTO:
            return self
        return replace(self, force_model="jerk" if jerk_applies else "smooth")

    @property
    def force_rms_rate(self) -> float:
        """The unknown forces' typical rate of change that K stands for: K / √FORCE_RATE_TIME."""
        return self.force_walk / np.sqrt(FORCE_RATE_TIME)

    @property
    def force_rate_walk(self) -> float:
        """J, the random-walk density of Ḟ in the smooth force model: K / FORCE_RATE_TIME."""
        return self.force_rms_rate / np.sqrt(FORCE_RATE_TIME)

    def with_model_states(self, gravity: bool, masses: bool, lengths: bool, friction: bool = True) -> EstimatorConfig:
        """This configuration with each ``auto`` model-error size resolved: MODEL_STATES' size where its state
        applies — the smoother with the dynamics, a model not said exact (``acceleration_noise`` above 0), no
        unknown forces (which take up the same model error) and a window of at least STATES_LAG steps (in a
        shorter one the states take up a start's error as readily as a model's), and a gravity (``gravity``),
        two bodies with mass (``masses``), a bar held at its length (``lengths``) or an independent coordinate
        (friction; ``friction`` False: a model whose model-error states are left off, a spatial tree for now)
        in the mechanism — else null."""
        states = (self.kind == "smoother" and self.dynamics and self.acceleration_noise != 0.0
                  and not self.unknown_forces and self.lag >= STATES_LAG)
        applies = {"gravity_sigma": gravity, "mass_sigma": masses, "length_sigma": lengths, "friction_sigma": friction}
        return replace(self, **{key: size if states and applies[key] else None
                                for key, size in MODEL_STATES.items() if getattr(self, key) == AUTO})

    def model_walk(self, size_key: str) -> float:
        """The walk density of the model-error state sized by ``size_key`` (a MODEL_WALKS key; the state
        carried, its size a number): its ``*_random_walk``, or (auto) size / √MODEL_MEMORY."""
        walk = getattr(self, MODEL_WALKS[size_key])
        return getattr(self, size_key) / np.sqrt(MODEL_MEMORY) if walk == AUTO else walk

    def payload_sigmas(self, body_mass: float, reach: float) -> tuple[np.ndarray, np.ndarray]:
        """(start σ, walk density) of θ = (m, h, Θ): σ_m, σ_h = σ_m σ_c, σ_Θ = σ_m σ_c² from the ``payload_*``
        keys or (auto) σ_m ``body_mass`` [kg], σ_c ``reach`` [m]; the walks each σ times
        ``payload_random_walk`` (auto: 1/√MODEL_MEMORY; the class docstring)."""
        mass, offset = (getattr(self, key) if getattr(self, key) != AUTO else scale
                        for key, scale in zip(PAYLOAD_SIZES, (body_mass, reach)))
        sigmas = np.array([mass] + [mass * offset] * 3 + [mass * offset ** 2] * 6)
        walk = 1.0 / np.sqrt(MODEL_MEMORY) if self.payload_random_walk == AUTO else self.payload_random_walk
        return sigmas, walk * sigmas

    @property
    def most_output_delay(self) -> int:
        """The largest ``output_delay``: a step held back must still be in the window after an update that
        moves it by ``max_coalesce`` steps."""
        return max(0, self.lag + 1 - self.max_coalesce)

    @property
    def dt(self) -> float:
        """Grid step [s]."""
        return 1.0 / self.rate

    @classmethod
    def from_section(cls, section: Section, mech: Model) -> EstimatorConfig:
        """Read the ``estimator:`` section (every key optional, defaults above); MbstateError naming the
        key for an unknown key, a bad value or an unknown actuator in ``unknown_forces``."""
        values: dict = {}
        for spec in fields(cls):
            if not section.has(spec.name):
                continue
            name, default = spec.name, spec.default
            if name == "unknown_forces":
                values[name] = _distinct_names(section, name, [a for a, _ in actuators(mech)], "actuator")
            elif name == "friction_coordinates":
                values[name] = _distinct_names(section, name, mech.coordinate_names, "coordinate")
            elif name == "wrenches":
                if section.raw(name) and not isinstance(mech, SpatialModel):
                    raise section.error(name, "external wrench states need a URDF model: a planar mechanism has no "
                                              "named frames")
                values[name] = _distinct_names(section, name, movable_frames(mech) if section.raw(name) else (),
                                               "frame")
            elif name in ("initial_state", "initial_velocity"):
                values[name] = _coordinate_values(section, mech, name)
            elif name == "force_noise":
                values[name] = _force_noise(section, mech)
            elif name in NULLABLE and section.raw(name) is None:
                values[name] = None
            elif name == "payload":
                values[name] = _payload_link(section, mech)
            elif name in (*MODEL_STATES, *MODEL_WALKS.values(), *WALK_STARTS, *SCALED, *PAYLOAD_SIZES, *PAYLOAD_WALKS,
                          "acceleration_noise", "wrench_random_walk"):
                if isinstance(section.raw(name), str) and section.raw(name) != AUTO:
                    raise section.error(name, f"must be auto or a number, got {shown(section.raw(name), 40)}")
                values[name] = AUTO if section.raw(name) == AUTO else section.number(name)
            elif isinstance(default, bool):
                values[name] = section.flag(name, default)
            elif isinstance(default, str):
                values[name] = section.choice(name, CHOICES[name], default)
            elif isinstance(default, int):
                number = section.number(name, default)
                if number != int(number):
                    raise section.error(name, f"must be a whole number, got {number:g}")
                values[name] = int(number)
            else:
                values[name] = section.number(name, default)
        if section.has("force_rate") and section.has("force_random_walk") and values.get("force_rate") is not None:
            raise section.error("force_rate", "give force_rate or force_random_walk, not both")
        section.finish()
        try:
            return cls(**values)
        except MbstateError as exc:
            key, _, problem = str(exc).partition(": ")
            raise section.error(key.removeprefix("estimator."), problem) from None


def _distinct_names(section: Section, key: str, known: Sequence[str], noun: str) -> tuple[str, ...]:
    """``key``: a list of distinct names among ``known`` (``noun``: what they name, for the errors):
    ``unknown_forces`` of the actuators, ``friction_coordinates`` of the coordinates, ``wrenches`` of the frames."""
    names = section.raw(key)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise section.error(key, f"must be a list of {noun} names, got {shown(names, 60)}")
    for name in names:
        if name not in known:
            raise section.error(key, f"unknown {noun} {shown(name, 40)} (known: {', '.join(known)[:200] or 'none'})")
    if len(set(names)) != len(names):
        article = "an" if noun[0] in "aeiou" else "a"
        raise section.error(key, f"{article} {noun} is repeated: {', '.join(names)[:200]}")
    return tuple(names)


def _payload_link(section: Section, mech: Model) -> str:
    """``payload``: the name of a link of ``mech`` that moves (estimator.model_protocol.payload_terms)."""
    link = section.text("payload")
    try:
        payload_terms(mech, link)
    except MbstateError as exc:
        raise section.error("payload", str(exc).partition("estimator.payload: ")[2]) from None
    return link


def _force_noise(section: Section, mech: Model) -> tuple[tuple[str, float], ...]:
    """``force_noise``: a map from coordinate or actuator names of ``mech`` to densities of at least 0."""
    if not isinstance(section.raw("force_noise"), dict):
        raise section.error("force_noise", f"must be a map of coordinate or actuator names to densities, got "
                                           f"{shown(section.raw('force_noise'), 60)}")
    values = section.section("force_noise")
    known = [*mech.coordinate_names, *(a for a, _ in actuators(mech))]
    for name in values.data:
        if name not in known:
            raise section.error("force_noise", f"unknown coordinate or actuator {shown(name, 40)} (known: "
                                               f"{', '.join(known)[:200]})")
    return tuple((str(name), values.number(name, minimum=0.0)) for name in values.data)


def _coordinate_values(section: Section, mech: Model, key: str) -> tuple[tuple[str, float], ...]:
    """``initial_state``: a map from coordinate names of ``mech`` to finite numbers, or the name of one
    of the mechanism file's ``configurations``; ``initial_velocity``: such a map, or ``rest`` (every
    coordinate's velocity zero)."""
    values = section.raw(key)
    if key == "initial_state":
        named, kind, where = dict(mech.configurations), "configuration", "the mechanism file's configurations"
    else:
        named, kind, where = {"rest": tuple((c, 0.0) for c in mech.coordinate_names)}, "state", "known"
    if isinstance(values, str):
        if values not in named:
            raise section.error(key, f"unknown {kind} {shown(values, 40)} ({where}: {', '.join(named)[:200] or 'none'})")
        return named[values]
    if not isinstance(values, dict):
        raise section.error(key, f"must be a map of coordinate names to values or a {kind} name, got {shown(values, 60)}")
    pairs = []
    for name, value in values.items():
        if name not in mech.coordinate_names:
            known = ", ".join(mech.coordinate_names)
            raise section.error(key, f"unknown coordinate {shown(name, 40)} (known: {known[:200]})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise section.error(f"{key}.{name}", f"must be a finite number, got {shown(value, 40)}")
        pairs.append((name, float(value)))
    return tuple(pairs)
