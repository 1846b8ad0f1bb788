"""Sensor readings as rows of one factor on the stacked state x_k (estimator.factors.estimation_state).

A reading z of sensor s stamped t = t_k + δ (|δ| ≤ h/2) attaches to the nearest step k and is
compared with the state carried to its stamp by x_k's own derivatives (Taylor, exact to O(δ³) in q):

    q(t) = q + δ q̇ + δ²/2 q̈,   q̇(t) = q̇ + δ q̈,   q̈, λ, F, b unchanged,
    e = W (h_s(x(t)) + b_s − z)   (wrapped for angles),  ∂e/∂x = W (∂h/∂x(t)) T(δ),

with W the whitening of the sensor's σ (W = 1/σ) or of the reading's covariance (W = L⁻¹,
cov = L Lᵀ). So every step needs one variable only and no interpolating factor between two steps.

All rows of a step — the model rows and every reading's — are whitened here and stacked into ONE
GTSAM factor with a unit noise model: one Python callback per step instead of one per reading.
A robust loss (Huber, Cauchy) is applied per reading by iteratively reweighted least squares:
e and ∂e/∂x are scaled by √w(|e|) at each linearization, w the M-estimator weight (Huber
min(1, k/|e|), Cauchy 1/(1 + (|e|/k)²)), which is how GTSAM's robust noise model whitens a
linearized factor; only the error *value* GTSAM reports differs (w|e|² instead of 2ρ(e)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from estimator.factors.estimation_state import EstimationLayout
from sensors.base import SensorModel

RowFunction = Callable[[np.ndarray, bool], tuple[np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class SensorTerm:
    """How sensor ``sensor`` reads x: for each variable block of sensor.variables its kind (``q``,
    ``v``, ``a``, or ``l``/``f`` with the columns of x and the entries of the full vector they fill),
    the bias columns, and the configured σ."""

    sensor: SensorModel
    blocks: tuple[tuple[str, slice | None, np.ndarray | None, int], ...]  # (kind, x columns, entries, full size)
    bias: slice | None
    sigma: float

    def whitening(self, cov: np.ndarray | None) -> float | np.ndarray:
        """W with Wᵀ W = cov⁻¹: the scalar 1/σ of the configuration when ``cov`` is None."""
        return 1.0 / self.sigma if cov is None else np.linalg.inv(np.linalg.cholesky(cov))


def sensor_term(sensor: SensorModel, index: int, layout: EstimationLayout, m: int,
                actuators: int) -> SensorTerm | None:
    """The term of sensor number ``index`` in ``layout`` (m constraint rows, ``actuators`` actuators in the
    model); None when it reads a block the state does not carry (λ or F without dynamics, a known actuator)."""
    blocks = []
    for variable in sensor.variables:
        if variable in "qva":
            blocks.append((variable, None, None, 0))
            continue
        entries = np.asarray(layout.rows if variable == "l" else layout.forces, int)
        columns = layout.lam if variable == "l" else layout.force
        full = m if variable == "l" else actuators
        gradient = sensor.measurement(np.zeros(full), jac=True)[1][0]
        if np.any(np.delete(gradient, entries, axis=1)):
            return None
        blocks.append((variable, columns, entries, full))
    bias = layout.bias_of(index) if sensor.params.bias_state else None
    return SensorTerm(sensor, tuple(blocks), bias, sensor.params.noise.sample_sigma(sensor.params.rate))


@dataclass(frozen=True)
class Observation:
    """One reading on its step: the sensor term, value z, whitening W (scalar or matrix) and stamp
    offset δ = t − t_k [s]."""

    term: SensorTerm
    z: np.ndarray
    whitening: float | np.ndarray
    delta: float


def _robust_scale(sensor: SensorModel, whitened: np.ndarray) -> float:
    """√w of the sensor's M-estimator at |e| (module docstring)."""
    loss = sensor.params.loss
    norm = float(np.sqrt(whitened @ whitened))
    weight = min(1.0, loss.k / max(norm, 1e-300)) if loss.loss == "huber" else 1.0 / (1.0 + (norm / loss.k) ** 2)
    return float(np.sqrt(weight))


def observation_rows(observation: Observation, x: np.ndarray, n: int,
                     jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Whitened, reweighted e and ∂e/∂x of one reading (module docstring): the Taylor shift's chain
    rule is applied while the blocks are placed, ∂q(t)/∂(q, q̇, q̈) = (I, δI, δ²/2 I), ∂q̇(t)/∂(q̇, q̈) = (I, δI)."""
    term, delta = observation.term, observation.delta
    q, qd, qdd = x[:n], x[n:2 * n], x[2 * n:3 * n]
    if delta:
        q = q + delta * qd + (0.5 * delta * delta) * qdd
        qd = qd + delta * qdd
    args = []
    for kind, columns, entries, full in term.blocks:
        if kind in "qva":
            args.append(q if kind == "q" else qd if kind == "v" else qdd)
        else:
            block = np.zeros(full)
            block[entries] = x[columns]
            args.append(block)
    h, jacobians = term.sensor.measurement(*args, jac=jac)
    if term.bias is not None:
        h = h + x[term.bias]
    error = term.sensor.residual(h, observation.z)
    white = observation.whitening
    error = white * error if isinstance(white, float) else white @ error
    scale = 1.0 if term.sensor.params.loss is None else _robust_scale(term.sensor, error)
    if not jac:
        return scale * error, None
    jacobian = np.zeros((h.shape[0], x.shape[0]))
    for (kind, columns, entries, _), block in zip(term.blocks, jacobians):
        if kind == "q":
            jacobian[:, :n] = block
            if delta:
                jacobian[:, n:2 * n] += delta * block
                jacobian[:, 2 * n:3 * n] += (0.5 * delta * delta) * block
        elif kind == "v":
            jacobian[:, n:2 * n] += block
            if delta:
                jacobian[:, 2 * n:3 * n] += delta * block
        elif kind == "a":
            jacobian[:, 2 * n:3 * n] += block
        else:
            jacobian[:, columns] = block[:, entries]
    if term.bias is not None:
        jacobian[:, term.bias] = np.eye(h.shape[0])
    white = scale * white
    return scale * error, white * jacobian if isinstance(white, float) else white @ jacobian


def stacked_step_error(model: RowFunction | None, model_weights: np.ndarray | None,
                       observations: Sequence[Observation], n: int) -> Callable:
    """e(x) = [model rows / σ; every reading's whitened rows] and [∂e/∂x] — one factor's error function
    (unit noise). ``model`` None: readings only (a late reading's own factor)."""
    observations = tuple(observations)

    def error(x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        parts = []
        if model is not None:
            e, d = model(x, jac)
            parts.append((e * model_weights, d * model_weights[:, None] if jac else None))
        parts += [observation_rows(obs, x, n, jac) for obs in observations]
        e = np.concatenate([p[0] for p in parts])
        return (e, [np.vstack([p[1] for p in parts])]) if jac else (e, None)

    return error
