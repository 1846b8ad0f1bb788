"""The ``auto`` density A of the white acceleration noise (``acceleration_noise``, estimator.online.config),
matched to the velocity changes the model does not explain: covariance matching of the process noise over
two horizons, as a variogram's slope.

At step k the newest estimate's velocity less its prediction from the previous update's estimate of
step k − 1 through the trapezoidal rule, over every coordinate,

    ρ_k = q̇_k − q̇_{k−1} − h/2 (q̈_{k−1} + q̈_k),

is what step k's readings change the velocity by beyond the model. Its part along the mechanism's motion
(T the tangent metric at step k: Δw = (TᵀT)⁻¹ Tᵀ ρ_k, least squares) seen through the independent
coordinates z = q[P] is

    r_k = T[P] Δw ≈ ż_k − ż_{k−1} − h/2 (z̈_{k−1} + z̈_k):

read from z alone, the part of ρ_k off the motion (the soft constraint rows' share) would come back
through T[P]⁻¹, amplified where the partition's pivot is low (a file of points, before each switch).
Whitened by the noise's shape (Drafter.noise_shape: Cov r_k = A² h C_k, C_k = L_k L_kᵀ, e_k = L_k⁻¹ r_k)
and summed, s_k = Σ_{j ≤ k} e_j, its change over a horizon T telescopes to the change of the estimated
velocity against the model's over T. Under the white noise of density A that change has the covariance
A² T I; the error of the estimate's velocity (the readings' noise it follows, σ_ż) adds 2 σ_ż² I at
every horizon. The mean square per coordinate V(T) = E[|s_k − s_{k−T}|²] / m at the two horizons
T₁ = T₂/4 and T₂ = ACCELERATION_HORIZON leaves out the second:

    A² = (V(T₂) − V(T₁)) / (T₂ − T₁),

m the coordinates the noise acts on (the driven ones left out with the jerk force model). A model error
that the model-error states do not take up shows as what it is: an acceleration error a, smooth over T₂,
gives A² ≈ a² T₂. The means are exponentially weighted with time constant ACCELERATION_MEMORY (the plain
mean while fewer changes are in); A starts at ACCELERATION_START, until both horizons are seen, and stays at
least ACCELERATION_FLOOR of it. Where the independent coordinates change, the sums turn into the new
coordinates' frame (the same motion whitened anew), so that a file of points, whose coordinates change
often, matches A as a file with angle coordinates does. The first T₂ of steps after a start are left out:
their velocity changes are the estimate's convergence from its start (estimator.online.startup), not the
process noise.
"""

from __future__ import annotations

import math

import numpy as np

from estimator.factors.estimation_state import EstimationLayout
from estimator.online.config import (ACCELERATION_FLOOR, ACCELERATION_HORIZON, ACCELERATION_MEMORY,
                                     ACCELERATION_START, AUTO, EstimatorConfig)
from estimator.online.drafting import Drafter
from estimator.online.partitions import Partitions


class AccelerationNoise:
    """A of the module docstring for one estimator, set on its drafter after each update (the steps drafted
    from then on); inactive unless ``acceleration_noise`` is auto and the smoother has the dynamics."""

    def __init__(self, config: EstimatorConfig, layout: EstimationLayout, drafter: Drafter,
                 partitions: Partitions) -> None:
        self.active = config.acceleration_noise == AUTO and config.dynamics
        self.drafter, self.partitions, self.n, self.h = drafter, partitions, layout.n, config.dt
        self.lags = (max(1, round(ACCELERATION_HORIZON / 4 / config.dt)),
                     max(2, round(ACCELERATION_HORIZON / config.dt)))
        self.weight = min(1.0, config.dt / ACCELERATION_MEMORY)
        self.density = ACCELERATION_START
        self._means = [0.0, 0.0]  # V(T₁), V(T₂)
        self._seen = [0, 0]
        self._coordinates_of: dict[tuple[int, ...], np.ndarray] = {}  # P → those of P the noise acts on
        self._coordinates: np.ndarray | None = None  # those the sum is over
        self._ring = np.zeros((0, 0))  # s_k of the last lags[1] steps
        self._count = 0
        self._settling = 0  # steps left out after a start (module docstring)

    def observe(self, k: int, before: np.ndarray | None, after: np.ndarray) -> None:
        """Step k's newest estimate ``after`` and the previous update's estimate ``before`` of step k − 1
        (None: none, the sum starts again)."""
        if not self.active:
            return
        integrated = self.partitions.integrated(k)
        coordinates = self._coordinates_of.get(integrated)
        if coordinates is None:
            coordinates = self._coordinates_of[integrated] = np.asarray(integrated)[~self.drafter.driven(integrated)]
        if before is None:
            self._restart(coordinates)
            self._settling = self.lags[1]
            return
        if self._settling:  # the estimate still converging from its start, not the process noise
            self._settling -= 1
            return
        tangent = self.partitions.tangents[k]
        if coordinates is not self._coordinates:
            self._carry(coordinates, tangent)
        if not len(coordinates):
            return
        n, h = self.n, self.h
        residual = after[n:2 * n] - before[n:2 * n] - 0.5 * h * (before[2 * n:3 * n] + after[2 * n:3 * n])
        picked = tangent[coordinates]
        change = picked @ np.linalg.solve(tangent.T @ tangent, tangent.T @ residual)  # r_k: the motion's, through z
        total = self._ring[(self._count - 1) % len(self._ring)] if self._count else 0.0
        white = change / np.linalg.norm(picked) if len(coordinates) == 1 else np.linalg.solve(_whitener(picked), change)
        self._add(total + white, len(coordinates))

    def _add(self, total: np.ndarray, m: int) -> None:
        """s_k into the ring, the means of its changes over the two horizons, A from them."""
        ring, count = self._ring, self._count
        for i, lag in enumerate(self.lags):
            if count >= lag:
                difference = total - ring[(count - lag) % len(ring)]
                self._seen[i] += 1
                self._means[i] += max(self.weight, 1.0 / self._seen[i]) * (float(difference @ difference) / m
                                                                           - self._means[i])
        ring[count % len(ring)] = total
        self._count = count + 1
        if self._seen[1]:
            square = (self._means[1] - self._means[0]) / ((self.lags[1] - self.lags[0]) * self.h)
            self.density = max(math.sqrt(max(square, 0.0)), ACCELERATION_FLOOR * ACCELERATION_START)
            self.drafter.acceleration_noise = self.density

    def _carry(self, coordinates: np.ndarray, tangent: np.ndarray) -> None:
        """The sums into the frame of the new ``coordinates`` P′ at a change of the independent coordinates:
        with Q = L⁻¹ T[P] (L Lᵀ = T[P] T[P]ᵀ) a whitened change is e = Q w (w the bodies' velocity change,
        q̇ = T w), so the sums turn by Q′ Qᵀ, the same motion's sums in the new frame (a rotation when P and
        P′ span the same motions, as they do without driven coordinates). A new sum where the count
        differs or no sum is open."""
        previous = self._coordinates
        if previous is None or not self._count or len(previous) != len(coordinates):
            self._restart(coordinates)
            return
        old, new = tangent[previous], tangent[coordinates]
        turn = np.linalg.solve(_whitener(new), new) @ np.linalg.solve(_whitener(old), old).T
        self._ring = self._ring @ turn.T
        self._coordinates = coordinates

    def _restart(self, coordinates: np.ndarray) -> None:
        """A new sum over ``coordinates`` (the means are kept)."""
        self._coordinates, self._count = coordinates, 0
        if self._ring.shape[1] != len(coordinates):
            self._ring = np.zeros((self.lags[1], len(coordinates)))


def _whitener(picked: np.ndarray) -> np.ndarray:
    """L with L Lᵀ = T[P] T[P]ᵀ (``picked`` = T[P]), lower triangular: Cov r_k = A² h L Lᵀ."""
    return np.linalg.cholesky(picked @ picked.T)
