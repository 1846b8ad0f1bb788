"""Grid steps drafted before they are due (the estimator.online.estimator module docstring, Steps
drafted ahead): each step's initial guess predicted from the states before it, its model rows
linearized there (observation_stack.LinearizedStep; its readings are added as they arrive) and its
process factor (the integrator rows and the random walks, estimator.factors.estimation_state), or
at step 0 the start prior. Each step's independent coordinates are chosen at its guess
(estimator.online.partitions)."""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
from dataclasses import dataclass

import gtsam
import numpy as np

from estimator.dynamics.integrators import ADAMS_MOULTON
from estimator.dynamics.prediction import HOLD, prediction_coefficients, prediction_matrices
from estimator.factors.estimation_state import EstimationLayout, process_relation
from estimator.factors.native import LinearRelation
from estimator.factors.observation_stack import LinearizedStep, Observation
from estimator.factors.reduced_state import StepRelation, step_relation
from estimator.online.config import FORCE_RATE_TIME, FORCE_STEP_SHARE, EstimatorConfig
from estimator.online.partitions import Partitions
from estimator.online.step_model import StepModel
from sensors.base import Sensor


@dataclass(frozen=True)
class DraftStep:
    """A grid step made ready before it is due: its initial guess (the prediction), its factor's rows
    linearized there so far, and its process (or start-prior) factor."""

    step: int
    rows: LinearizedStep
    process: gtsam.NonlinearFactor


class Drafter:
    """Predicts and drafts the steps of one estimator (its layout, grid step and integrator order, the
    independent coordinates of its steps)."""

    def __init__(self, config: EstimatorConfig, layout: EstimationLayout, partitions: Partitions, model: StepModel,
                 sensors: Sequence[Sensor], force_coordinates: Sequence[int],
                 wrench_walk: np.ndarray | None = None, payload_walks: Sequence[float] = ()) -> None:
        """``wrench_walk``: K_w of each entry of the external wrenches w (estimator.online.wrench_states;
        None: x carries none); ``payload_walks``: the walk density of each column of the payload θ."""
        self.config, self.layout, self.partitions, self.model = config, layout, partitions, model
        self.wrench_walk = np.zeros(0) if wrench_walk is None else wrench_walk
        self.payload_walks = payload_walks
        self.sensors, self.force_coordinates = sensors, np.asarray(force_coordinates, int)
        self.force_walk = np.full(len(layout.forces), config.force_walk)  # K of each unknown force
        self.jerk_walk = np.full(len(self.jerk_columns), config.jerk_walk)  # D of each walked acceleration
        self.acceleration_noise = config.acceleration_density  # A of the steps drafted from now on
        self._walks = self._random_walks()
        self._relations: dict[tuple, StepRelation] = {}
        self.prediction = self._prediction_matrices()

    @property
    def jerk_columns(self) -> np.ndarray:
        """The state columns of the accelerations under a white-jerk walk: the driven coordinates' (``jerk``
        force model), every coordinate's (kinematics only: a step's process walks those it integrates), or
        none."""
        layout = self.layout
        if not self.config.dynamics:
            return 2 * layout.n + np.arange(layout.n)
        if layout.forces and self.config.force_model == "jerk":
            return 2 * layout.n + self.force_coordinates
        return np.zeros(0, int)

    def rescale(self, force_walk: np.ndarray, jerk_walk: np.ndarray) -> None:
        """The process factors of the steps drafted from now on with these densities K and D (the relations
        kept for the partitions seen so far are dropped)."""
        self.force_walk, self.jerk_walk = force_walk.copy(), jerk_walk.copy()
        self._walks = self._random_walks()
        self._relations = {}

    def _random_walks(self) -> tuple[list, list]:
        """(walks, trapezoids) of process_relation that do not depend on the independent coordinates: the
        force model's rows (the driven accelerations' white-jerk walk), the random walks of g, ν, ℓ, c, θ, b and w."""
        config, layout, h = self.config, self.layout, self.config.dt
        walks, trapezoids = [], []
        force_walk = self.force_walk
        if layout.force_rates:  # the smooth force model: F the integral of Ḟ and small steps, Ḟ a random walk
            rate_walk = force_walk / FORCE_RATE_TIME
            walks.append((layout.force_rate, rate_walk * np.sqrt(h)))
            steps = FORCE_STEP_SHARE * force_walk * np.sqrt(h)
            trapezoids.append((layout.force, layout.force_rate, np.maximum(np.hypot(rate_walk * h ** 1.5 / np.sqrt(12.0),
                                                                                     steps), 1e-9)))
        elif layout.forces and config.force_model != "jerk":
            walks.append((layout.force, force_walk * np.sqrt(h)))
        if config.dynamics and len(self.jerk_columns):  # F free, the driven accelerations a white-jerk walk
            walks.append((self.jerk_columns, self.jerk_walk * np.sqrt(h)))
        for size_key, carried, columns in (("gravity_sigma", layout.gravity, layout.gravity_error),
                                           ("mass_sigma", layout.masses, layout.mass_error),
                                           ("length_sigma", layout.lengths, layout.length_error),
                                           ("friction_sigma", layout.frictions, layout.friction)):
            if carried:
                walks.append((columns, max(config.model_walk(size_key) * np.sqrt(h), 1e-9)))
        for column, density in zip(range(layout.payload_state.start, layout.payload_state.stop), self.payload_walks):
            walks.append((np.array([column]), max(density * np.sqrt(h), 1e-9)))
        for i, sensor in enumerate(self.sensors):
            if sensor.params.bias_state:
                walks.append((layout.bias_of(i), max(sensor.params.noise.bias_step_sigma(h), 1e-9)))
        if layout.wrenches:
            walks.append((layout.wrench, self.wrench_walk * np.sqrt(h)))
        return walks, trapezoids

    def process(self, order: int, integrated: tuple[int, ...], layouts: Sequence[EstimationLayout]) -> StepRelation:
        """The native process factor of ``order`` (the first steps use the lower ones) integrating the
        coordinates ``integrated``, on the s of states of ``layouts``, its integrator rows not yet weighted
        (σ 1: ``weighted``). Kept until ``rescale``: a few partitions recur."""
        key = (order, integrated, tuple(tuple(layout.integrated) for layout in layouts))
        if key not in self._relations:
            config, h = self.config, self.config.dt
            layout = dataclasses.replace(self.layout, independent=integrated)
            walks, trapezoids = self._walks
            if not config.dynamics:  # kinematics only: the integrated accelerations a white-jerk walk
                walks = walks + [(2 * layout.n + layout.integrated, self.jerk_walk[list(integrated)] * np.sqrt(h))]
            self._relations[key] = step_relation(process_relation(layout, h, order, [1.0, 1.0], walks, trapezoids),
                                                 layouts)
        return self._relations[key]

    def noise_shape(self, integrated: tuple[int, ...], tangent: np.ndarray) -> np.ndarray:
        """C with Cov z̈ = A² C for a white acceleration of density A (``acceleration_noise``) along the
        mechanism's motion, isotropic in the bodies' angular accelerations (q̈ = T w, Cov w = A² I, T =
        ``tangent``, kinematics.motion_tangent: A rad/s² shared by the bodies, Σ_b Var ω̇_b = dof A²), seen
        through z = q[P] (P = ``integrated``): C = T[P] T[P]ᵀ, the same motion's noise whichever coordinates
        are picked or the file has (a pendulum's angle: C = 1); 0 in the rows and columns of ``driven``."""
        picked = tangent[list(integrated)]
        shape = picked @ picked.T
        driven = self.driven(integrated)
        shape[driven] = 0.0
        shape[:, driven] = 0.0
        return shape

    def driven(self, integrated: tuple[int, ...]) -> np.ndarray:
        """Which coordinates of P = ``integrated`` the acceleration noise leaves out: the driven ones with the
        jerk force model (the forces explain their accelerations)."""
        if self.layout.forces and self.config.force_model == "jerk":
            return np.isin(integrated, self.force_coordinates)
        return np.zeros(len(integrated), bool)

    def weighted(self, relation: StepRelation, integrated: tuple[int, ...], tangent: np.ndarray) -> StepRelation:
        """``relation`` with its integrator rows on z = q[P] (P = ``integrated``) whitened by their
        covariance under the white acceleration of ``noise_shape`` at the density ``acceleration_noise``
        (Cov z̈ = A² C): the position rows get A² h³/12 C, the velocity rows A² h C, each plus
        ``integrator_sigma``² I."""
        config, h, count = self.config, self.config.dt, len(integrated)
        shape = self.noise_shape(integrated, tangent)
        linear = relation.relation
        blocks, rhs = [block.copy() for block in linear.blocks], linear.rhs.copy()
        for level, span in enumerate((h ** 3 / 12.0, h)):
            covariance = self.acceleration_noise ** 2 * span * shape + config.integrator_sigma ** 2 * np.eye(count)
            whitening = np.linalg.inv(np.linalg.cholesky(covariance))
            rows = slice(level * count, (level + 1) * count)
            for block in blocks:
                block[rows] = whitening @ block[rows]
            rhs[rows] = whitening @ rhs[rows]
        return StepRelation(LinearRelation.of_blocks(linear.noise, blocks, rhs))

    def _prediction_matrices(self) -> dict[int, np.ndarray]:
        """For each integrator order p, the P_i with x_k = Σ_i P_i x_{k+1−p+i} (i = 0 … p−2): the
        prediction of estimator.dynamics.prediction with the Adams–Moulton weights of order p, q̈, λ,
        Ḟ and b held from x_{k−1}, and F moved on by h Ḟ_{k−1} (the smooth force model's trapezoid
        with Ḟ held). As matrices: one product a step."""
        layout, h = self.layout, self.config.dt
        matrices = {order: prediction_matrices(prediction_coefficients(h * ADAMS_MOULTON[order], HOLD), layout.n,
                                               layout.size)
                    for order in range(2, self.config.integrator_order + 1)}
        if layout.force_rates:
            for last in (p[-1] for p in matrices.values()):
                last[layout.force, layout.force_rate] += h * np.eye(len(layout.forces))
        return matrices

    def predict(self, k: int, states: dict[int, np.ndarray]) -> np.ndarray:
        """x_k from x_{k−1}, … in ``states`` (``_prediction_matrices``)."""
        order = min(self.config.integrator_order, k + 1)
        terms = [matrix @ states[j] for matrix, j in zip(self.prediction[order], range(k + 1 - order, k))]
        return terms[0] if len(terms) == 1 else sum(terms)

    def draft(self, k: int, guess: np.ndarray, observations: Sequence[Observation],
              prior: StepRelation) -> DraftStep:
        """Step k linearized at ``guess`` with its ``observations`` so far; its process factor on the
        steps before it (``prior`` at step 0)."""
        rows = LinearizedStep(self.model.rows, self.model.weights, guess)
        for observation in observations:
            rows.add(observation)
        if k == 0:
            process = prior.factor([0])
        else:
            order = min(self.config.integrator_order, k + 1)
            stencil, integrated = range(k + 1 - order, k + 1), self.partitions.integrated(k)
            relation = self.process(order, integrated, [self.partitions.layout_of(j) for j in stencil])
            process = self.weighted(relation, integrated, self.partitions.tangents[k]).factor(stencil)
        return DraftStep(k, rows, process)
