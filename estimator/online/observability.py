"""Start-up observability check of the online estimator: the directions of the state its sensors cannot
see over a short window, so that they are reported instead of drifting silently.

State checked, in tangent coordinates of the constraint manifold at the start state x0: with q_i a set
of independent coordinates (the ones the smoother integrates: the actuated ones when valid, else the
angles; estimator.kinematics.suggested_independent),

    z = [q_i (dof); q̇_i (dof); F (unknown forces); b (estimated biases)],
    q = q0 + T δq_i (T = ∂q/∂q_i: Φq T = 0),  q̇ with Φq(q) q̇ = 0 and the given q̇_i,

so z spans the 2·dof directions of (q, q̇) on the manifold and the F and b of the estimator's stacked
state (estimator.factors.estimation_state.EstimationLayout).

Propagation over the window of WINDOW_STEPS grid steps, from z: with dynamics, the equations of motion
with F held (estimator.dynamics.lagrange, RK4, no stabilization or projection, so that the motion is a
smooth function of z; steps short enough for the fastest motion, _Motion); kinematics only, the same
equations with a unit mass matrix and no forces: the motion that keeps the independent velocities as
constant as the constraints allow (q̈ = Φq⁺γ, the start-up's minimum-norm q̈), the constrained
counterpart of constant velocity. F and b are constant.

Observability matrix. At SAMPLES instants t_j (the window split evenly), the stacked state x_j and its
sensitivity D_j = ∂x_j/∂z (central differences of the propagation; F and b enter x_j directly); each
sensor the estimator can use gives the rows of an exact reading there (estimator.factors.observation_stack:
whitened by its σ, bias included, at zero residual so the robust loss weighs 1), weighted by √c_sj, c_sj
the readings of sensor s in the sample's interval (its rate times the interval):

    O = [√c_sj W_s ∂h_s/∂x(x_j) D_j]  over sensors s and instants j,   O_s = O diag(σ_z),

σ_z the start prior's σ of each direction (position_sigma, velocity_sigma, force_sigma, the sensors'
bias_sigma): the estimator's own scale of each block, so that the columns are comparable, and a singular
value s of O_s compares what the window's readings tell about its direction with the start prior (their
information is s² times the prior's). The directions of the singular values at or below the threshold
are unobservable (all of them when no sensor gives a row); the right singular vectors of that null space
are rotated to a readable basis (pivoted QR: each direction has 1 on its own coordinate and 0 on the
other directions' ones) and shown by their largest components.

Threshold: max(RELATIVE_THRESHOLD r, ABSOLUTE_THRESHOLD), r the size O_s would have without cancellation,
the largest column norm of [√c_sj |W_s ∂h_s/∂x| |D_j|] diag(σ_z). What a sensor set cannot see at all leaves
singular values at the level of the difference error, of two kinds. (1) Terms that cancel: a gyroscope on a
body that never turns has a non-zero ∂h/∂x whose terms cancel along every motion; round-off over the step
leaves about ε_machine / DIFFERENCE_STEP = 1e-12 of r, hence RELATIVE_THRESHOLD = 1e-8 (relative to O_s's
own largest singular value, which is round-off too when no other sensor sees anything, that would look like
a full rank). (2) Quantities that do not change: the tension of a link, or an acceleration, of a mechanism
at rest that nothing loads (the velocity enters them squared); the central difference leaves the step
squared, DIFFERENCE_STEP² = 1e-8 of the sensitivities that do exist, and r is that small too; hence
ABSOLUTE_THRESHOLD = 1e-6 in start-prior units: information below 1e-12 of the prior's. What the motion
reveals within the window (an angle through gravity's pull on a swinging body, a bias through the change of
a velocity, a force against a position) is a second-order effect of the window, of order (ω T)² of the
sensitivities that do exist (2.5e-3 for ω = 1 rad/s over T = 50 ms): far above both. So the check reports
the directions the sensors cannot see, not those they see poorly in 50 ms (the estimator, which keeps what
it learns, separates those over a longer motion).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

import numpy as np
import scipy.linalg

from estimator.constraints import constraint_jacobian
from estimator.dynamics import lagrange
from estimator.dynamics.forward import multipliers
from estimator.dynamics.integrators import TABLEAUS
from estimator.dynamics.statics import tangent_stiffness
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.observation_stack import Observation, observation_rows, predicted, sensor_term
from estimator.forces import force_jacobians, generalized_forces
from estimator.kinematics import constraint_rank, solve_velocity_problem, suggested_independent
from estimator.model import Mechanism
from estimator.model_protocol import Model
from estimator.online.config import EstimatorConfig
from estimator.spatial.model import SpatialModel
from sensors.config import SensorSet

WINDOW_STEPS = 50  # grid steps in the window
SAMPLES = 10  # instants at which the sensors' rows are evaluated (each stands for its share of the window)
RELATIVE_THRESHOLD = 1e-8  # singular values of O_s below this times its size without cancellation ...
ABSOLUTE_THRESHOLD = 1e-6  # ... or below this (in start-prior units) are unobservable (module docstring)
DIFFERENCE_STEP = 1e-4  # central-difference step, in units of each direction's σ_z
RATE_STEP = 0.2  # largest (fastest rate of the motion) x (propagation step), see _Motion
SHOWN = 0.05  # components of a direction shown: at least this fraction of its largest (in σ_z units)
MAX_SHOWN = 4
KINDS = {"q": "position", "qd": "velocity", "force": "force", "bias": "bias"}


@dataclass(frozen=True)
class Direction:
    """One unobservable direction: its components by coordinate name (physical units, 1 on its own
    coordinate; the largest ones only) and the blocks they belong to."""

    components: dict[str, float]
    concerns: tuple[str, ...]

    def text(self) -> str:
        """E.g. ``q.theta0 - 0.5 force.motor (position, force)``."""
        (first, _), *others = self.components.items()
        terms = "".join(f" {'-' if c < 0 else '+'} {abs(c):.3g} {name}" for name, c in others)
        return f"{first}{terms} ({', '.join(self.concerns)})"


@dataclass(frozen=True)
class ObservabilityReport:
    """The result of :func:`observability` (module docstring)."""

    coordinates: tuple[str, ...]  # the directions z checked, e.g. q.theta0, qd.theta0, force.motor, bias.gyro
    singular_values: np.ndarray  # of O_s, descending
    threshold: float  # those at or below it are unobservable (module docstring)
    unobservable: tuple[Direction, ...]
    ignored: tuple[str, ...]  # sensors the estimator cannot use (they add no rows)
    window: float  # [s]
    not_checked: str = ""  # why the check was not made (a spatial model: no propagation yet), else empty

    @property
    def observable(self) -> bool:
        return not self.unobservable

    def summary(self) -> str:
        """One line for the log."""
        ignored = f" (not usable by the estimator: {', '.join(self.ignored)})" if self.ignored else ""
        if self.not_checked:
            return f"observability not checked: {self.not_checked}{ignored}"
        if self.observable:
            return f"observable over a {1e3 * self.window:.3g} ms window{ignored}"
        kinds = [k for k in KINDS.values() if any(k in d.concerns for d in self.unobservable)]
        return (f"not observable: the sensors{ignored} cannot see {len(self.unobservable)} of "
                f"{len(self.coordinates)} directions ({', '.join(kinds)}) over a {1e3 * self.window:.3g} ms "
                "window: " + "; ".join(d.text() for d in self.unobservable))

    def as_dict(self) -> dict[str, Any]:
        """Plain values (the node's status message, ``mbstate check --json``)."""
        return {"observable": self.observable, "window_s": self.window, "coordinates": list(self.coordinates),
                "singular_values": [float(s) for s in self.singular_values], "threshold": float(self.threshold),
                "ignored_sensors": list(self.ignored),
                "unobservable": [{"components": dict(d.components), "concerns": list(d.concerns), "text": d.text()}
                                 for d in self.unobservable]} | (
            {"not_checked": self.not_checked} if self.not_checked else {})


@singledispatch
def observability(mech: Model, sensors: SensorSet, layout: EstimationLayout, config: EstimatorConfig,
                  x0: np.ndarray) -> ObservabilityReport:
    """Which directions of the estimator's state the sensors cannot see from the start state ``x0`` (the
    stacked state of ``layout``) over the window (module docstring)."""
    raise TypeError(f"not a mechanism model: {type(mech).__name__}")


@observability.register
def _(mech: SpatialModel, sensors: SensorSet, layout: EstimationLayout, config: EstimatorConfig,
      x0: np.ndarray) -> ObservabilityReport:
    """Not checked: the propagation is planar (estimator.dynamics.lagrange); a tree's would run on its ABA
    (issue 39). Reported as such, every estimate then unflagged."""
    terms = [sensor_term(s, i, layout, 0, len(mech.actuated)) for i, s in enumerate(sensors.sensors)]
    ignored = tuple(s.params.name for s, t in zip(sensors.sensors, terms) if t is None)
    return ObservabilityReport((), np.zeros(0), 0.0, (), ignored, 0.0,
                               not_checked="the check propagates planar models only (issue 39)")


@observability.register
def _(mech: Mechanism, sensors: SensorSet, layout: EstimationLayout, config: EstimatorConfig,
      x0: np.ndarray) -> ObservabilityReport:
    terms = [sensor_term(s, i, layout, mech.m, len(mech.actuators)) for i, s in enumerate(sensors.sensors)]
    q0 = x0[:mech.n]
    independent = suggested_independent(mech, q0, constraint_rank(mech, q0))
    names, scales = _coordinates(mech, sensors, layout, config, independent)
    motion = _Motion(mech, layout, config, x0, independent, any(t is not None and "l" in t.sensor.variables
                                                                for t in terms))
    nominal = motion.states(motion.q0, motion.qd0, motion.force0)
    sensitivity = np.zeros(nominal.shape + (len(names),))
    moving = 2 * len(independent) + len(layout.forces)  # the columns found by propagation
    for c in range(moving):
        step = DIFFERENCE_STEP * scales[c]
        sensitivity[:, :, c] = (motion.perturbed(c, step) - motion.perturbed(c, -step)) / (2.0 * step)
    bias_rows = np.concatenate([np.arange(layout.bias_of(i).start, layout.bias_of(i).stop)
                                for i in range(len(layout.bias))])
    sensitivity[:, bias_rows, np.arange(moving, len(names))] = 1.0
    rows, sizes = [np.zeros((0, len(names)))], [np.zeros((0, len(names)))]
    for term in terms:
        if term is None:
            continue
        weight = np.sqrt(term.sensor.params.rate * motion.interval)
        for x, d in zip(nominal, sensitivity):
            jacobian = observation_rows(Observation(term, predicted(term, x), term.white, 0.0), x)[1]
            rows.append(weight * jacobian @ d)
            sizes.append(weight * np.abs(jacobian) @ np.abs(d))
    reference = np.max(np.linalg.norm(np.vstack(sizes) * scales, axis=0), initial=0.0)
    ignored = tuple(s.params.name for s, t in zip(sensors.sensors, terms) if t is None)
    return _report(np.vstack(rows) * scales, reference, names, scales, ignored, WINDOW_STEPS * config.dt)


def _coordinates(mech: Mechanism, sensors: SensorSet, layout: EstimationLayout, config: EstimatorConfig,
                 independent: Sequence[int]) -> tuple[list[str], np.ndarray]:
    """The names of z and their σ_z."""
    positions = [mech.coordinate_names[k] for k in independent]
    names = [f"q.{c}" for c in positions] + [f"qd.{c}" for c in positions]
    names += [f"force.{mech.actuators[j].name}" for j in layout.forces]
    scales = [config.position_sigma] * len(positions) + [config.velocity_sigma] * len(positions)
    scales += [config.force_sigma] * len(layout.forces)
    for sensor, size in zip(sensors.sensors, layout.bias):
        names += [f"bias.{sensor.params.name}" + (f"[{a}]" if size > 1 else "") for a in range(size)]
        scales += [sensor.params.noise.bias_sigma] * size
    return names, np.asarray(scales, float)


class _Motion:
    """The propagation of the module docstring from z around the start state, and the stacked states along
    it. RK4 steps of the sample interval, split so that the fastest rate of the linearized motion at the
    start (natural frequency of the tangent stiffness, or damping rate, over the tangent mass) times the
    step stays at most RATE_STEP: RK4 then follows the fastest oscillation to (ω h)⁵/120 ≈ 3e-6 per step,
    far inside its stability bound (ω h < 2.8), stiff springs too."""

    def __init__(self, mech: Mechanism, layout: EstimationLayout, config: EstimatorConfig, x0: np.ndarray,
                 independent: Sequence[int], with_lam: bool) -> None:
        n = mech.n
        self.layout, self.independent, self.with_lam = layout, list(independent), with_lam
        ar = mech.arrays
        if config.dynamics:
            coordinates = [mech.actuators[j].coordinate for j in layout.forces]
            self.selection = actuator_selection(mech, coordinates) if coordinates else np.zeros((n, 0))
        else:  # unit mass, no forces: constant velocity along the constraints
            empty = {name: getattr(ar, name)[:0] for name in ("spring_idx", "spring_par", "torsion_idx",
                                                              "torsion_par", "torque_idx", "torque_val")}
            ar = ar._replace(mass=_read_only(np.eye(n)), q_force=_read_only(np.zeros(n)), **empty)
        self.mech = dataclasses.replace(mech, arrays=ar)
        self.q0, self.force0 = x0[:n], x0[layout.force]
        self.qd0 = solve_velocity_problem(mech, self.q0, x0[n:2 * n][self.independent], self.independent)
        self.tangent = np.column_stack([solve_velocity_problem(mech, self.q0, unit, self.independent)
                                        for unit in np.eye(len(self.independent))]) if independent else np.zeros((n, 0))
        self.interval = WINDOW_STEPS * config.dt / SAMPLES
        self.substeps = max(1, int(np.ceil(self._fastest_rate() * self.interval / RATE_STEP)))

    def _fastest_rate(self) -> float:
        """max over the tangent motions of √|eig(M_t⁻¹ K_t)| and |eig(M_t⁻¹ C_t)| [1/s], with the tangent
        stiffness K = −∂Q/∂q + Σ λ_i Φqq_i (estimator.dynamics.statics), C = −∂Q/∂q̇, M_t = Tᵀ M T."""
        mech, q, qd, tangent = self.forced(self.force0), self.q0, self.qd0, self.tangent
        if not tangent.shape[1]:
            return 0.0
        qdd = lagrange.accelerations(mech.arrays, q, qd, 0.0, 0.0)[0]
        stiffness = tangent.T @ tangent_stiffness(mech, q, multipliers(mech, q, qd, qdd)) @ tangent
        damping = -tangent.T @ force_jacobians(mech, q, qd)[1] @ tangent
        mass = tangent.T @ mech.arrays.mass @ tangent
        inverse = np.linalg.pinv(mass)  # a motion without inertia has no rate of its own here
        rates = [np.sqrt(np.abs(np.linalg.eigvals(inverse @ stiffness))), np.abs(np.linalg.eigvals(inverse @ damping))]
        return float(np.max(np.concatenate(rates)))

    def forced(self, force: np.ndarray) -> Mechanism:
        """The propagation's model with the unknown forces F as constant loads."""
        if not len(force):
            return self.mech
        arrays = self.mech.arrays
        return dataclasses.replace(self.mech, arrays=arrays._replace(
            q_force=_read_only(arrays.q_force + self.selection @ force)))

    def states(self, q: np.ndarray, qd: np.ndarray, force: np.ndarray) -> np.ndarray:
        """x_j at the SAMPLES instants (SAMPLES x layout.size), biases zero."""
        layout, n, mech = self.layout, len(q), self.forced(force)
        a, b = TABLEAUS["rk4"]
        steps = self.substeps
        qs, qds, qdds = (values[::steps] for values in lagrange.simulate(
            mech.arrays, q, qd, self.interval / steps, (SAMPLES - 1) * steps, a, b, 0.0, 0.0, False, 0.0))
        x = np.zeros((SAMPLES, layout.size))
        x[:, :n], x[:, n:2 * n], x[:, 2 * n:3 * n] = qs, qds, qdds
        x[:, layout.force] = force
        if self.with_lam:  # λ_S from Φq_Sᵀ λ_S = Q + E F − M q̈ (the estimator's dynamics rows), S independent
            residual = np.array([generalized_forces(mech, q, qd) for q, qd in zip(qs, qds)]) - qdds @ mech.arrays.mass.T
            rows = np.array([constraint_jacobian(mech, q)[layout.row_indices] for q in qs])
            normal = rows @ rows.transpose(0, 2, 1)
            x[:, layout.lam] = np.linalg.solve(normal, rows @ residual[:, :, None])[:, :, 0]
        return x

    def perturbed(self, column: int, step: float) -> np.ndarray:
        """``states`` from z + step e_column (a position, velocity or force column)."""
        dof = len(self.independent)
        q, force, velocities = self.q0.copy(), self.force0.copy(), self.qd0[self.independent].copy()
        if column < dof:
            q += step * self.tangent[:, column]
        elif column < 2 * dof:
            velocities[column - dof] += step
        else:
            force[column - 2 * dof] += step
        return self.states(q, solve_velocity_problem(self.mech, q, velocities, self.independent), force)


def _read_only(array: np.ndarray) -> np.ndarray:
    """The model's arrays are read-only; arrays put in their place must be too, or the compiled kernels
    are specialized (compiled) once more for writable ones."""
    array.setflags(write=False)
    return array


def _report(scaled: np.ndarray, reference: float, names: list[str], scales: np.ndarray, ignored: tuple[str, ...],
            window: float) -> ObservabilityReport:
    """Singular values, the null space in a readable basis (module docstring), and the report."""
    size = len(names)
    padded = np.vstack((scaled, np.zeros((max(0, size - scaled.shape[0]), size))))
    _, values, vt = np.linalg.svd(padded)
    threshold = max(RELATIVE_THRESHOLD * reference, ABSOLUTE_THRESHOLD)
    rank = int(np.sum(values > threshold))
    null = vt[rank:].T
    directions = []
    if null.shape[1]:
        pivots = scipy.linalg.qr(null.T, pivoting=True)[2][:null.shape[1]]
        basis = null @ np.linalg.inv(null[pivots])
        for pivot, vector in sorted(zip(pivots, basis.T), key=lambda pair: pair[0]):
            others = [i for i in np.argsort(-np.abs(vector)) if i != pivot]
            shown = [pivot] + [i for i in others if abs(vector[i]) >= SHOWN * np.max(np.abs(vector))][:MAX_SHOWN - 1]
            components = {names[i]: float(vector[i] / vector[pivot] * scales[i] / scales[pivot]) for i in shown}
            kinds = {KINDS[names[i].split(".")[0]] for i in shown}
            directions.append(Direction(components, tuple(k for k in KINDS.values() if k in kinds)))
    return ObservabilityReport(tuple(names), values, threshold, tuple(directions), ignored, window)
