"""The unknown forces' process model (``force_model``): a smooth drive torque estimated through a
crank encoder alone (the accuracy matrix's slider-crank, set a, driven, its force_rate) against the
simulation's truth. The random walk lags the torque or, with a larger density, follows the encoder's
noise; with the force's rate in the state (``smooth``) the same density follows it closer."""

from __future__ import annotations

import dataclasses

from estimator.benchmarks.accuracy import Cell, load_matrix, run_cell

MATRIX = load_matrix()


def torque_share(model: str) -> float:
    base = dataclasses.replace(MATRIX.base, estimator=dataclasses.replace(MATRIX.base.estimator, force_model=model))
    result = run_cell(dataclasses.replace(MATRIX, base=base), Cell("slider_crank", "a", "driven"), 1.5,
                      timing=False)
    assert result.solver_recoveries == 0 and result.error is None
    return result.force_share()["motor"]


def test_a_smooth_force_model_follows_a_drive_torque_closer_than_a_random_walk() -> None:
    smooth, walk = torque_share("smooth"), torque_share("walk")
    assert smooth < 0.03 and smooth < 0.6 * walk
