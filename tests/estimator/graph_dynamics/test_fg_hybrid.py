"""Hybrid dynamics by factor graph against classical forward dynamics: the double pendulum's
shoulder is driven along the motion a forward simulation produced, the elbow is left free.

Reference: Lagrange/Baumgarte RK4 at h = 0.1 ms (error far below the graph's), sampled every 5 ms.
The graph integrates the free elbow with the trapezoidal rule at 5 ms, second-order accurate:
measured max error 7.3e-4 rad (free swing, 1 s) and 1.2e-4 rad (with the torque); the drive force
error is the same O(Δt²) effect, measured 0.021 N·m and 0.002 N·m against a gravity torque scale
of ~13 N·m. Tolerances: about twice those.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import MECHANISMS, read_csv

import estimator.cli as cli
from estimator.dynamics.forward import ForwardOptions, consistent_initial_state, integrate
from estimator.errors import MbstateError
from estimator.graph_dynamics.hybrid import fg_hybrid_dynamics
from estimator.mechanism_file import build_mechanism, load_mechanism

PENDULUM = MECHANISMS / "double_pendulum.yaml"
H, EVERY, STEPS = 1e-4, 50, 10000  # reference step [s], samples every 5 ms, 1 s


def simulate(shoulder_torque: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """t and q, q̇, q̈ of the double pendulum released from rest (horizontal), a constant torque on
    the shoulder coordinate."""
    document = yaml.safe_load(PENDULUM.read_text())
    document["forces"] = [{"type": "coordinate_force", "coordinate": "shoulder", "value": shoulder_torque}]
    mech = build_mechanism(document, "double_pendulum+torque")
    q0, qd0 = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    qs, qds, qdds = integrate(mech, q0, qd0, H, STEPS, ForwardOptions(method="lagrange", integrator="rk4"))
    return H * EVERY * np.arange(STEPS // EVERY + 1), qs[::EVERY], qds[::EVERY], qdds[::EVERY]


@pytest.mark.parametrize(("torque", "motion_tol", "force_tol"), [(0.0, 1.5e-3, 0.05), (3.0, 3e-4, 0.005)])
def test_free_elbow_follows_forward_dynamics_and_the_drive_supplies_the_applied_torque(torque, motion_tol, force_tol):
    """(a) the free coordinate's motion equals the forward simulation; (b) the drive force equals
    the torque the simulation applied (0: the prescribed motion needs no force)."""
    t, q, qd, qdd = simulate(torque)
    mech = load_mechanism(PENDULUM)  # without the torque: the graph must find it
    s, e = mech.index("shoulder"), mech.index("elbow")
    result = fg_hybrid_dynamics(mech, ["shoulder"], t, q[:, [s]], qd[:, [s]], qdd[:, [s]],
                                initial={"elbow": q[0, e]})
    graph = result.trajectory
    assert np.ptp(q[:, e]) > 0.3  # the elbow really swings
    np.testing.assert_allclose(graph.q, q, rtol=0, atol=motion_tol)
    np.testing.assert_allclose(graph.q[:, s], q[:, s], rtol=0, atol=1e-9)  # prescribed
    np.testing.assert_allclose(graph.forces["shoulder"], torque, rtol=0, atol=force_tol)
    assert result.iterations <= 10 and np.all(np.isfinite(graph.lam))


def test_cli_hybrid(tmp_path, capsys):
    """``mbstate hybrid`` from a sampled drive to a CSV."""
    t, q, _, _ = simulate(0.0)
    mech = load_mechanism(PENDULUM)
    s, e = mech.index("shoulder"), mech.index("elbow")
    trajectory = tmp_path / "shoulder.txt"
    np.savetxt(trajectory, np.c_[t, q[:, s]], header="t shoulder", comments="% ", fmt="%.12e")
    out = tmp_path / "out.csv"
    code = cli.main(["hybrid", str(PENDULUM), "--trajectory", str(trajectory), "--drive", "shoulder",
                     "--initial", "elbow=0", "--velocity", "elbow=0", "--out", str(out)])
    assert code == 0 and "Q.shoulder" in capsys.readouterr().out
    written = read_csv(out)
    # The drive's rates now come from the local fit of the samples (degree 5 over 100 ms), whose bias
    # on this fast swing (measured up to 0.10 N·m in the force) adds to the graph's O(Δt²) error.
    np.testing.assert_allclose(written.q[:, e], q[:, e], atol=1.5e-3)
    np.testing.assert_allclose(written.forces["shoulder"], 0.0, atol=0.2)


def test_errors():
    mech = load_mechanism(PENDULUM)
    t, zeros = np.array([0.0, 0.005]), np.zeros((2, 2))
    with pytest.raises(MbstateError, match="no free degree of freedom"):
        fg_hybrid_dynamics(mech, ["shoulder", "elbow"], t, zeros, zeros, zeros)
    with pytest.raises(MbstateError, match="initial value is given for a driven coordinate"):
        fg_hybrid_dynamics(mech, ["shoulder"], t, zeros[:, :1], zeros[:, :1], zeros[:, :1], initial={"shoulder": 0})
    with pytest.raises(MbstateError, match="unknown coordinate 'knee'"):
        fg_hybrid_dynamics(mech, ["shoulder"], t, zeros[:, :1], zeros[:, :1], zeros[:, :1], rates={"knee": 1.0})
