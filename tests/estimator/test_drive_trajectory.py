"""Driven-coordinate trajectory files and their smooth derivatives."""

import numpy as np
import pytest
from conftest import reference_file
from scipy.interpolate import CubicSpline

from estimator.drive_trajectory import hermite_resample, load_drive_trajectory, local_polynomial_derivatives
from estimator.errors import MbstateError

CRANK_FILE = reference_file("fourbars1-with-rel-angle-trajectory.txt")


def crank(t):
    """The four-bar crank motion θ = 1.2 (1 − cos 2t) and its derivatives."""
    return 1.2 * (1.0 - np.cos(2.0 * t)), 2.4 * np.sin(2.0 * t), 4.8 * np.cos(2.0 * t)


def test_reads_upstream_crank_file():
    samples = load_drive_trajectory(CRANK_FILE, 1)
    assert samples.values.shape == (2000, 1)
    assert samples.t[1] - samples.t[0] == pytest.approx(0.005)
    # the file holds 8 significant digits of the closed form
    np.testing.assert_allclose(samples.values[:, 0], crank(samples.t)[0], atol=6e-8)


def test_derivatives_of_rounded_samples_beat_an_interpolating_spline():
    """8-digit samples every 5 ms: the local fit must be far less noisy than a cubic spline, whose
    second derivative amplifies the rounding by ~1/h² (measured RMS 5.0e-3 rad/s², fit 4.2e-5)."""
    samples = load_drive_trajectory(CRANK_FILE, 1)
    pos, vel, acc = samples.derivatives()
    exact = crank(samples.t)
    rms = np.sqrt(np.mean((acc[:, 0] - exact[2]) ** 2))
    spline = CubicSpline(samples.t, samples.values[:, 0])
    rms_spline = np.sqrt(np.mean((spline(samples.t, 2) - exact[2]) ** 2))
    print(f"θ̈ RMS error: local fit {rms:.2e}, cubic spline {rms_spline:.2e} rad/s²")
    assert rms < 1e-4 and rms < 0.05 * rms_spline
    assert np.max(np.abs(acc[:, 0] - exact[2])) < 5e-4  # ends included (one-sided windows)
    assert np.max(np.abs(vel[:, 0] - exact[1])) < 1e-5
    assert np.max(np.abs(pos[:, 0] - exact[0])) < 1e-7


def test_quintic_polynomials_are_reproduced_on_uneven_times():
    """A degree-5 fit is exact for degree-5 data, at the ends and with uneven sampling."""
    rng = np.random.default_rng(7)
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, size=60))
    coef = rng.normal(size=(6, 2))
    values = np.polynomial.polynomial.polyval(t, coef).T
    vel = np.polynomial.polynomial.polyval(t, np.polynomial.polynomial.polyder(coef)).T
    acc = np.polynomial.polynomial.polyval(t, np.polynomial.polynomial.polyder(coef, 2)).T
    p, v, a = local_polynomial_derivatives(t, values)
    np.testing.assert_allclose(p, values, atol=1e-9)
    np.testing.assert_allclose(v, vel, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(a, acc, rtol=1e-5, atol=1e-4)


def test_two_samples_give_a_straight_line():
    p, v, a = local_polynomial_derivatives(np.array([0.0, 2.0]), np.array([[1.0], [5.0]]))
    np.testing.assert_allclose(p[:, 0], [1.0, 5.0])
    np.testing.assert_allclose(v[:, 0], [2.0, 2.0])
    np.testing.assert_allclose(a[:, 0], [0.0, 0.0])


@pytest.mark.parametrize(
    ("text", "count", "problem"),
    [
        ("% t x\n0 1\n", 1, "at least 2 samples"),
        ("0 1\n0.1 abc\n", 1, "line 2: not numeric"),
        ("0 1\n0.1 2\n", 2, "line 1: expected 3 columns"),
        ("0 1 2\n# comment\n0.1 2\n", 2, "line 3: expected 3 columns"),
        ("0 1\n0.1 2\n0.1 3\n", 1, "time must increase strictly"),
        ("0 1\n0.1 nan\n", 1, "line 2: non-finite"),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path, text, count, problem):
    path = tmp_path / "drive.txt"
    path.write_text(text)
    with pytest.raises(MbstateError, match=problem) as info:
        load_drive_trajectory(path, count)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(MbstateError, match="cannot read trajectory"):
        load_drive_trajectory(tmp_path / "absent.txt", 1)


def test_hermite_resampling_is_exact_for_quintics() -> None:
    t = np.array([0.0, 0.3, 0.5, 1.0])
    coef = np.array([0.2, -1.0, 0.5, 2.0, -0.7, 0.3])
    poly = np.polynomial.Polynomial(coef)
    values = [p(t)[:, None] for p in (poly, poly.deriv(), poly.deriv(2))]
    times = np.linspace(0.0, 1.0, 37)
    for result, p in zip(hermite_resample(t, *values, times), (poly, poly.deriv(), poly.deriv(2))):
        np.testing.assert_allclose(result[:, 0], p(times), atol=1e-12)
