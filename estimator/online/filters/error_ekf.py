"""errorEKF: an error-state extended Kalman filter on the independent coordinates (Sanjurjo, Naya,
Cuadrado et al., the errorEKF of the multibody-observer literature).

The mean is (q, q̇) on the constraint manifold; the filter's state is the error x = [δz; δż] (2 dof) in
independent coordinates z = q[I] chosen at q (estimator.online.filters.manifold), with covariance P.

Prediction over h: the mean by one step of the model's forward dynamics (the R-matrix method,
estimator.dynamics.rmatrix, Runge-Kutta 4 on [z, ż], exact on the manifold), the covariance by the
linearized error dynamics, P⁻ = F P Fᵀ + Q_d, F = I + hA + (hA)²/2 (manifold.Linearization.transition),
and the process noise of white acceleration noise of density σ_a on every independent coordinate
(the literature's plant noise on the accelerations), discretized exactly for a double integrator:

    Q_d = σ_a² [[h³/3 I, h²/2 I], [h²/2 I, h I]].

When the coordinates chosen at the new q differ, P is carried over: P ← T P Tᵀ (manifold.change_of_coordinates).

Correction with a step's readings y_j (sensor models of sensors/, h_j of the blocks q, q̇, q̈): H_j = Σ_b
∂h_j/∂b · ∂b/∂x (the chain of manifold.Linearization), innovation r = y − h (wrapped for angles),
K = P Hᵀ (H P Hᵀ + R_n)⁻¹, x = K r, P ← (I − KH) P (I − KH)ᵀ + K R_n Kᵀ (Joseph form); the mean is then
put back on the manifold by the position and velocity problems with z + δz, ż + δż held and the
error reset to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimator.dynamics import rmatrix
from estimator.dynamics.integrators import TABLEAUS
from estimator.errors import MbstateError
from estimator.kinematics import RANK_TOLERANCE
from estimator.model import Mechanism
from estimator.online.filters.manifold import Linearization, change_of_coordinates, corrected, linearize
from sensors.base import Sensor

POSITION_TOLERANCE = 1e-12  # [m, rad] of the R-matrix step's position problems


@dataclass(frozen=True)
class Measurement:
    """One reading for the correction: its sensor, value and noise covariance."""

    sensor: Sensor
    value: np.ndarray
    covariance: np.ndarray


def process_noise(density: float, dof: int, dt: float) -> np.ndarray:
    """Q_d of white acceleration noise of ``density`` [unit/s²/√Hz] on each of ``dof`` coordinates (module docstring)."""
    block = density ** 2 * np.array([[dt ** 3 / 3.0, dt ** 2 / 2.0], [dt ** 2 / 2.0, dt]])
    return np.kron(block, np.eye(dof))


def forward_step(mech: Mechanism, q: np.ndarray, qd: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) after one Runge-Kutta 4 step of the R-matrix forward dynamics."""
    a, b = TABLEAUS["rk4"]
    qs, qds, _ = rmatrix.simulate(mech.arrays, q, qd, dt, 1, a, b, POSITION_TOLERANCE, RANK_TOLERANCE)
    return qs[1], qds[1]


def measurement_rows(state: Linearization, measurements: Sequence[Measurement],
                     jac: bool = True) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Stacked innovation r = y − h(state) (wrapped for angles), H = ∂h/∂x (None unless ``jac``) and the
    noise covariance R_n."""
    residuals, jacobians, blocks = [], [], []
    for m in measurements:
        sensor = m.sensor
        arguments = [{"q": state.q, "v": state.qd, "a": state.qdd, "g": np.zeros(1)}[v] for v in sensor.variables]
        value, parts = sensor.measurement(*arguments, jac=jac)
        residuals.append(-sensor.residual(value, m.value))
        if jac:
            jacobians.append(sum(j @ d for j, d in zip(parts, state.blocks(sensor.variables))))
        blocks.append(m.covariance)
    size = sum(len(b) for b in blocks)
    noise, start = np.zeros((size, size)), 0
    for b in blocks:
        noise[start:start + len(b), start:start + len(b)] = b
        start += len(b)
    return np.concatenate(residuals), np.vstack(jacobians) if jac else None, noise


def kalman_gain(covariance: np.ndarray, jacobian: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """K = P Hᵀ (H P Hᵀ + R_n)⁻¹."""
    innovation = jacobian @ covariance @ jacobian.T + noise
    return np.linalg.solve(innovation, jacobian @ covariance).T


def joseph(covariance: np.ndarray, gain: np.ndarray, jacobian: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """(I − KH) P (I − KH)ᵀ + K R_n Kᵀ: symmetric and positive for any gain."""
    reduced = np.eye(len(covariance)) - gain @ jacobian
    return reduced @ covariance @ reduced.T + gain @ noise @ gain.T


class ErrorEKF:
    """The filter of the module docstring: ``start``, then per step ``predict`` and ``correct``."""

    def __init__(self, mech: Mechanism, acceleration_noise: float) -> None:
        if not isinstance(mech, Mechanism):  # its manifold maps are the planar model's (filters.manifold)
            raise MbstateError("estimator.kind: the errorEKF and the UKF take planar mechanism files; on a URDF "
                               "use smoother or null_jerk")
        self.mech, self.acceleration_noise = mech, acceleration_noise
        self.state: Linearization | None = None
        self.covariance = np.zeros((0, 0))

    def start(self, q: np.ndarray, qd: np.ndarray, position_sigma: float, velocity_sigma: float) -> None:
        """Mean (q, q̇) on the manifold, P = diag(σ_z², σ_ż²)."""
        self.state = linearize(self.mech, q, qd)
        dof = self.state.dof
        self.covariance = np.diag(np.repeat([position_sigma ** 2, velocity_sigma ** 2], dof))

    def predict(self, dt: float) -> None:
        state = self.state
        transition = state.transition(dt)
        covariance = transition @ self.covariance @ transition.T + process_noise(self.acceleration_noise, state.dof,
                                                                                 dt)
        q, qd = forward_step(self.mech, state.q, state.qd, dt)
        self.state = linearize(self.mech, q, qd)
        if not np.array_equal(self.state.ic.coordinates, state.ic.coordinates):
            change = change_of_coordinates(linearize(self.mech, q, qd, state.ic), self.state.ic)
            covariance = change @ covariance @ change.T
        self.covariance = covariance

    def correct(self, measurements: Sequence[Measurement]) -> None:
        """The correction of the module docstring; AssemblyError (the position problem) leaves the state
        as it was."""
        if not measurements:
            return
        residual, jacobian, noise = measurement_rows(self.state, measurements)
        gain = kalman_gain(self.covariance, jacobian, noise)
        q, qd = corrected(self.mech, self.state, gain @ residual)
        self.covariance = joseph(self.covariance, gain, jacobian, noise)
        self.state = linearize(self.mech, q, qd)

    def sigmas(self) -> tuple[np.ndarray, np.ndarray]:
        """Standard deviations of q and q̇ (first order: ∂q/∂x P ∂q/∂xᵀ)."""
        s, p = self.state, self.covariance
        return (np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", s.d_q, p, s.d_q), 0.0)),
                np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", s.d_qd, p, s.d_qd), 0.0)))
