"""The model rows of one grid step and their weights: with dynamics, the position, velocity and
acceleration constraints and the equations of motion with the unknown forces on the stacked state
(estimator.factors.estimation_state.dynamics_rows); kinematics only, the three constraint levels
(kinematic_rows). Each row divided by its σ (estimator.online.config) is one whitened row of the
step's factor (estimator.factors.observation_stack)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from estimator.errors import MbstateError
from estimator.factors.estimation_state import EstimationLayout, MassTerms, dynamics_rows, kinematic_rows
from estimator.factors.observation_stack import RowFunction, weighted_model_rows
from estimator.lengths import BodyLengthTerms
from estimator.model_protocol import Model, actuators
from estimator.online.config import EstimatorConfig
from estimator.online.scales import dynamics_sigma
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.payload import PayloadTerms


@dataclass(frozen=True)
class StepModel:
    """``rows(x, jac)``: the unweighted model rows of a stacked state x and their Jacobian;
    ``weights``: 1/σ of each row; ``plausibility``: σ/σ' of each row with σ' = max(σ, the default σ),
    the physical scale on which ``off_by`` measures an estimate that has left the mechanism (rows
    tightened below the defaults do not make that check stricter)."""

    rows: RowFunction
    weights: np.ndarray
    plausibility: np.ndarray

    def weighted(self, x: np.ndarray) -> np.ndarray:
        """The rows at x, each over its σ."""
        return weighted_model_rows(self.rows, self.weights, x, jac=False)[0]

    def off_by(self, x: np.ndarray, weighted: np.ndarray | None = None) -> float:
        """max |row / σ'| at x (``weighted``: the rows at x over their σ, when known): how far x is off
        the model on the scale of the default σ or looser."""
        rows = self.weighted(x) if weighted is None else weighted
        return float(np.max(np.abs(rows * self.plausibility)))


def step_model(mech: Model, layout: EstimationLayout, config: EstimatorConfig, rows: Sequence[int],
               force_coordinates: Sequence[int], masses: MassTerms | None,
               lengths: BodyLengthTerms | None, payload: PayloadTerms | None = None,
               frames: FrameWrenches | None = None) -> StepModel:
    """The model rows on ``layout`` under ``config``'s σ: the independent constraint ``rows`` at the
    three levels, and with ``config.dynamics`` the equations of motion with unknown forces on
    ``force_coordinates`` (and the gravity error g and the mass errors of the bodies of ``masses`` when
    ``layout`` carries them, the ``payload``'s joint forces when it carries its θ, and the external wrenches
    on the frames of ``frames`` when it carries w); the length errors of the bodies of ``lengths`` when it
    carries them."""
    if config.dynamics:
        selection = np.eye(mech.n)[:, list(force_coordinates)]  # E: column j the unit vector of force j's coordinate
        if layout.gravity:  # g, the relative gravity error, loads the model's gravity force Q_g
            selection = np.column_stack((selection, mech.gravity_z[:mech.n]))
        function = partial(dynamics_rows, mech, layout, selection, masses, lengths, payload, frames=frames)
    else:
        function = partial(kinematic_rows, mech, np.asarray(rows), layout, lengths)
    sigmas, defaults = (row_sigmas(mech, len(rows), c) for c in (config, EstimatorConfig(dynamics=config.dynamics)))
    return StepModel(function, 1.0 / sigmas, sigmas / np.maximum(sigmas, defaults))


def row_sigmas(mech: Model, size: int, config: EstimatorConfig) -> np.ndarray:
    """σ of each model row under ``config``'s σ keys: ``size`` independent constraint rows at each
    level, and with the dynamics the n equations of motion between the velocity and acceleration
    rows (the order of step_bundle.step_sigmas), each with its σ (dynamics_sigmas)."""
    position, velocity, acceleration = (np.full(size, s) for s in (config.constraint_sigma,
                                                                   config.velocity_constraint_sigma,
                                                                   config.acceleration_constraint_sigma))
    if config.dynamics:
        return np.concatenate((position, velocity, dynamics_sigmas(mech, config), acceleration))
    return np.concatenate((position, velocity, acceleration))


def dynamics_sigmas(mech: Model, config: EstimatorConfig) -> np.ndarray:
    """σ of each coordinate's equation of motion: ``dynamics_sigma`` (estimator.online.scales), and
    hypot(dynamics_sigma, S_i/√h) where ``force_noise`` gives coordinate i (or an actuator on it) the
    density S_i: a white generalized force held over the step h, whose variance per step is S_i²/h
    (EstimatorConfig, Model)."""
    sigmas = np.full(mech.n, dynamics_sigma(mech, config))
    on = dict(actuators(mech)) | {c: i for i, c in enumerate(mech.coordinate_names)}
    for name, density in config.force_noise:
        if name not in on:
            raise MbstateError(f"estimator.force_noise: unknown coordinate or actuator {name!r} (known: "
                               f"{', '.join(on)[:200]})")
        sigmas[on[name]] = np.hypot(sigmas[on[name]], density / np.sqrt(config.dt))
    return sigmas
