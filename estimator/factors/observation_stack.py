"""Sensor readings as rows of one factor on the stacked state x_k (estimator.factors.estimation_state).

A reading z of sensor s stamped t = t_k + δ (|δ| ≤ h/2) attaches to the nearest step k and is
compared with the state carried to its stamp by x_k's own derivatives (Taylor, exact to O(δ³) in q):

    q(t) = q + δ q̇ + δ²/2 q̈,   q̇(t) = q̇ + δ q̈,   q̈, λ, F, b, w unchanged,
    e = W (h_s(x(t)) + b_s − z)   (wrapped for angles),  ∂e/∂x = W (∂h/∂x(t)) T(δ),

with W the whitening of the sensor's σ (W = 1/σ) or of the reading's covariance (W = L⁻¹,
cov = L Lᵀ). So every step needs one variable only and no interpolating factor between two steps.

All rows of a step — the model rows and every reading's — are whitened here and stacked into ONE
GTSAM factor with a unit noise model: one Python callback per step instead of one per reading.
A robust loss (Huber, Cauchy) is applied per reading by iteratively reweighted least squares:
e and ∂e/∂x are scaled by √w(|e|) at each linearization, w the M-estimator weight of
sensors.base.robust_weight (Huber min(1, k/|e|), Cauchy 1/(1 + (|e|/k)²)), which is how GTSAM's
robust noise model whitens a linearized factor; only the error *value* GTSAM reports differs (w|e|²
instead of 2ρ(e)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from dataclasses import dataclass

import numpy as np
from numba import njit

from estimator.factors.estimation_state import EstimationLayout
from sensors.base import Sensor, robust_weight

RowFunction = Callable[[np.ndarray, bool], tuple[np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class SensorTerm:
    """How sensor ``sensor`` reads x: its blocks (sensor.variables) stacked, a = T(δ) x with
    T(δ) = T0 + δ T1 + δ²/2 T2 = Σ_i δ^i/i! ``lift[i]`` (the Taylor shift of q and q̇; selections of
    λ and F into their full vectors), ``spans`` the (start, stop) of each block in a, the bias
    columns and the configured σ."""

    sensor: Sensor
    lift: np.ndarray  # (3, Σ widths, layout.size)
    spans: tuple[tuple[int, int], ...]
    bias: slice | None
    sigma: float

    def whitening(self, cov: np.ndarray | None) -> np.ndarray:
        """W with Wᵀ W = cov⁻¹: I/σ of the configuration when ``cov`` is None."""
        return self.white if cov is None else np.linalg.inv(np.linalg.cholesky(cov))

    @cached_property
    def white(self) -> np.ndarray:
        """I/σ, the whitening of the configured σ."""
        return np.eye(self.sensor.dimension) / self.sigma

    @cached_property
    def robust(self) -> tuple[int, float]:
        """The sensor's loss for the compiled rows: (0 none, 1 Huber, 2 Cauchy; threshold k)."""
        loss = self.sensor.params.loss
        return (0, 1.0) if loss is None else (loss.code, loss.k)


def sensor_term(sensor: Sensor, index: int, layout: EstimationLayout, m: int,
                actuators: int) -> SensorTerm | None:
    """The term of sensor number ``index`` in ``layout`` (m constraint rows, ``actuators`` actuators in the
    model); None when it reads a block the state does not carry (λ or F without dynamics, a known actuator)."""
    n, identity = layout.n, np.eye(layout.n)
    lifts, spans, start = [], [], 0
    for variable in sensor.variables:
        if variable == "g":  # the gravity error: its column, or 0 for a state without it
            lift = np.zeros((3, 1, layout.size))
            lift[0, 0, layout.gravity_error] = 1.0
        elif variable in ("w", "m"):  # the external wrenches, the link-mass errors ν (a sensor made by
            # with_wrenches on the layout's frames, with_masses on its links)
            columns = np.arange(layout.size)[layout.wrench if variable == "w" else layout.mass_error]
            lift = np.zeros((3, len(columns), layout.size))
            lift[0, np.arange(len(columns)), columns] = 1.0
        elif variable in "qva":
            lift = np.zeros((3, n, layout.size))
            first = "qva".index(variable)  # q(t) = q + δ q̇ + δ²/2 q̈, q̇(t) = q̇ + δ q̈, q̈(t) = q̈
            for power, block in enumerate(range(first, 3)):
                lift[power, :, block * n:(block + 1) * n] = identity
        else:
            entries = np.asarray(layout.rows if variable == "l" else layout.forces, int)
            columns = np.arange(layout.size)[layout.lam if variable == "l" else layout.force]
            full = m if variable == "l" else actuators
            gradient = sensor.measurement(np.zeros(full), jac=True)[1][0]
            if np.any(np.delete(gradient, entries, axis=1)):
                return None
            lift = np.zeros((3, full, layout.size))
            lift[0, entries, columns] = 1.0
        lifts.append(lift)
        spans.append((start, start + lift.shape[1]))
        start += lift.shape[1]
    bias = layout.bias_of(index) if sensor.params.bias_state else None
    return SensorTerm(sensor, np.concatenate(lifts, axis=1), tuple(spans), bias,
                      sensor.params.noise.sample_sigma(sensor.params.rate))


@dataclass(frozen=True)
class Observation:
    """One reading on its step: the sensor term, value z, whitening W (a scalar is taken as W I) and
    stamp offset δ = t − t_k [s]."""

    term: SensorTerm
    z: np.ndarray
    whitening: float | np.ndarray
    delta: float

    def __post_init__(self) -> None:
        if np.ndim(self.whitening) == 0:
            object.__setattr__(self, "whitening", self.whitening * np.eye(self.term.sensor.dimension))


@njit(cache=True)
def _shifted(lift: np.ndarray, delta: float) -> np.ndarray:
    """T(δ) = T0 + δ T1 + δ²/2 T2."""
    return lift[0] + delta * lift[1] + (0.5 * delta * delta) * lift[2]


@njit(cache=True)
def _arguments(lift: np.ndarray, delta: float, x: np.ndarray) -> np.ndarray:
    """a = T(δ) x, the sensor's blocks at its stamp."""
    return _shifted(lift, delta) @ x


@njit(cache=True)
def _whitened(residual: np.ndarray, d_arguments: np.ndarray, lift: np.ndarray, delta: float, bias: int,
              white: np.ndarray, loss: int, k: float) -> tuple[np.ndarray, np.ndarray, float]:
    """e = √w W r and ∂e/∂x = √w W ((∂h/∂a) T(δ) + [I on the bias columns from ``bias``, if ≥ 0]),
    w the M-estimator weight at |W r| (sensors.base.robust_weight: ``loss`` 0 none, 1 Huber, 2 Cauchy;
    threshold k); and |W r|²."""
    jacobian = d_arguments @ _shifted(lift, delta)
    if bias >= 0:
        for r in range(residual.shape[0]):
            jacobian[r, bias + r] += 1.0
    error = white @ residual
    jacobian = white @ jacobian
    squared = error @ error
    scale = np.sqrt(robust_weight(loss, k, np.sqrt(squared)))
    return scale * error, scale * jacobian, squared


def whitened_reading(observation: Observation, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``observation_rows`` at x, and the reading's squared Mahalanobis distance from x there, as
    ``squared_innovation`` gives it at the reading's own δ: one evaluation of the sensor for both."""
    term, sensor, delta = observation.term, observation.term.sensor, float(observation.delta)
    arguments = _arguments(term.lift, delta, x)
    h, jacobians = sensor.measurement(*[arguments[a:b] for a, b in term.spans], jac=True)
    bias = -1
    if term.bias is not None:
        h, bias = h + x[term.bias], term.bias.start
    return _whitened(sensor.residual(h, observation.z), jacobians[0] if len(jacobians) == 1
                     else np.concatenate(jacobians, axis=1), term.lift, delta, bias, observation.whitening,
                     *term.robust)


def observation_rows(observation: Observation, x: np.ndarray,
                     jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Whitened, reweighted e and ∂e/∂x of one reading (module docstring): the blocks at the reading's
    stamp are a = T(δ) x, so ∂e/∂x = W (∂h/∂a) T(δ) (+ W on the bias columns).

    The Taylor shift, Jacobian placement, whitening and loss run in two compiled calls and the
    sensors' measurements are compiled (sensors.geometry, sensors.accelerometer): done in numpy,
    Python overhead would dominate every reading. T(δ) is applied here, not formed once per reading
    on arrival in ``add``, which cost more. The Jacobians are formed even for ``jac`` False (GTSAM
    asks for the error alone rarely), so there is one path."""
    error, jacobian, _ = whitened_reading(observation, x)
    return error, jacobian if jac else None


def predicted(term: SensorTerm, x: np.ndarray, delta: float = 0.0) -> np.ndarray:
    """h_s(x(t)) + b_s: the value of an exact reading at offset δ (module docstring), whose residual and
    robust loss are zero (estimator.online.observability evaluates the rows of such readings)."""
    arguments = _arguments(term.lift, float(delta), x)
    h, _ = term.sensor.measurement(*[arguments[a:b] for a, b in term.spans], jac=False)
    return h + x[term.bias] if term.bias is not None else h


def squared_innovation(observation: Observation, x: np.ndarray, delta: float) -> float:
    """|W (h_s(x(t)) + b_s − z)|², wrapped for angles, without the robust loss: the reading's squared
    Mahalanobis distance (in its own covariance) from the state x carried by δ to its stamp."""
    term = observation.term
    white = observation.whitening @ term.sensor.residual(predicted(term, x, delta), observation.z)
    return float(white @ white)


def weighted_model_rows(model: RowFunction, weights: np.ndarray, x: np.ndarray,
                        jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """The model rows divided by their σ (``weights`` = 1/σ) and their Jacobian."""
    e, d = model(x, jac)
    return e * weights, (d * weights[:, None] if jac else None)


def stacked_step_error(model: RowFunction | None, model_weights: np.ndarray | None,
                       observations: Sequence[Observation]) -> Callable:
    """e(x) = [model rows / σ; every reading's whitened rows] and [∂e/∂x] — one factor's error function
    (unit noise). ``model`` None: readings only (a late reading's own factor)."""
    observations = tuple(observations)

    def error(x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        parts = [weighted_model_rows(model, model_weights, x, jac)] if model is not None else []
        parts += [observation_rows(obs, x, jac) for obs in observations]
        e = np.concatenate([p[0] for p in parts])
        return (e, [np.concatenate([p[1] for p in parts])]) if jac else (e, None)

    return error


class LinearizedStep:
    """The rows of one step's factor, linearized at the step's initial guess ``x0`` piece by piece: the
    model rows when the step is drafted, each reading's rows when it is added. The online estimator
    drafts step k as soon as step k − 1 is solved, so a step's readings are linearized as they arrive
    and its update only stacks them (``linearization``); ``error_function`` is the whole e(x) of
    ``stacked_step_error``, for GTSAM's relinearizations away from x0."""

    def __init__(self, model: RowFunction, model_weights: np.ndarray, x0: np.ndarray) -> None:
        self.model, self.model_weights, self.x0 = model, model_weights, x0
        self.observations: list[Observation] = []
        self._rows = [weighted_model_rows(model, model_weights, x0)]

    def add(self, observation: Observation, rows: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Add a reading and its rows at x0 (``rows``: already evaluated there, else evaluated here)."""
        self.observations.append(observation)
        self._rows.append(rows if rows is not None else observation_rows(observation, self.x0))

    def drop_oldest(self) -> None:
        """Forget the oldest reading (the estimator's bound on pending readings)."""
        del self.observations[0], self._rows[1]

    def linearization(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """(e(x0), [∂e/∂x(x0)]), as ``error_function`` gives them at x0."""
        return np.concatenate([r[0] for r in self._rows]), [np.concatenate([r[1] for r in self._rows])]

    def error_function(self) -> Callable:
        return stacked_step_error(self.model, self.model_weights, self.observations)

    def linearization_residual(self, x: np.ndarray, exact: np.ndarray) -> np.ndarray:
        """e(x) − (e(x0) + ∂e/∂x(x0) (x − x0)) over the model rows (the first rows of the factor), ``exact``
        their e(x): how far their linearization at x0 is off at x, in σ (the rows are whitened). The
        readings' rows are not taken: one compiled call instead of one per reading, and the model rows
        are where the curvature is."""
        error, jacobian = self._rows[0]
        return exact - error - jacobian @ (x - self.x0)

    def at(self, x: np.ndarray) -> LinearizedStep:
        """The same rows (model and readings) linearized at ``x`` instead."""
        step = LinearizedStep(self.model, self.model_weights, x)
        for observation in self.observations:
            step.add(observation)
        return step
