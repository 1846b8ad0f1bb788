"""The fixed-lag smoother wrapper: recovery from GTSAM failures, and its options."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest

import estimator.smoother as smoother_module
from conftest import MECHANISMS
from estimator.dynamics.forward import ForwardOptions, consistent_initial_state, integrate
from estimator.errors import MbstateError
from estimator.factors.adapter import gtsam_factor
from estimator.graph_dynamics.forward import simulate_fg
from estimator.mechanism_file import load_mechanism
from estimator.smoother import FixedLagSmoother, SmootherOptions


class FailsOnce:
    """A GTSAM smoother whose ``fail_at``-th update raises what GTSAM raises for a singular system."""

    def __init__(self, inner: gtsam.FixedLagSmoother, fail_at: int, failures: list) -> None:
        self.inner, self.fail_at, self.failures, self.updates = inner, fail_at, failures, 0

    def update(self, *args):
        self.updates += 1
        if self.updates == self.fail_at and not self.failures:
            self.failures.append(self.updates)
            raise RuntimeError("Indeterminate linear system detected while working near variable 7 (Symbol: s7).")
        return self.inner.update(*args)

    def calculateEstimate(self):
        return self.inner.calculateEstimate()

    def calculateEstimateVector(self, key):
        return self.inner.calculateEstimateVector(key)


def test_a_failed_update_restarts_from_the_window_and_the_run_stays_accurate(monkeypatch):
    mech = load_mechanism(MECHANISMS / "fourbar.yaml")
    q0, qd0 = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    failures: list = []
    real = smoother_module.new_gtsam_smoother
    monkeypatch.setattr(smoother_module, "new_gtsam_smoother",
                        lambda options: FailsOnce(real(options), fail_at=120, failures=failures))
    result = simulate_fg(mech, q0, qd0, 1e-3, 300, "dc", lag=2)
    assert failures == [120] and result.recoveries == 1
    reference = integrate(mech, q0, qd0, 1e-4, 3000, ForwardOptions(method="lagrange"))[0][::10]
    # Without the failure the run is within 3e-8 m of the reference over 0.3 s from rest; the restart
    # pins the window at its estimate (priors of 1e-9) and so must keep that accuracy (1e-7).
    np.testing.assert_allclose(result.trajectory.q, reference, rtol=0, atol=1e-7)


def test_a_genuinely_singular_step_fails_after_one_recovery():
    smoother = FixedLagSmoother(SmootherOptions(lag=2))
    a, b = gtsam.symbol("s", 0), gtsam.symbol("s", 1)
    graph, values = gtsam.NonlinearFactorGraph(), gtsam.Values()
    graph.add(gtsam.PriorFactorVector(a, np.zeros(2), gtsam.noiseModel.Isotropic.Sigma(2, 1.0)))
    values.insert(a, np.zeros(2))
    smoother.update(graph, values, {a: 0.0})
    # b only in a factor that leaves its second entry free: an indeterminate linear system.
    graph, values = gtsam.NonlinearFactorGraph(), gtsam.Values()
    graph.add(gtsam_factor(gtsam.noiseModel.Unit.Create(1), [b],
                           lambda x, jac=True: (x[:1] - 1.0, [np.array([[1.0, 0.0]])] if jac else None)))
    values.insert(b, np.ones(2))
    with pytest.raises(MbstateError, match="failed twice in a row"):
        smoother.update(graph, values, {b: 1.0})
    assert smoother.recoveries == 1


@pytest.mark.parametrize("options", [dict(lag=0), dict(backend="x"), dict(factorization="LU"), dict(ordering="NATURAL"),
                                     dict(relinearize_skip=0), dict(recovery_sigma=0.0)])
def test_bad_options_are_errors(options):
    with pytest.raises(MbstateError):
        SmootherOptions(**options)


def test_update_for_returns_the_states_asked_for_and_keeps_the_window_on_request():
    """update_for (GTSAM computes the requested states only) against update (the whole window), on a
    chain of 2-vectors with a prior, relative measurements and an absolute one per step."""
    full, lean = FixedLagSmoother(SmootherOptions(lag=3)), FixedLagSmoother(SmootherOptions(lag=3))
    rng = np.random.default_rng(5)
    unit = gtsam.noiseModel.Unit.Create(2)
    for k in range(12):
        key = gtsam.symbol("s", k)
        graph, values = gtsam.NonlinearFactorGraph(), gtsam.Values()
        graph.add(gtsam.PriorFactorVector(key, rng.normal(size=2), unit))
        if k:
            graph.add(gtsam.BetweenFactorVector(gtsam.symbol("s", k - 1), key, rng.normal(size=2), unit))
        values.insert(key, np.zeros(2))
        window = full.update(graph, values, {key: float(k)})
        previous = gtsam.symbol("s", max(k - 1, 0))
        newest, before = lean.update_for(graph, values, {key: float(k)}, [key, previous])
        np.testing.assert_allclose(newest, window.atVector(key), rtol=0, atol=1e-12)
        np.testing.assert_allclose(before, window.atVector(previous), rtol=0, atol=1e-12)
    lean.keep_window()
    oldest = gtsam.symbol("s", 8)
    np.testing.assert_allclose(lean.estimate(oldest), full.estimate(oldest), rtol=0, atol=1e-12)


def test_replace_factors_swaps_a_factor_of_the_window_for_another():
    """A prior N(0, 1) on a variable, then swapped (by its GTSAM slot) for N(5, 1): the estimate moves to
    5, as if the first prior had never been added (a relinearization swaps step factors this way)."""
    smoother = FixedLagSmoother(SmootherOptions(lag=3, relinearize_threshold=None))
    key = gtsam.symbol("s", 0)
    noise = gtsam.noiseModel.Isotropic.Sigma(1, 1.0)
    graph, values = gtsam.NonlinearFactorGraph(), gtsam.Values()
    graph.add(gtsam.PriorFactorVector(key, np.zeros(1), noise))
    values.insert(key, np.zeros(1))
    [first] = smoother.update_for(graph, values, {key: 0.0}, [key])
    [slot] = smoother.new_factor_indices
    assert first == pytest.approx([0.0])
    replacement = gtsam.NonlinearFactorGraph()
    replacement.add(gtsam.PriorFactorVector(key, np.array([5.0]), noise))
    [moved] = smoother.replace_factors([slot], replacement, [key])
    assert moved == pytest.approx([5.0]) and len(smoother.new_factor_indices) == 1
