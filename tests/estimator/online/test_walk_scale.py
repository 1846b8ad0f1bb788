"""The auto walk densities (estimator.online.walk_scale): D² = (3 V(2T) − 2 V(T) − V(3T)) / T from the
variogram V(τ) = E[(x̂(t) − x̂(t − τ))²] of the estimate, against closed forms, and the estimate's own
error left out."""

import numpy as np
import pytest

from estimator.online.config import WALK_SHARE
from estimator.online.walk_scale import WalkScale

DT = 1e-3
HORIZON = 0.0625


def _density(signal: np.ndarray, start: float = 10.0) -> np.ndarray:
    """D after the whole ``signal`` (rows: steps), a plain mean (memory far longer than the signal)."""
    scale = WalkScale(signal.shape[1], DT, HORIZON, memory=1e9, start=start, floor=1e-9)
    for x in signal:
        scale.add(x)
    return scale.density


def test_a_sinusoid_gives_its_variograms_combination_and_a_slow_one_its_rms_rate():
    # x = A sin ωt: V(τ) = A² (1 − cos ωτ) over whole periods (closed form)
    amplitude, omega = 0.7, 2 * np.pi * 1.5
    t = np.arange(0.0, 20.0 + 4 * HORIZON, DT)
    wave = amplitude * np.sin(omega * t)
    density = _density(np.stack([wave, 2 * wave], axis=1))
    horizon = round(HORIZON / DT) * DT  # T on the grid: 62 steps
    v = [1 - np.cos(omega * k * horizon) for k in (1, 2, 3)]
    expected = amplitude * np.sqrt((3 * v[1] - 2 * v[0] - v[2]) / horizon)
    # the plain means over 30 periods, each horizon's from its first change (a part-period apart): to 1e-2
    np.testing.assert_allclose(density, [expected, 2 * expected], rtol=1e-2)
    # a smooth motion (3ωT = 0.35, V within 1 % of its quadratic): about its rms rate times √T, to 3 %
    amplitude, omega = 0.4, 2 * np.pi * 0.3
    t = np.arange(0.0, 20.0 + 4 * HORIZON, DT)
    density = _density((amplitude * np.sin(omega * t))[:, None])
    assert density[0] == pytest.approx(amplitude * omega / np.sqrt(2) * np.sqrt(HORIZON), rel=0.03)


def test_the_estimates_error_is_left_out():
    # the slow sinusoid above read with a white error of σ 0.05: V gains 2σ² at every horizon; matched at one
    # horizon that gives √(V(T) / T) = 0.31 for the motion's 0.133, the three horizons the motion's own
    rng = np.random.default_rng(1)
    amplitude, omega = 0.4, 2 * np.pi * 0.3
    t = np.arange(0.0, 20.0 + 4 * HORIZON, DT)
    signal = amplitude * np.sin(omega * t) + rng.normal(0.0, 0.05, t.size)
    # 20 s of white error: D within 6 % over five seeds (seed 1: 0.5 %); 10 % holds it at 3σ
    assert _density(signal[:, None])[0] == pytest.approx(amplitude * omega / np.sqrt(2) * np.sqrt(HORIZON), rel=0.1)


def test_a_random_walk_gives_its_own_density():
    rng = np.random.default_rng(1)
    density = 3.0
    x = np.cumsum(rng.normal(0.0, density * np.sqrt(DT), size=200_000))
    # 200 s: D spread 2.7 % (one σ) over eight seeds; 10 % is past 3σ
    assert _density(x[:, None], start=0.1)[0] == pytest.approx(density, rel=0.1)


def test_start_value_until_the_horizons_are_seen_then_the_floors_bound_it():
    scale = WalkScale(1, DT, HORIZON, memory=1.0, start=10.0, floor=0.5)
    for _ in range(scale.lags[0] + scale.lags[-1]):  # the start's T left out, then 3T of estimates
        scale.add(np.zeros(1))
    assert scale.density[0] == pytest.approx(10.0)
    scale.add(np.zeros(1))  # a signal that does not move: the floor
    assert scale.density[0] == 0.5
    scale.restart()  # a jump across a restart is no change of the signal (its first T left out)
    for _ in range(scale.lags[0] + 1):
        scale.add(np.array([1e3]))
    assert scale.density[0] == 0.5
    # a V the same at every horizon (an error alone: 1 every fifth step, V = 2/5 at shifts that are not multiples
    # of 5, as T, 2T, 3T = 62, 124, 186 steps) gives no motion's part: D keeps WALK_SHARE of √(V(T)/T)
    scale = WalkScale(1, DT, HORIZON, memory=1e9, start=10.0, floor=1e-9)
    for k in range(2000):
        scale.add(np.array([float(k % 5 == 0)]))
    # (the means of the three horizons start at different steps of the pattern: equal to 1e-2)
    assert scale.density[0] == pytest.approx(WALK_SHARE * np.sqrt(scale._means[0][0] / scale.horizon), rel=1e-2)
