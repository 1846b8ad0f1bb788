"""Start-up of the online estimator: the initial stacked state from the first readings.

With the readings buffered until every sensor has reported (or a time-out), at the start time t0:

1. position: Gauss-Newton on [Φ(q)/σ_Φ; W (h(q) − z) of each position-only sensor (encoders) at its
   reading nearest t0; 1e-3 (q − q_a)], from q_a = mech.q0 assembled; steps limited to 0.2 in
   max-norm so that the iteration follows the branch of q_a (the assembly mode of the file);
2. velocity: the linear least squares [Φq q̇ = 0 (weighted); gyroscopes (h linear in q̇) at their
   reading nearest t0; encoder rates ∂h/∂q q̇ = (z_last − z_first)/(t_last − t_first) over the buffer;
   1e-3 q̇ = 0];
3. q̈ and λ: Lagrange's equations with the unknown forces and biases at zero (kinematics: q̈ on
   Φq q̈ = γ, minimum norm); the start prior leaves them loose, the first steps' readings fix them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from estimator.constraints import constraint_jacobian
from estimator.dynamics.forward import multipliers
from estimator.dynamics.lagrange import accelerations
from estimator.constraints import constraint_derivatives
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.observation_stack import Observation, SensorTerm, observation_rows
from estimator.kinematics import solve_acceleration_problem, solve_position_problem
from estimator.model import Mechanism
from sensors.base import wrap_angle
from sensors.messages import Reading

CONSTRAINT_WEIGHT = 1e6  # 1/σ_Φ [1/m]: the constraints hold to ~1e-12 after the iteration anyway
REGULARIZATION = 1e-3  # weight of q − q_a and of q̇ (unobserved directions only)
MAX_STEP = 0.2  # [m, rad] per Gauss-Newton step
ITERATIONS = 50


def _nearest(readings: Sequence[Reading], t0: float) -> Reading:
    return min(readings, key=lambda r: abs(r.t - t0))


def initial_position(mech: Mechanism, layout: EstimationLayout, readings: Mapping[str, list[Reading]],
                     terms: Mapping[str, SensorTerm], t0: float) -> np.ndarray:
    """Step 1 of the module docstring: q at t0."""
    n = mech.n
    anchor = solve_position_problem(mech, mech.q0)
    observations = [Observation(terms[name], _nearest(rs, t0).value, terms[name].whitening(None), 0.0)
                    for name, rs in readings.items() if terms[name].sensor.variables == ("q",)]
    x = np.zeros(layout.size)
    x[:n] = anchor
    for _ in range(ITERATIONS):
        phi, phi_q, _ = constraint_derivatives(mech, x[:n], False)
        rows = [(CONSTRAINT_WEIGHT * phi, CONSTRAINT_WEIGHT * phi_q),
                (REGULARIZATION * (x[:n] - anchor), REGULARIZATION * np.eye(n))]
        rows += [(e, d[:, :n]) for e, d in (observation_rows(obs, x) for obs in observations)]
        step = np.linalg.lstsq(np.vstack([d for _, d in rows]), -np.concatenate([e for e, _ in rows]), rcond=None)[0]
        step *= min(1.0, MAX_STEP / max(np.max(np.abs(step)), 1e-300))
        x[:n] += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return solve_position_problem(mech, x[:n])


def initial_velocity(mech: Mechanism, layout: EstimationLayout, q: np.ndarray, readings: Mapping[str, list[Reading]],
                     terms: Mapping[str, SensorTerm], t0: float) -> np.ndarray:
    """Step 2 of the module docstring: q̇ at t0."""
    n = mech.n
    x = np.zeros(layout.size)
    x[:n] = q
    rows = [(np.zeros(mech.m), CONSTRAINT_WEIGHT * constraint_jacobian(mech, q)),
            (np.zeros(n), REGULARIZATION * np.eye(n))]
    for name, rs in readings.items():
        term = terms[name]
        if term.sensor.variables == ("q", "v"):
            e, d = observation_rows(Observation(term, _nearest(rs, t0).value, term.whitening(None), 0.0), x)
            rows.append((e, d[:, n:2 * n]))
        elif term.sensor.variables == ("q",) and len(rs) > 1:
            first, last = min(rs, key=lambda r: r.t), max(rs, key=lambda r: r.t)
            if last.t - first.t <= 0.0:
                continue
            change = last.value - first.value
            rate = (wrap_angle(change) if term.sensor.wraps else change) / (last.t - first.t)
            gradient = term.sensor.measurement(q, jac=True)[1][0]
            weight = (last.t - first.t) / (np.sqrt(2.0) * term.sigma)
            rows.append((-weight * rate, weight * gradient))
    return np.linalg.lstsq(np.vstack([d for _, d in rows]), -np.concatenate([e for e, _ in rows]), rcond=None)[0]


def initial_state(mech: Mechanism, layout: EstimationLayout, readings: Mapping[str, list[Reading]],
                  terms: Mapping[str, SensorTerm], t0: float) -> np.ndarray:
    """The stacked state x at t0 (module docstring); F and b zero."""
    n = mech.n
    q = initial_position(mech, layout, readings, terms, t0)
    qd = initial_velocity(mech, layout, q, readings, terms, t0)
    x = np.zeros(layout.size)
    x[:n], x[n:2 * n] = q, qd
    if len(layout.rows):
        qdd, _ = accelerations(mech.arrays, q, qd, 0.0, 0.0)
        x[2 * n:3 * n] = qdd
        x[layout.lam] = multipliers(mech, q, qd, qdd)[list(layout.rows)]
    else:
        x[2 * n:3 * n] = solve_acceleration_problem(mech, q, qd, np.zeros(0), [])
    return x
