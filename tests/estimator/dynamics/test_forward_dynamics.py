"""Forward dynamics against independent references: the classic angle-based equations of single
and double pendulums integrated by SciPy at tight tolerance, a damped torsional oscillator, the
three methods against each other, and the conservative four-bar (energy and constraint drift)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from conftest import MECHANISMS
from estimator.constraints import constraint_values
from estimator.dynamics.forward import METHODS, ForwardOptions, consistent_initial_state, simulate
from estimator.forces import kinetic_energy, potential_energy
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism

G = 9.81
# Global error at t = 1 s with dt = 1 ms: ALi3 is second order (trapezoidal), the others RK4.
POSITION_TOLERANCE = {"ali3": 2e-5, "lagrange": 1e-8, "rmatrix": 1e-8}

PENDULUM = """
points:
  - {x: 0, y: 0, fixed: true}
  - {x: L*cos(a0), y: L*sin(a0)}
parameters: {L: 2.0, a0: 0.7}
planar_bodies:
  - {points: [0, 1], mass: 5.0, I0: (1/3)*mass*length^2, cog: [0.5*length, 0]}
"""

DOUBLE_PENDULUM = """
parameters: {L1: 1.0, L2: 1.5, a1: 0.0, a2: 0.3}
points:
  - {x: 0, y: 0, fixed: true}
  - {x: L1*cos(a1), y: L1*sin(a1)}
  - {x: x1 + L2*cos(a2), y: y1 + L2*sin(a2)}
planar_bodies:
  - {points: [0, 1], mass: 1.0, I0: (1/3)*mass*length^2, cog: [0.5*length, 0]}
  - {points: [1, 2], mass: 2.0, I0: (1/3)*mass*length^2, cog: [0.5*length, 0]}
"""


def run(mech: Mechanism, method: str, t_end: float, dt: float = 1e-3, integrator: str = "rk4"):
    q0, qd0 = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    return simulate(mech, q0, qd0, dt, int(round(t_end / dt)), ForwardOptions(method=method, integrator=integrator))


def reference(rhs, y0, t):
    """SciPy's DOP853 at rtol 1e-12: the independent reference trajectory."""
    return solve_ivp(rhs, (t[0], t[-1]), y0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t).y.T


@pytest.mark.parametrize("method", METHODS)
def test_single_pendulum_matches_angle_equation(method, write_yaml):
    mech = load_mechanism(write_yaml(PENDULUM))
    m, length = 5.0, 2.0
    inertia = m * length**2 / 3

    def rhs(_, y):  # I0 θ̈ = −m g (L/2) cos θ, θ from +x
        return [y[1], -m * G * length / 2 * np.cos(y[0]) / inertia]

    trajectory = run(mech, method, t_end=1.0)
    theta = reference(rhs, [0.7, 0.0], trajectory.t)[:, 0]
    expected = length * np.column_stack((np.cos(theta), np.sin(theta)))
    assert np.max(np.abs(trajectory.q - expected)) < POSITION_TOLERANCE[method] * length


@pytest.mark.parametrize("method", METHODS)
def test_double_pendulum_matches_angle_equations(method, write_yaml):
    mech = load_mechanism(write_yaml(DOUBLE_PENDULUM))
    m1, m2, l1, l2 = 1.0, 2.0, 1.0, 1.5
    c = m2 * l1 * l2 / 2

    def rhs(_, y):  # Lagrange's equations in the absolute link angles
        t1, t2, w1, w2 = y
        mass = np.array([[m1 * l1**2 / 3 + m2 * l1**2, c * np.cos(t1 - t2)],
                         [c * np.cos(t1 - t2), m2 * l2**2 / 3]])
        velocity = np.array([c * np.sin(t1 - t2) * w2**2, -c * np.sin(t1 - t2) * w1**2])
        gravity = G * np.array([(m1 / 2 + m2) * l1 * np.cos(t1), m2 * l2 / 2 * np.cos(t2)])
        return [w1, w2, *np.linalg.solve(mass, -velocity - gravity)]

    trajectory = run(mech, method, t_end=1.0)
    t1, t2 = reference(rhs, [0.0, 0.3, 0.0, 0.0], trajectory.t)[:, :2].T
    p1 = l1 * np.column_stack((np.cos(t1), np.sin(t1)))
    p2 = p1 + l2 * np.column_stack((np.cos(t2), np.sin(t2)))
    assert np.max(np.abs(trajectory.q - np.hstack((p1, p2)))) < POSITION_TOLERANCE[method] * 10


@pytest.mark.parametrize("method", METHODS)
def test_damped_torsional_oscillator(method, write_yaml):
    """A rod on a torsional spring-damper without gravity: I0 θ̈ = −k (θ − θ0) − c θ̇."""
    mech = load_mechanism(write_yaml("""
gravity: [0, 0]
points:
  - {x: 0, y: 0, fixed: true}
  - {x: cos(0.5), y: sin(0.5)}
planar_bodies:
  - {points: [0, 1], mass: 3.0, I0: (1/3)*mass*length^2, cog: [0.5*length, 0]}
relative_coordinates:
  - {type: RelativeAngleAbsoluteDOF, points: [0, 1]}
forces:
  - {type: torsional_spring, coordinate: theta0, k: 20.0, c: 0.8, angle: 0.0}
"""))
    inertia, k, c = 1.0, 20.0, 0.8
    trajectory = run(mech, method, t_end=2.0)
    expected = reference(lambda _, y: [y[1], (-k * y[0] - c * y[1]) / inertia], [0.5, 0.0], trajectory.t)
    assert np.max(np.abs(trajectory.q[:, 2] - expected[:, 0])) < POSITION_TOLERANCE[method] * 20
    assert np.max(np.abs(trajectory.qd[:, 2] - expected[:, 1])) < POSITION_TOLERANCE[method] * 200


def test_methods_agree_on_the_four_bar():
    mech = load_mechanism(MECHANISMS / "fourbar.yaml")
    runs = {method: run(mech, method, t_end=2.0) for method in METHODS}
    assert np.max(np.abs(runs["lagrange"].q - runs["rmatrix"].q)) < 1e-7
    assert np.max(np.abs(runs["ali3"].q - runs["rmatrix"].q)) < 1e-4
    # multipliers recovered from the same states agree as well
    assert np.max(np.abs(runs["lagrange"].lam - runs["rmatrix"].lam)) < 1e-5


def test_conservative_four_bar_ali3_ten_seconds():
    """Acceptance: 10 s at dt = 1 ms, |Φ| <= 1e-9 throughout, relative energy drift <= 1e-4.

    The drift is (max E − min E) over the largest kinetic energy reached, which does not depend on
    the datum of the potential energy."""
    mech = load_mechanism(MECHANISMS / "fourbar.yaml")
    trajectory = run(mech, "ali3", t_end=10.0)
    phi = max(np.max(np.abs(constraint_values(mech, q))) for q in trajectory.q)
    kinetic = np.array([kinetic_energy(mech, qd) for qd in trajectory.qd])
    total = kinetic + np.array([potential_energy(mech, q) for q in trajectory.q])
    drift = (total.max() - total.min()) / kinetic.max()
    print(f"four-bar ALi3 10 s: max |Φ| = {phi:.3g}, relative energy drift = {drift:.3g}")
    assert phi <= 1e-9
    assert drift <= 1e-4


@pytest.mark.parametrize("method", METHODS)
def test_redundant_robot_keeps_constraints_and_energy(method):
    mech = load_mechanism(MECHANISMS / "pick_and_place.yaml")
    trajectory = run(mech, method, t_end=0.5)
    phi = max(np.max(np.abs(constraint_values(mech, q))) for q in trajectory.q)
    total = [kinetic_energy(mech, qd) + potential_energy(mech, q) for q, qd in zip(trajectory.q, trajectory.qd)]
    kinetic = max(kinetic_energy(mech, qd) for qd in trajectory.qd)
    assert phi < 1e-9
    assert (max(total) - min(total)) / kinetic < 1e-3


@pytest.mark.parametrize("integrator", ["euler", "heun", "rk4"])
def test_integrators_converge_with_their_order(integrator, write_yaml):
    """Halving dt divides the error by about 2^order (1, 2, 4) against the SciPy reference."""
    mech = load_mechanism(write_yaml(PENDULUM))

    def rhs(_, y):
        return [y[1], -5.0 * G * 1.0 * np.cos(y[0]) / (5.0 * 4.0 / 3)]

    errors = []
    for dt in (4e-3, 2e-3):
        trajectory = run(mech, "lagrange", t_end=0.4, dt=dt, integrator=integrator)
        theta = reference(rhs, [0.7, 0.0], trajectory.t)[:, 0]
        errors.append(np.max(np.abs(trajectory.q[:, 0] - 2.0 * np.cos(theta))))
    order = {"euler": 1, "heun": 2, "rk4": 4}[integrator]
    assert errors[0] / errors[1] == pytest.approx(2.0**order, rel=0.35)
