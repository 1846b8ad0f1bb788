"""The auto walk densities (estimator.online.walk_scale): D² = E[(x(t) − x(t − T))²] / T against closed
forms, and the estimator's process factors built again as the density moves."""

import numpy as np
import pytest

from estimator.online.walk_scale import WalkScale

DT = 1e-3
HORIZON = 0.0625


def test_a_sinusoid_gives_the_density_of_its_mean_square_change():
    # x = A sin ωt: E[(x(t) − x(t − T))²] = A² (1 − cos ωT) over whole periods (closed form)
    amplitude, omega = 0.7, 2 * np.pi * 1.5
    scale = WalkScale(2, DT, HORIZON, memory=1e9, start=10.0, floor=1e-9)
    t = np.arange(0.0, 4.0 + HORIZON, DT)
    for ti in t:
        scale.add(np.array([amplitude * np.sin(omega * ti), 2 * amplitude * np.sin(omega * ti)]))
    expected = amplitude * np.sqrt((1 - np.cos(omega * HORIZON)) / HORIZON)
    # the plain mean over 6 whole periods (4 s from the first change at T): within the part-period's 1e-2
    np.testing.assert_allclose(scale.density, [expected, 2 * expected], rtol=1e-2)
    # a smooth motion: about its rms rate times √T (ωT = 0.59, so 1 − cos ωT ≈ (ωT)²/2 to 3 %)
    np.testing.assert_allclose(scale.density, np.array([1, 2]) * amplitude * omega / np.sqrt(2) * np.sqrt(HORIZON),
                               rtol=0.03)


def test_a_random_walk_gives_its_own_density():
    rng = np.random.default_rng(1)
    density = 3.0
    x = np.cumsum(rng.normal(0.0, density * np.sqrt(DT), size=200_000))
    scale = WalkScale(1, DT, HORIZON, memory=1e9, start=0.1, floor=1e-9)
    for value in x:
        scale.add(np.array([value]))
    # 200 s / T = 3200 independent changes: the mean square within 3 σ = 3 √(2/3200) = 7.5 % (D: half that)
    assert scale.density[0] == pytest.approx(density, rel=0.04)


def test_start_value_until_a_horizon_is_seen_then_the_floor_bounds_it():
    scale = WalkScale(1, DT, HORIZON, memory=1.0, start=10.0, floor=0.5)
    for _ in range(scale.lag):
        scale.add(np.zeros(1))
    assert scale.density[0] == pytest.approx(10.0)
    scale.add(np.zeros(1))  # a signal that does not move: the floor
    assert scale.density[0] == 0.5
    scale.restart()  # a jump across a restart is no change of the signal
    scale.add(np.array([1e3]))
    assert scale.density[0] == 0.5
