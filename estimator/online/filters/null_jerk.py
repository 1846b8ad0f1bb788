"""Null-jerk Kalman filter: every coordinate a triple integrator driven by white jerk, no model of the
mechanism's dynamics (the per-joint filter an arm's engineer runs for q̇ and q̈ from the encoders).

State x = [q; q̇; q̈] (3n), per coordinate independent in the prediction over h (the exact discretization
of a white jerk of density j, ``jerk_random_walk``, on a triple integrator; Bar-Shalom, Li and
Kirubarajan, "Estimation with Applications to Tracking and Navigation", §6.2.3, the Wiener-process
acceleration model):

    F = [[1, h, h²/2], [0, 1, h], [0, 0, 1]],   Q = j² [[h⁵/20, h⁴/8, h³/6], [h⁴/8, h³/3, h²/2], [h³/6, h²/2, h]].

Correction with a step's readings y of the blocks q, q̇, q̈ (sensors/: encoders, and any sensor whose h
reads those blocks), linearized at the prediction (an extended Kalman filter: H = ∂h/∂x, innovation
y − h wrapped for angles), Joseph form as the error EKF (estimator.online.filters.error_ekf). The
coordinates must be free: a model with constraints (a planar file, a closed chain) is refused, since
the filter knows nothing that would keep Φ(q) = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import scipy.linalg

from estimator.errors import MbstateError
from estimator.model_protocol import Model, constraint_count
from estimator.online.filters.error_ekf import Measurement, joseph, kalman_gain

BLOCKS = "qva"  # the sensor blocks the state carries, in x's order
START_ACCELERATION_SIGMA = 10.0  # [rad/s² or m/s²] the prior σ of q̈ at the start (the start-up fits q, q̇)


def transition(dt: float) -> np.ndarray:
    """F of one coordinate (module docstring)."""
    return np.array([[1.0, dt, 0.5 * dt * dt], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])


def jerk_noise(density: float, dt: float) -> np.ndarray:
    """Q of one coordinate (module docstring)."""
    h = dt
    return density ** 2 * np.array([[h ** 5 / 20, h ** 4 / 8, h ** 3 / 6],
                                    [h ** 4 / 8, h ** 3 / 3, h ** 2 / 2],
                                    [h ** 3 / 6, h ** 2 / 2, h]])


class NullJerkKF:
    """The filter of the module docstring: ``start``, then per step ``predict`` and ``correct``."""

    def __init__(self, mech: Model, jerk_density: float) -> None:
        if constraint_count(mech):
            raise MbstateError("estimator.kind: null_jerk needs free coordinates (a URDF tree); this model has "
                               f"{constraint_count(mech)} constraint rows: use kind smoother, error_ekf or ukf")
        self.mech, self.n, self.density = mech, mech.n, jerk_density
        self.x = np.zeros(3 * self.n)
        self.covariance = np.zeros((3 * self.n, 3 * self.n))

    @property
    def state(self) -> SimpleNamespace:
        """The estimate's q, q̇ and q̈."""
        n = self.n
        return SimpleNamespace(q=self.x[:n], qd=self.x[n:2 * n], qdd=self.x[2 * n:])

    def start(self, q: np.ndarray, qd: np.ndarray, position_sigma: float, velocity_sigma: float) -> None:
        """x = [q; q̇; 0], P = diag(σ_q², σ_q̇², START_ACCELERATION_SIGMA²) per coordinate."""
        self.x = np.concatenate((q, qd, np.zeros(self.n)))
        self.covariance = np.diag(np.repeat([position_sigma ** 2, velocity_sigma ** 2, START_ACCELERATION_SIGMA ** 2],
                                            self.n))

    def predict(self, dt: float) -> None:
        """x ← F x, P ← F P Fᵀ + Q, F and Q per coordinate (Kronecker products over the blocks)."""
        identity = np.eye(self.n)
        big_f = np.kron(transition(dt), identity)
        self.x = big_f @ self.x
        self.covariance = big_f @ self.covariance @ big_f.T + np.kron(jerk_noise(self.density, dt), identity)

    def correct(self, measurements: Sequence[Measurement]) -> None:
        """One EKF correction with every reading of the step (module docstring)."""
        if not measurements:
            return
        residuals, jacobians, noises = [], [], []
        blocks = {b: self.x[i * self.n:(i + 1) * self.n] for i, b in enumerate(BLOCKS)}
        for m in measurements:
            h, parts = m.sensor.measurement(*[blocks[v] for v in m.sensor.variables])
            jacobian = np.zeros((len(h), 3 * self.n))
            for variable, part in zip(m.sensor.variables, parts):
                first = BLOCKS.index(variable) * self.n
                jacobian[:, first:first + self.n] += part
            residuals.append(-m.sensor.residual(h, m.value))
            jacobians.append(jacobian)
            noises.append(m.covariance)
        residual, jacobian = np.concatenate(residuals), np.vstack(jacobians)
        noise = scipy.linalg.block_diag(*noises)
        gain = kalman_gain(self.covariance, jacobian, noise)
        self.x = self.x + gain @ residual
        self.covariance = joseph(self.covariance, gain, jacobian, noise)

    def sigmas(self) -> tuple[np.ndarray, np.ndarray]:
        """Standard deviations of q and q̇."""
        variances = np.maximum(np.diag(self.covariance), 0.0)
        return np.sqrt(variances[:self.n]), np.sqrt(variances[self.n:2 * self.n])

