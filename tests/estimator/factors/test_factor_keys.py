"""Keys and the time grid."""

import gtsam
import pytest

from estimator.errors import MbstateError
from estimator.factors.keys import A, F, L, Q, V, X, TimeGrid


def test_keys_of_all_kinds_and_steps_are_distinct() -> None:
    kinds = (Q, V, A, L, F, X)
    keys = {kind(k) for kind in kinds for k in range(1000)}
    assert len(keys) == len(kinds) * 1000
    assert gtsam.Symbol(Q(12)).index() == 12


def test_time_grid_rounds_to_the_nearest_step() -> None:
    assert int(0.57 / 0.01) == 56  # the truncation the grid avoids
    assert TimeGrid(t0=0.0, dt=0.01).step(0.57) == 57
    grid = TimeGrid(t0=10.0, dt=0.005)
    assert grid.step(10.3) == 60
    assert grid.step(10.3 + 0.0024) == 60 and grid.step(10.3 + 0.0026) == 61
    assert grid.step(grid.time(123456)) == 123456
    assert grid.time(2) == pytest.approx(10.01)


def test_time_grid_rejects_a_non_positive_step() -> None:
    with pytest.raises(MbstateError, match="time step"):
        TimeGrid(0.0, 0.0)
