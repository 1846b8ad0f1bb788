"""Native linear factors (estimator.factors.native): GTSAM's error of the factor equals the numpy
error function it was read from, for one to four variables (the JacobianFactor constructors of
one to three keys and the GaussianConditional path beyond)."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest

from estimator.factors.keys import X
from estimator.factors.native import LinearRelation


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_native_factor_error_matches_its_error_function(count: int) -> None:
    rng = np.random.default_rng(count)
    sizes = [3, 2, 4, 3][:count]
    matrices = [rng.normal(size=(5, size)) for size in sizes]
    offset = rng.normal(size=5)
    sigmas = rng.uniform(0.5, 2.0, size=5)

    def error(*xs: np.ndarray, jac: bool = True):
        e = sum(a @ x for a, x in zip(matrices, xs)) - offset
        return e, (list(matrices) if jac else None)

    relation = LinearRelation(gtsam.noiseModel.Diagonal.Sigmas(sigmas), sizes, error)
    keys = [X(k) for k in range(count)]
    factor = relation.factor(keys)
    values, xs = gtsam.Values(), [rng.normal(size=size) for size in sizes]
    for key, x in zip(keys, xs):
        values.insert(key, x)
    expected = 0.5 * np.sum((error(*xs)[0] / sigmas) ** 2)
    assert factor.error(values) == pytest.approx(expected, rel=1e-12)
