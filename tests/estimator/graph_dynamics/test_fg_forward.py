"""Forward dynamics as a factor graph (estimator.graph_dynamics.forward) against a classical integration.

Reference: Lagrange multipliers with Baumgarte stabilization and projection, RK4 at 0.1 ms (a different
formulation and integrator; its own error is below 1e-11 m here). Case: the four-bar of Listing 1,
crank launched at y1' = 6 m/s so that it turns fully within 0.5 s (x1 and y1 each become singular as
independent coordinates on the way, so fg-ic must re-choose z).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conftest import MECHANISMS, read_csv
from estimator.cli import main
from estimator.constraints import constraint_values
from estimator.dynamics.forward import ForwardOptions, consistent_initial_state, integrate
from estimator.errors import MbstateError
from estimator.graph_dynamics.forward import FgOptions, simulate_fg
from estimator.kinematics import solve_velocity_problem
from estimator.mechanism_file import load_mechanism

DT, STEPS = 1e-3, 500


@cache
def case() -> tuple:
    mech = load_mechanism(MECHANISMS / "fourbar.yaml")
    q0, _ = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    qd0 = solve_velocity_problem(mech, q0, np.array([6.0]), [1])
    qs, _, _ = integrate(mech, q0, qd0, DT / 10, STEPS * 10, ForwardOptions(method="lagrange"))
    return mech, q0, qd0, qs[::10]


def worst_phi(mech, qs: np.ndarray) -> float:
    return max(np.max(np.abs(constraint_values(mech, q))) for q in qs)


# Observed max |q − q_ref| over 0.5 s: dc 3.7e-6 m (AM3), ic 6.4e-7 m (AM4), from a local error
# O(h⁴) resp. O(h⁵) accumulated; the bounds keep a margin of 2-3 while a trapezoidal integrator
# (order 2: 1e-5 m and more) or a wrong weight/Jacobian (mm) fails. |Φ|: constraints weighted 100× the
# integrators leave ~1e-14 m.
@pytest.mark.parametrize("formulation, tolerance", [("dc", 1e-5), ("ic", 2e-6)])
def test_factor_graph_follows_the_classical_integration(formulation, tolerance):
    mech, q0, qd0, reference = case()
    result = simulate_fg(mech, q0, qd0, DT, STEPS, formulation, lag=2)
    assert result.trajectory.q.shape == reference.shape
    np.testing.assert_allclose(result.trajectory.q, reference, rtol=0, atol=tolerance)
    assert worst_phi(mech, result.trajectory.q) < 1e-10
    assert result.recoveries == 0
    assert result.step_seconds.shape == (STEPS,)
    if formulation == "ic":
        assert result.rechoices >= 1  # the crank turned through the singular choices


def test_higher_order_integrators_are_more_accurate():
    mech, q0, qd0, reference = case()
    errors = [np.max(np.abs(simulate_fg(mech, q0, qd0, DT, 200, "dc", 2, FgOptions(order=p)).trajectory.q
                            - reference[:201])) for p in (2, 3, 4)]
    # Observed over 0.2 s: 3.7e-5, 1.4e-6, 2.4e-7 m (the start-up steps of lower order weigh on orders 3, 4).
    assert errors[0] > 5 * errors[1] and errors[1] > 3 * errors[2]


def test_longer_lag_gives_the_same_answer():
    mech, q0, qd0, _ = case()
    short = simulate_fg(mech, q0, qd0, DT, 100, "dc", 2).trajectory.q
    long = simulate_fg(mech, q0, qd0, DT, 100, "dc", 6).trajectory.q
    # Smoothing over more steps moves the estimates by the integrators' residuals only (observed 1e-11 m).
    np.testing.assert_allclose(long, short, rtol=0, atol=1e-9)


def test_bad_options_are_one_line_errors():
    mech, q0, qd0, _ = case()
    with pytest.raises(MbstateError, match="unknown formulation"):
        simulate_fg(mech, q0, qd0, DT, 10, "xyz")
    with pytest.raises(MbstateError, match="needs a lag of at least 2"):
        simulate_fg(mech, q0, qd0, DT, 10, "ic", lag=1)


@pytest.mark.parametrize("method", ["fg-dc", "fg-ic"])
def test_cli_writes_the_factor_graph_trajectory(tmp_path, capsys, method):
    out = tmp_path / "fg.csv"
    code = main(["forward", str(MECHANISMS / "fourbar.yaml"), "--method", method, "--lag", "3", "--t-end", "0.1",
                 "--dt", "0.001", "--velocity", "y1=6", "--factorization", "QR", "--out", str(out)])
    assert code == 0
    assert "0 solver recoveries" in capsys.readouterr().out
    trajectory = read_csv(out)
    mech, _, _, reference = case()
    assert trajectory.q.shape == (101, mech.n) and trajectory.lam.shape == (101, mech.m)
    np.testing.assert_allclose(trajectory.q, reference[:101], rtol=0, atol=1e-6)
