"""The stacked state as two GTSAM variables (estimator.factors.state_split)."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest

from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.native import LinearRelation
from estimator.factors.state_split import StateSplit

LAYOUT = EstimationLayout(n=3, rows=(0, 1), forces=(0,), bias=(2,))  # x: q, q̇, q̈ (9), F (1), b (2), λ (2)


def test_split_and_join_are_inverse_and_lambda_comes_last() -> None:
    split = StateSplit(LAYOUT)
    x = np.arange(LAYOUT.size, dtype=float)
    rest, lam = split.split(x)
    assert LAYOUT.lam == slice(12, 14) and list(lam) == [12.0, 13.0] and len(rest) == 12
    np.testing.assert_array_equal(split.join([rest, lam]), x)
    assert split.keys(4) == [gtsam.symbol("s", 4), gtsam.symbol("l", 4)]
    assert StateSplit(EstimationLayout(3, (), (), ())).keys(4) == [gtsam.symbol("s", 4)]


def test_a_split_relation_has_the_error_of_the_relation_on_whole_states() -> None:
    """Two-state relation whose λ columns are zero on the first state: the split factor leaves out
    L of that state and gives, on the split values, the error of the relation on the whole states."""
    rng = np.random.default_rng(5)
    size, rows = LAYOUT.size, 6
    a, b, rhs = rng.normal(size=(rows, size)), rng.normal(size=(rows, size)), rng.normal(size=rows)
    a[:, LAYOUT.lam] = 0.0
    noise = gtsam.noiseModel.Diagonal.Sigmas(np.linspace(0.5, 2.0, rows))
    whole = LinearRelation(noise, [size, size], lambda x0, x1, jac=True: (a @ x0 + b @ x1 - rhs, [a, b]))
    split = StateSplit(LAYOUT)
    relation = split.relation(whole)
    assert relation.used == (True, False, True, True)
    factor = relation.factor([7, 8])
    x0, x1 = rng.normal(size=size), rng.normal(size=size)
    values = gtsam.Values()
    for k, x in ((7, x0), (8, x1)):
        for key, part in zip(split.keys(k), split.split(x)):
            values.insert(key, part)
    expected = 0.5 * np.sum(((a @ x0 + b @ x1 - rhs) / np.linspace(0.5, 2.0, rows)) ** 2)
    assert factor.error(values) == pytest.approx(expected, rel=1e-12)
    assert gtsam.symbol("l", 7) not in list(factor.keys())


def test_an_error_function_on_the_parts_has_the_whole_jacobian_in_columns() -> None:
    split = StateSplit(LAYOUT)
    matrix = np.random.default_rng(6).normal(size=(4, LAYOUT.size))
    function = split.function(lambda x, jac=True: (matrix @ x, [matrix] if jac else None))
    x = np.linspace(-1.0, 1.0, LAYOUT.size)
    error, (rest, lam) = function(*split.split(x))
    np.testing.assert_allclose(error, matrix @ x, rtol=1e-14)
    np.testing.assert_array_equal(np.hstack([rest, lam]), matrix)
