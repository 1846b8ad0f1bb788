"""Native linear factors (estimator.factors.native): GTSAM's error of the factor equals the numpy
error function it was read from, for one to four variables (the JacobianFactor constructors of
one to three keys and the GaussianConditional path beyond)."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest

from estimator.factors.keys import X
from estimator.factors.native import LinearRelation, linearized_factor


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


def test_linearized_factor_is_the_first_order_expansion_about_its_point() -> None:
    rng = np.random.default_rng(7)
    x0, e0, jacobian = rng.normal(size=3), rng.normal(size=5), rng.normal(size=(5, 3))
    factor = linearized_factor(gtsam.noiseModel.Unit.Create(5), [X(0)], [x0], e0, [jacobian])
    x = x0 + 0.1 * rng.normal(size=3)
    values = gtsam.Values()
    values.insert(X(0), x)
    expected = e0 + jacobian @ (x - x0)
    assert factor.error(values) == pytest.approx(0.5 * expected @ expected, rel=1e-12)
    a, b = factor.linearize(values).jacobian()
    np.testing.assert_allclose(a, jacobian, rtol=1e-12)
    np.testing.assert_allclose(b, -expected, rtol=1e-12)
