"""UKF: the unscented Kalman filter of the multibody-observer literature on the same error state as the
errorEKF (estimator.online.filters.error_ekf): mean (q, q̇) on the manifold, error x = [δz; δż] (N = 2 dof),
covariance P, with sigma points instead of Jacobians (Julier and Uhlmann; Wan and van der Merwe's
weights with α = 1, β = 2, κ = 0, so λ = 0 and no weight is negative):

    χ_0 = 0, χ_{±i} = ±(√(N P))_i;  w_0 = 0, w_{±i} = 1/(2N);  the covariance weights W_0 = 2, W_{±i} = w_{±i}.

Each sigma point is a state on the manifold, (q, q̇) corrected by χ (manifold.corrected). Prediction: every
point through one step of the forward dynamics; their errors in the coordinates chosen at the central
point's prediction, e_j = [z_j − z_0; ż_j − ż_0] (z = q[I']); x̄ = Σ w e, P⁻ = Σ W (e − x̄)(e − x̄)ᵀ + Q_d
(error_ekf.process_noise) and the mean = the central point corrected by x̄. Correction: sigma points of P⁻
about the mean, their innovations r_j = y − h(χ_j) (wrapped for angles), r̄ = Σ w r, P_rr = Σ W (r − r̄)(r − r̄)ᵀ
+ R_n, P_xh = −Σ W χ (r − r̄)ᵀ, K = P_xh P_rr⁻¹, x = K r̄, P ← P − K P_rr Kᵀ; the mean corrected by x.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from estimator.online.filters.error_ekf import ErrorEKF, Measurement, forward_step, measurement_rows, process_noise
from estimator.online.filters.manifold import corrected, linearize

BETA = 2.0  # the covariance weight's prior-knowledge term (Gaussian)


def sigma_points(covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(χ as rows, 2N + 1 of them, the central first; mean weights w; covariance weights W) of the module docstring."""
    size = len(covariance)
    root = np.linalg.cholesky(size * covariance + 1e-300 * np.eye(size))
    points = np.vstack((np.zeros(size), root.T, -root.T))
    weights = np.full(2 * size + 1, 0.5 / size)
    weights[0] = 0.0
    covariance_weights = weights.copy()
    covariance_weights[0] = BETA
    return points, weights, covariance_weights


class UnscentedKF(ErrorEKF):
    """The filter of the module docstring (start and σ as the errorEKF's)."""

    def _points(self, points: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The sigma points as (q, q̇) on the manifold, about the mean."""
        return [(self.state.q, self.state.qd)] + [corrected(self.mech, self.state, x) for x in points[1:]]

    def predict(self, dt: float) -> None:
        points, weights, covariance_weights = sigma_points(self.covariance)
        moved = [forward_step(self.mech, q, qd, dt) for q, qd in self._points(points)]
        centre = linearize(self.mech, *moved[0])
        indices = centre.ic.coordinates
        errors = np.array([np.concatenate((q[indices] - moved[0][0][indices], qd[indices] - moved[0][1][indices]))
                           for q, qd in moved])
        mean = weights @ errors
        spread = errors - mean
        self.covariance = (spread.T * covariance_weights) @ spread + process_noise(self.acceleration_noise,
                                                                                  centre.dof, dt)
        self.state = linearize(self.mech, *corrected(self.mech, centre, mean))

    def correct(self, measurements: Sequence[Measurement]) -> None:
        if not measurements:
            return
        points, weights, covariance_weights = sigma_points(self.covariance)
        states = [linearize(self.mech, q, qd, self.state.ic) for q, qd in self._points(points)]
        rows = [measurement_rows(s, measurements, jac=False) for s in states]
        innovations = np.array([r for r, _, _ in rows])
        mean = weights @ innovations
        spread = innovations - mean
        innovation_covariance = (spread.T * covariance_weights) @ spread + rows[0][2]
        cross = -(points.T * covariance_weights) @ spread
        gain = np.linalg.solve(innovation_covariance, cross.T).T
        q, qd = corrected(self.mech, self.state, gain @ mean)
        self.covariance = self.covariance - gain @ innovation_covariance @ gain.T
        self.state = linearize(self.mech, q, qd)
