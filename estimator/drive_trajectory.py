"""Prescribed trajectories of driven coordinates, read from the upstream text format, and their
smooth time derivatives.

File format (upstream MBSE): one row per sample, column 0 the time t [s], then one column per
driven coordinate [m or rad]; blank lines and lines starting with ``%`` or ``#`` are comments.

Derivatives: a local least-squares polynomial (Savitzky-Golay) of degree 5 over a window of 21
samples, centred on each sample and shifted one-sided (same size) near the ends; position,
velocity and acceleration are the fitted polynomial and its first two derivatives at the sample
time. An interpolating spline is not used: it passes through every rounded sample, so the
rounding noise ε of the data reaches the second derivative amplified by ~1/h². The fit averages
that noise over its window (the wider, the less noise and the more bias); a window of 21 keeps the
fit's bias small for trajectories with features down to about its span (0.1 s at 5 ms sampling).
docs/performance.md compares the fit with splines on the four-bar's crank file.

Resampling (``hermite_resample``): between two samples, the quintic that matches position, velocity
and acceleration at both ends, so the resampled motion is consistent to the second derivative.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from estimator.errors import MbstateError

FIT_DEGREE = 5
FIT_WINDOW = 21
# [c3, c4, c5] of p(s) = Σ c_k s^k from the end conditions p(1), p'(1), p''(1) (quintic Hermite)
_HERMITE_END = np.linalg.inv(np.array([[1.0, 1.0, 1.0], [3.0, 4.0, 5.0], [6.0, 12.0, 20.0]]))


@dataclass(frozen=True)
class DriveTrajectory:
    """Samples of k driven coordinates: times ``t`` (N,) strictly increasing, ``values`` (N, k)."""

    t: np.ndarray
    values: np.ndarray

    def derivatives(self, degree: int = FIT_DEGREE,
                    window: int = FIT_WINDOW) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, acceleration) at the sample times, each (N, k), from local
        least-squares polynomials (see the module docstring)."""
        return local_polynomial_derivatives(self.t, self.values, degree, window)


def local_polynomial_derivatives(t: np.ndarray, values: np.ndarray, degree: int = FIT_DEGREE,
                                 window: int = FIT_WINDOW) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit y(t_i + s) ≈ Σ_j c_j (s/h_i)^j by least squares over ``window`` neighbouring samples of
    each t_i (h_i: half the window's time span), and return c_0, c_1/h_i, 2 c_2/h_i², each (N, k).

    The window shrinks to N samples and the degree to window − 1 for short series; all N fits are
    solved at once with a batched pseudo-inverse.
    """
    t = np.asarray(t, float)
    values = np.asarray(values, float).reshape(len(t), -1)
    count = len(t)
    window = min(window, count)
    degree = min(degree, window - 1)
    start = np.clip(np.arange(count) - window // 2, 0, count - window)
    rows = start[:, None] + np.arange(window)  # (N, window) sample indices of each fit
    offset = t[rows] - t[:, None]
    half_span = 0.5 * (t[rows[:, -1]] - t[rows[:, 0]])
    vandermonde = (offset / half_span[:, None])[:, :, None] ** np.arange(degree + 1)
    coef = np.linalg.pinv(vandermonde) @ values[rows]  # (N, degree + 1, k)
    zeros = np.zeros_like(coef[:, 0])
    velocity = coef[:, 1] / half_span[:, None] if degree >= 1 else zeros
    acceleration = 2.0 * coef[:, 2] / half_span[:, None] ** 2 if degree >= 2 else zeros
    return coef[:, 0], velocity, acceleration


def hermite_resample(t: np.ndarray, pos: np.ndarray, vel: np.ndarray, acc: np.ndarray,
                     times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity, acceleration at ``times`` from the quintic through (pos, vel, acc) at both
    ends of each sample interval; inputs (N, k), outputs (len(times), k)."""
    i = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
    h = (t[i + 1] - t[i])[:, None]
    s = (times - t[i])[:, None]
    s = s / h
    c0, c1, c2 = pos[i], h * vel[i], 0.5 * h**2 * acc[i]
    ends = np.stack((pos[i + 1] - c0 - c1 - c2, h * vel[i + 1] - c1 - 2.0 * c2, h**2 * acc[i + 1] - 2.0 * c2))
    c3, c4, c5 = np.einsum("ij,jnk->ink", _HERMITE_END, ends)
    p = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
    v = (c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)))) / h
    a = (2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5))) / h**2
    return p, v, a


def load_drive_trajectory(path: str | Path, count: int) -> DriveTrajectory:
    """Read a trajectory file with ``count`` driven-coordinate columns; raises MbstateError naming
    the file and the problem."""
    rows = []
    try:
        with open(path, encoding="utf-8") as stream:
            lines = stream.readlines()
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read trajectory ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MbstateError(f"{path}: not a text file") from None
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text[0] in "%#":
            continue
        fields = text.replace(",", " ").split()
        try:
            row = [float(field) for field in fields]
        except ValueError:
            raise MbstateError(f"{path}: line {number}: not numeric: {text[:60]!r}") from None
        if len(row) != count + 1:
            raise MbstateError(f"{path}: line {number}: expected {count + 1} columns (time and {count} "
                               f"driven coordinate{'s' if count != 1 else ''}), got {len(row)}")
        if not np.all(np.isfinite(row)):
            raise MbstateError(f"{path}: line {number}: non-finite value")
        rows.append(row)
    if len(rows) < 2:
        raise MbstateError(f"{path}: a trajectory needs at least 2 samples, got {len(rows)}")
    data = np.array(rows)
    steps = np.diff(data[:, 0])
    if np.any(steps <= 0.0):
        k = int(np.argmax(steps <= 0.0))
        raise MbstateError(f"{path}: time must increase strictly (t = {data[k + 1, 0]:g} s follows {data[k, 0]:g} s)")
    return DriveTrajectory(t=data[:, 0], values=data[:, 1:])
