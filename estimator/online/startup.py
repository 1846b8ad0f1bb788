"""Start-up of the online estimator: the initial stacked state from the first readings.

The readings of the start-up span (EstimatorConfig.startup_span, with t0 its middle) are buffered.
Each position-only sensor (encoders) is fitted by weighted least squares with a cubic in t − t0,
z(t) ≈ z0 + ż (t − t0) + z̈ (t − t0)²/2 + c (t − t0)³, which gives its value, rate and acceleration
at t0 with their standard deviations (σ² (VᵀV)⁻¹ of the fit; one reading: the value alone). Then:

1. position: Gauss-Newton on [Φ(q)/σ_Φ; (h(q) − z0)/σ_z0 of each encoder; 1e-3 (q − q_a)], from
   q_a, the anchor (the file's configuration with the ``initial_state`` coordinates held, assembled);
   steps limited to 0.2 in max-norm so that the iteration follows the branch of q_a (the assembly mode
   of the file); where the encoders leave a degree of freedom open, the same with every other reading,
   each read in the free motion at q (``readings_position``: an IMU's accelerometers see gravity);
2. velocity: the linear least squares [Φq q̇ = 0 (weighted); gyroscopes (h linear in q̇) at their
   reading nearest t0; encoders H q̇ = ż / σ_ż (H = ∂h/∂q); the ``initial_velocity`` coordinates,
   q̇_i = v_i / σ_v (σ_v: ``velocity_sigma``); 1e-3 q̇ = 0];
3. acceleration: with the unknown forces in the state, [Φq q̈ = γ (weighted); encoders
   H q̈ = z̈ − Ḣ q̇ / σ_z̈; 1e-3 (q̈ − q̈_0)], q̈_0 from Lagrange's equations with the unknown forces
   at zero, and then λ and the forces from the equations of motion, Φqᵀλ − E F = Q − M q̈
   (estimator.dynamics.inverse). Without unknown forces q̈ and λ come from Lagrange's equations
   (kinematics only: q̈ on Φq q̈ = γ, minimum norm). Biases start at zero.

The model's kinematics and dynamics are estimator.model_protocol's members: on a URDF tree Φ is empty,
"Lagrange's equations" are the ABA and the assembly leaves q as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from estimator.dynamics.inverse import multipliers_and_drive_forces
from estimator.errors import MbstateError
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.observation_stack import Observation, SensorTerm, observation_rows, predicted
from estimator.kinematics import AssemblyError, solve_acceleration_problem
from estimator.model import Mechanism
from estimator.model_protocol import (Model, actuators, assemble, constraint_count, constraint_jacobian, constraints,
                                      free_accelerations, generalized_forces, mass_matrix, multipliers,
                                      point_coordinates, start_configuration, velocity_term)
from estimator.online.config import EstimatorConfig
from sensors.base import Sensor, wrap_angle
from sensors.messages import Reading

CONSTRAINT_WEIGHT = 1e6  # 1/σ_Φ [1/m]: the constraints hold to ~1e-12 after the iteration anyway
REGULARIZATION = 1e-3  # weight of q − q_a and of q̇ (unobserved directions only)
MAX_STEP = 0.2  # [m, rad] per Gauss-Newton step
ITERATIONS = 50
CONSISTENT = 9.0  # mean square of the whitened rows a fit to the readings may leave (3 σ each)
TURNS = 8  # the other starts of readings_position: each independent angle turned by multiples of 2π/TURNS
STARTS = 64  # at most so many of them
FITS = 4  # the closest starts fitted


def _nearest(readings: Sequence[Reading], t0: float) -> Reading:
    return min(readings, key=lambda r: abs(r.t - t0))


@dataclass(frozen=True)
class KnownVelocity:
    """The ``initial_velocity`` of the estimator config: (coordinate name, q̇ at t0) pairs known to ``sigma``."""

    values: tuple[tuple[str, float], ...] = ()
    sigma: float = 1.0

    @classmethod
    def of(cls, config: EstimatorConfig) -> KnownVelocity:
        """The config's ``initial_velocity``, known to its ``velocity_sigma``."""
        return cls(config.initial_velocity, config.velocity_sigma)


@dataclass(frozen=True)
class Motion:
    """A position sensor's value, rate and acceleration at t0 and their standard deviations (inf: not
    determined by the readings)."""

    z: np.ndarray
    rates: np.ndarray  # [ż, z̈]
    sigmas: np.ndarray  # [σ_z, σ_ż, σ_z̈]


def fitted_motion(readings: Sequence[Reading], t0: float, sigma: float, wraps: bool) -> Motion:
    """The cubic fit of the module docstring (fewer terms with fewer than four readings; angles unwrapped)."""
    ordered = sorted(readings, key=lambda r: r.t)
    values = np.array([np.asarray(r.value, float).reshape(-1) for r in ordered])
    if wraps:
        values = np.unwrap(values, axis=0)
    dt = np.array([r.t for r in ordered]) - t0
    span = max(float(np.max(np.abs(dt))), 1e-9)
    terms = min(4, len(ordered))
    basis = np.vander(dt / span, terms, increasing=True)  # scaled for conditioning
    coefficients, *_ = np.linalg.lstsq(basis, values, rcond=None)
    covariance = sigma ** 2 * np.linalg.pinv(basis.T @ basis)
    scale = np.array([1.0, 1.0 / span, 2.0 / span ** 2])[:terms]  # z, ż, z̈ from the scaled coefficients
    padded = np.zeros((3, values.shape[1]))
    padded[:terms] = coefficients[:3] * scale[:, None]
    sigmas = np.full(3, np.inf)
    sigmas[:terms] = np.sqrt(np.diag(covariance)[:3]) * scale
    z = padded[0]
    return Motion(wrap_angle(z) if wraps else z, padded[1:], sigmas)


def start_anchor(mech: Model, held: Sequence[tuple[str, float]] = ()) -> np.ndarray:
    """q_a: the file's configuration with the coordinates ``held`` ((name, value) pairs) fixed, assembled."""
    q, names = start_configuration(mech).copy(), mech.coordinate_names
    indices = [names.index(name) for name, _ in held]
    q[indices] = [value for _, value in held]
    try:
        return assemble(mech, q, indices)
    except AssemblyError as exc:
        raise MbstateError(f"estimator.initial_state: the mechanism does not assemble there ({exc})") from None


def _rows(rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The least-squares solution of the stacked rows (e, d): d x = −e."""
    return np.linalg.lstsq(np.vstack([d for _, d in rows]), -np.concatenate([e for e, _ in rows]), rcond=None)[0]


def _covariance(rows: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """(DᵀD)⁻¹ of the stacked whitened rows, the covariance of ``_rows``' solution: V S⁻² Vᵀ from the SVD of
    D (full rank through the regularization rows; the normal equations would square its condition)."""
    _, singular, vt = np.linalg.svd(np.vstack([d for _, d in rows]), full_matrices=False)
    return (vt.T / singular ** 2) @ vt


def position_motions(readings: Mapping[str, list[Reading]], terms: Mapping[str, SensorTerm],
                     t0: float) -> dict[str, Motion]:
    """The fitted motion of every position-only sensor (encoders) at t0."""
    return {name: fitted_motion(rs, t0, terms[name].sigma, terms[name].sensor.wraps)
            for name, rs in readings.items() if terms[name].sensor.variables == ("q",)}


def initial_position(mech: Model, layout: EstimationLayout, motions: Mapping[str, Motion],
                     terms: Mapping[str, SensorTerm], anchor: np.ndarray) -> np.ndarray:
    """Step 1 of the module docstring: q at t0."""
    n = mech.n
    observations = [Observation(terms[name], motion.z, 1.0 / motion.sigmas[0], 0.0) for name, motion in motions.items()]
    x = np.zeros(layout.size)

    def measured(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x[:n] = q
        rows = [observation_rows(obs, x) for obs in observations]
        if not rows:
            return np.zeros(0), np.zeros((0, n))
        return np.concatenate([e for e, _ in rows]), np.vstack([d[:, :n] for _, d in rows])

    return assemble(mech, _gauss_newton(mech, anchor, measured, 1e-12)[0])


def _gauss_newton(mech: Model, start: np.ndarray, measured: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                  tolerance: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 1's iteration from ``start``: Gauss-Newton on [Φ(q)/σ_Φ; 1e-3 (q − start); the rows (e, ∂e/∂q)
    that ``measured(q)`` gives], each step limited to MAX_STEP in max-norm, until one is under ``tolerance``
    (at most ITERATIONS); q, and Φq and ∂e/∂q at the last iterate linearized."""
    n = mech.n
    q = start.copy()
    for _ in range(ITERATIONS):
        phi, phi_q = constraints(mech, q)
        error, gradient = measured(q)
        rows = [(CONSTRAINT_WEIGHT * phi, CONSTRAINT_WEIGHT * phi_q),
                (REGULARIZATION * (q - start), REGULARIZATION * np.eye(n)), (error, gradient)]
        change = _rows(rows)
        change *= min(1.0, MAX_STEP / max(np.max(np.abs(change)), 1e-300))
        q += change
        if np.max(np.abs(change)) < tolerance:
            break
    return q, phi_q, gradient


def initial_velocity(mech: Model, layout: EstimationLayout, q: np.ndarray, readings: Mapping[str, list[Reading]],
                     motions: Mapping[str, Motion], terms: Mapping[str, SensorTerm], t0: float,
                     known: KnownVelocity = KnownVelocity()) -> np.ndarray:
    """Step 2 of the module docstring: q̇ at t0."""
    n = mech.n
    x = np.zeros(layout.size)
    x[:n] = q
    rows = [(np.zeros(constraint_count(mech)), CONSTRAINT_WEIGHT * constraint_jacobian(mech, q)),
            (np.zeros(n), REGULARIZATION * np.eye(n))]
    for name, rs in readings.items():
        term = terms[name]
        if term.sensor.variables == ("q", "v"):
            e, d = observation_rows(Observation(term, _nearest(rs, t0).value, term.whitening(None), 0.0), x)
            rows.append((e, d[:, n:2 * n]))
    for name, motion in motions.items():
        if np.isfinite(motion.sigmas[1]):
            gradient = terms[name].sensor.measurement(q, jac=True)[1][0]
            rows.append((-motion.rates[0] / motion.sigmas[1], gradient / motion.sigmas[1]))
    names = mech.coordinate_names
    for name, value in known.values:
        row = np.zeros((1, n))
        row[0, names.index(name)] = 1.0 / known.sigma
        rows.append((np.array([-value / known.sigma]), row))
    return _rows(rows)


def initial_acceleration(mech: Model, q: np.ndarray, qd: np.ndarray, guess: np.ndarray,
                         motions: Mapping[str, Motion],
                         terms: Mapping[str, SensorTerm]) -> tuple[np.ndarray, np.ndarray]:
    """Step 3 of the module docstring: q̈ at t0 from the encoders' fitted accelerations, near ``guess``,
    and its covariance."""
    n, step = mech.n, 1e-6
    phi_q = constraint_jacobian(mech, q)
    gamma = velocity_term(mech, q, qd)  # γ = −Φ̇q q̇ = −(Φqq·q̇) q̇
    rows = [(-CONSTRAINT_WEIGHT * gamma, CONSTRAINT_WEIGHT * phi_q),
            (-REGULARIZATION * guess, REGULARIZATION * np.eye(n))]
    for name, motion in motions.items():
        if np.isfinite(motion.sigmas[2]):
            measure = terms[name].sensor.measurement
            gradient = measure(q, jac=True)[1][0]
            rate = (measure(q + step * qd, jac=True)[1][0] - measure(q - step * qd, jac=True)[1][0]) / (2 * step)
            rows.append(((rate @ qd - motion.rates[1]) / motion.sigmas[2], gradient / motion.sigmas[2]))
    return _rows(rows), _covariance(rows)


def _free_state(mech: Mechanism, layout: EstimationLayout, q: np.ndarray, readings: Mapping[str, list[Reading]],
                terms: Mapping[str, SensorTerm], t0: float, known: KnownVelocity) -> np.ndarray:
    """The stacked state at q of a mechanism without unknown forces: q̇ from the rate readings (step 2), q̈
    and λ from Lagrange's equations, the model-error states and biases at zero."""
    n = mech.n
    x = np.zeros(layout.size)
    x[:n] = q
    x[n:2 * n] = initial_velocity(mech, layout, q, readings, {}, terms, t0, known)
    qdd, lam = free_accelerations(mech, q, x[n:2 * n])
    x[2 * n:3 * n] = qdd
    x[layout.lam] = lam[list(layout.rows)]
    return x


def readings_position(mech: Mechanism, layout: EstimationLayout, readings: Mapping[str, list[Reading]],
                      terms: Mapping[str, SensorTerm], t0: float, start: np.ndarray, sigma: float,
                      known: KnownVelocity = KnownVelocity()) -> tuple[np.ndarray, float] | None:
    """Step 1 from every reading, where the encoders do not fix the position (an IMU alone): Gauss-Newton
    on [Φ(q)/σ_Φ; W_s (h_s(x(q)) − z_s) of each sensor's reading nearest t0; 1e-3 (q − q_s)], x(q) the free
    state at q (``_free_state``: what an accelerometer reads of gravity and of the motion gravity drives),
    with central differences in q and the steps of step 1, from q_s = ``start``. These rows are not convex
    in the angles: where the solution leaves the readings off by more than CONSISTENT (mean square of the
    whitened rows), it starts again from the mechanism assembled with each independent angle turned by
    multiples of 2π/TURNS (at most STARTS of them, seeded), fits from the FITS closest of them and keeps the
    closest fit if it fits within CONSISTENT (else the first: a model that fits nowhere is wrong, and the
    readings are no reason to leave the start's branch). q and the σ to which the rows fix its worst-seen
    direction of motion, scaled by the fit's root mean square where that exceeds 1 (a model the readings
    disagree with, its gravity off: the misfit is model error, not information); None where that is not
    below ``sigma`` (the guess's σ: the readings tell less than the file), or without a dynamic model of
    the motion (unknown forces, kinematics only)."""
    if len(layout.forces) or not len(layout.rows):
        return None
    motions = position_motions(readings, terms, t0)
    observations = [Observation(terms[name], motion.z, 1.0 / motion.sigmas[0], 0.0) for name, motion in motions.items()]
    observations += [Observation(term, _nearest(rs, t0).value, term.white, 0.0)
                     for term, rs in ((terms[name], rs) for name, rs in readings.items())
                     if term.sensor.variables != ("q",) and set(term.sensor.variables) <= {"q", "v", "a", "l", "g"}]

    def residual(q: np.ndarray) -> np.ndarray:
        x = _free_state(mech, layout, q, readings, terms, t0, known)
        return np.concatenate([o.whitening @ o.term.sensor.residual(predicted(o.term, x), o.z) for o in observations])

    best = local = _fitted(mech, residual, start)
    if local[1] > CONSISTENT:
        angles = [i for i in layout.integrated if i not in point_coordinates(mech)]
        offsets = (np.arange(TURNS) + TURNS // 2) % TURNS - TURNS // 2  # 0, 1, …, −1: the least turn each way
        turns = np.array(np.meshgrid(*[offsets] * len(angles))).reshape(len(angles), -1).T
        if len(turns) > STARTS:
            turns = np.random.default_rng(0).choice(turns, STARTS, replace=False)
        starts = []
        for turn in turns[1:]:  # turns[0] is no turn: the start already tried
            q = start.copy()
            q[angles] += 2 * np.pi * turn / TURNS
            try:
                q = assemble(mech, q, angles)
            except AssemblyError:
                continue
            starts.append((float(np.mean(residual(q) ** 2)), len(starts), q))
        for _, _, q in sorted(starts)[:FITS]:
            best = min(best, _fitted(mech, residual, q), key=lambda fit: fit[1])
        if best[1] > CONSISTENT:  # the model fits the readings nowhere: no reason to leave the start's branch
            best = local
    q, cost, seen = best
    seen *= np.sqrt(max(1.0, cost))  # readings the model fits worse than their noise: a model error, not σ
    return (assemble(mech, q), seen) if seen < sigma else None


def _fitted(mech: Mechanism, residual: Callable[[np.ndarray], np.ndarray], start: np.ndarray
            ) -> tuple[np.ndarray, float, float]:
    """``readings_position``'s Gauss-Newton from ``start`` (``_gauss_newton``, central differences in q): q,
    the mean square of the whitened rows there, and the σ to which they fix the worst-seen direction of
    motion (1 / the least singular value of the whitened rows on the constraints' null space; inf where one
    is not seen)."""
    step = 1e-7

    def measured(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return residual(q), np.column_stack([(residual(q + step * e) - residual(q - step * e)) / (2 * step)
                                             for e in np.eye(mech.n)])

    q, phi_q, gradient = _gauss_newton(mech, start, measured, 1e-10)
    tangent = scipy.linalg.null_space(phi_q)  # the motions the constraints allow at q
    seen = np.linalg.svd(gradient @ tangent, compute_uv=False) if tangent.size else np.zeros(0)
    worst = 1.0 / seen[-1] if len(seen) == tangent.shape[1] and seen[-1] > 0.0 else np.inf
    return q, float(np.mean(residual(q) ** 2)), float(worst)


def determines_position(mech: Model, q: np.ndarray, sensors: Sequence[Sensor]) -> bool:
    """Whether the position ``sensors``' gradients span every degree of freedom at q: rank of
    [Φq; ∂h/∂q] equal to n (else the start is a guess: the anchor)."""
    rows = [constraint_jacobian(mech, q)] + [sensor.measurement(q, jac=True)[1][0] for sensor in sensors]
    return int(np.linalg.matrix_rank(np.vstack(rows))) == mech.n


def initial_state(mech: Model, layout: EstimationLayout, readings: Mapping[str, list[Reading]],
                  terms: Mapping[str, SensorTerm], t0: float, anchor: np.ndarray,
                  known: KnownVelocity = KnownVelocity()) -> tuple[np.ndarray, np.ndarray]:
    """The stacked state x at t0 (module docstring), ``anchor``: q_a, assembled, ``known``: the
    configured start velocities; and the standard deviations of its unknown forces as the readings
    determine them (inf where they do not)."""
    n = mech.n
    motions = position_motions(readings, terms, t0)
    q = initial_position(mech, layout, motions, terms, anchor)
    qd = initial_velocity(mech, layout, q, readings, motions, terms, t0, known)
    x = np.zeros(layout.size)
    x[:n], x[n:2 * n] = q, qd
    force_sigmas = np.full(len(layout.forces), np.inf)
    if not len(layout.rows) and constraint_count(mech):  # kinematics only
        x[2 * n:3 * n] = solve_acceleration_problem(mech, q, qd, np.zeros(0), [])
        return x, force_sigmas
    qdd, _ = free_accelerations(mech, q, qd)
    if len(layout.forces):
        qdd, covariance = initial_acceleration(mech, q, qd, qdd, motions, terms)
        rhs = generalized_forces(mech, q, qd) - mass_matrix(mech, q) @ qdd
        jacobian = constraint_jacobian(mech, q)
        force_coordinates = [actuators(mech)[j][1] for j in layout.forces]
        lam, forces, _ = multipliers_and_drive_forces(jacobian, rhs, force_coordinates)
        # F is linear in q̈ through rhs = Q − M q̈: its covariance is G C Gᵀ with G = ∂F/∂q̈
        gradient = multipliers_and_drive_forces(jacobian, -mass_matrix(mech, q), force_coordinates)[1]  # column j: q̈_j
        force_sigmas = np.sqrt(np.diag(gradient @ covariance @ gradient.T))
        x[layout.force] = forces
    else:
        lam = multipliers(mech, q, qd, qdd)
    x[2 * n:3 * n] = qdd
    x[layout.lam] = lam[list(layout.rows)]
    return x, force_sigmas
