"""The step's state reduced to its shared columns (estimator.factors.reduced_state), checked against
the least-squares problem over the whole state solved directly (numpy's lstsq and inverse)."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest

from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.keys import X
from estimator.factors.native import LinearRelation
from estimator.factors.reduced_state import ReducedState, Unresolved

# q of 5 coordinates, z = q[4]; F (1), b (2), λ on 4 rows: s = [z, ż, z̈, F, b] (6), d = 4 · 3 + 4 = 16
LAYOUT = EstimationLayout(5, (0, 1, 2, 3), (0,), (2,), independent=(4,))
REDUCED = ReducedState(LAYOUT)


def step_rows(rng: np.random.Generator, readings: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Whitened rows with the sparsity of a step's factor: position rows on q, velocity rows on q and q̇,
    acceleration rows without λ, dynamics rows on everything, and ``readings`` reading rows."""
    n, size = LAYOUT.n, LAYOUT.size
    jacobian = rng.normal(size=(4 * 4 + 1 + readings, size))
    jacobian[:4, n:] = 0.0
    jacobian[4:8, 2 * n:] = 0.0
    jacobian[8:12, LAYOUT.lam] = 0.0
    return rng.normal(size=jacobian.shape[0]), jacobian


def test_the_reduced_rows_and_the_lift_solve_the_least_squares_over_the_dependent_columns() -> None:
    rng = np.random.default_rng(0)
    error, jacobian = step_rows(rng)
    x0 = rng.normal(size=LAYOUT.size)
    reduced, block, lift = REDUCED.reduce(x0, error, jacobian)
    on_local, on_shared = jacobian[:, LAYOUT.local], jacobian[:, LAYOUT.shared]
    assert reduced.shape == (len(error) - len(LAYOUT.local),) and block.shape == (len(reduced), len(LAYOUT.shared))
    for _ in range(3):
        step = rng.normal(size=len(LAYOUT.shared))
        best = np.linalg.lstsq(on_local, -(error + on_shared @ step), rcond=None)[0]
        residual = np.linalg.norm(error + on_shared @ step + on_local @ best)
        assert np.linalg.norm(reduced + block @ step) == pytest.approx(residual, rel=1e-12)
        x = lift(x0[LAYOUT.shared] + step)
        np.testing.assert_allclose(x[LAYOUT.shared], x0[LAYOUT.shared] + step, rtol=0, atol=1e-14)
        np.testing.assert_allclose(x[LAYOUT.local], x0[LAYOUT.local] + best, rtol=0, atol=1e-12)


def test_the_lift_variances_are_the_marginals_of_the_whole_state() -> None:
    """The rows plus a prior on s: the variances of x from the covariance of s through the lift equal
    the diagonal of the inverse of the whole information matrix."""
    rng = np.random.default_rng(1)
    error, jacobian = step_rows(rng)
    _, block, lift = REDUCED.reduce(rng.normal(size=LAYOUT.size), error, jacobian)
    prior = np.diag(rng.uniform(0.5, 2.0, size=len(LAYOUT.shared)))
    information = jacobian.T @ jacobian
    information[np.ix_(LAYOUT.shared, LAYOUT.shared)] += prior
    covariance_s = np.linalg.inv(block.T @ block + prior)
    np.testing.assert_allclose(lift.variances(covariance_s), np.diag(np.linalg.inv(information)), rtol=1e-10)


def test_a_change_the_dependent_columns_absorb_does_not_reach_the_shared_rows() -> None:
    rng = np.random.default_rng(2)
    error, jacobian = step_rows(rng, readings=0)
    _, _, lift = REDUCED.reduce(rng.normal(size=LAYOUT.size), error, jacobian)
    absorbed = jacobian[:, LAYOUT.local] @ rng.normal(size=len(LAYOUT.local))
    assert np.max(np.abs(lift.remaining(absorbed))) < 1e-12
    change = rng.normal(size=len(error))
    remaining = lift.remaining(change[:12])  # only the first rows changed: the rest count as 0
    padded = np.concatenate((change[:12], np.zeros(len(error) - 12)))
    projection = padded - jacobian[:, LAYOUT.local] @ np.linalg.lstsq(jacobian[:, LAYOUT.local], padded, rcond=None)[0]
    assert np.linalg.norm(remaining) == pytest.approx(np.linalg.norm(projection), rel=1e-10)


def test_rows_that_cannot_determine_the_dependent_columns_are_refused() -> None:
    rng = np.random.default_rng(3)
    error, jacobian = step_rows(rng)
    jacobian[:, LAYOUT.lam.start] = 0.0  # one λ in no row
    with pytest.raises(Unresolved, match="no longer determine"):
        REDUCED.reduce(np.zeros(LAYOUT.size), error, jacobian)
    with pytest.raises(Unresolved, match="cannot determine"):
        REDUCED.reduce(np.zeros(LAYOUT.size), error[:10], jacobian[:10])


def test_a_relation_between_steps_lands_on_the_shared_columns_only() -> None:
    rng = np.random.default_rng(4)
    size = LAYOUT.size
    a, b = np.zeros((3, size)), np.zeros((3, size))
    a[:, LAYOUT.shared], b[:, LAYOUT.shared] = rng.normal(size=(2, 3, len(LAYOUT.shared)))
    rhs = rng.normal(size=3)
    whole = LinearRelation(gtsam.noiseModel.Unit.Create(3), [size, size],
                           lambda x0, x1, jac=True: (a @ x0 + b @ x1 - rhs, [a, b]))
    factor = REDUCED.relation(whole).factor([7, 8])
    x0, x1 = rng.normal(size=size), rng.normal(size=size)
    values = gtsam.Values()
    values.insert(X(7), x0[LAYOUT.shared])
    values.insert(X(8), x1[LAYOUT.shared])
    assert factor.error(values) == pytest.approx(0.5 * np.sum((a @ x0 + b @ x1 - rhs) ** 2), rel=1e-12)
    a[0, LAYOUT.local[0]] = 1.0
    with pytest.raises(ValueError, match="dependent column"):
        REDUCED.relation(LinearRelation(gtsam.noiseModel.Unit.Create(3), [size, size],
                                        lambda x0, x1, jac=True: (a @ x0 + b @ x1 - rhs, [a, b])))
