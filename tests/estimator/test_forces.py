"""Generalized forces: central-difference checks of ∂Q/∂q and ∂Q/∂q̇, and the power balance of
every force element (virtual work) as an independent reference for Q itself."""

import numpy as np
import pytest

from reference_forms import point_positions

from estimator.forces import force_jacobians, generalized_forces, has_state_forces, potential_energy
from estimator.mechanism_file import load_mechanism

# Points 0 and 3 fixed; bodies with the first point fixed (crank, rocker) and both points moving
# (coupler); every force kind, with and without damping.
FORCES = """
points:
  - {x: 0, y: 0, fixed: true}    # 0
  - {x: 1, y: 0}                 # 1
  - {x: 1, y: 1}                 # 2
  - {x: 2, y: 0, fixed: true}    # 3
planar_bodies:
  - {name: crank, points: [0, 1], mass: 1, I0: 0.4, cog: [0.5, 0.1]}
  - {name: coupler, points: [1, 2], mass: 2, I0: 0.9, cog: [0.5, 0]}
  - {name: rocker, points: [3, 2], mass: 1.5, I0: 0.7, cog: [0.6, -0.1]}
relative_coordinates:
  - {type: RelativeAngleAbsoluteDOF, points: [0, 1]}
  - {type: RelativeAngle, bodies: [crank, coupler], name: knee}
forces:
  - {type: spring, points: [1, 3], k: 50, c: 2, length: 0.8}
  - {type: spring, points: [0, 2], k: 20}              # rest length: file distance √2
  - {type: damper, points: [1, 2], c: 3}
  - {type: torsional_spring, coordinate: theta0, k: 5, c: 0.5, angle: 0.2}
  - {type: torsional_spring, coordinate: knee, k: 2}
  - {type: torque, body: coupler, value: 4}
  - {type: torque, body: 2, value: -1.5}
  - {type: point_force, point: 2, value: [1, -2]}
  - {type: point_force, point: 0, value: [3, 3]}       # on a fixed point: no generalized force
  - {type: coordinate_force, coordinate: theta0, value: 0.7}
"""


@pytest.fixture
def mech(write_yaml):
    return load_mechanism(write_yaml(FORCES))


def random_states(n: int, count: int = 5):
    """Arbitrary (q, q̇) near the file's configuration (springs keep a nonzero length)."""
    rng = np.random.default_rng(99)
    base = np.array([1, 0, 1, 1, 0, np.pi / 2])
    return [(base + 0.3 * rng.normal(size=n), rng.normal(size=n)) for _ in range(count)]


def point_kinematics(mech, q, qd):
    positions = point_positions(mech, q)
    return positions, point_positions(mech, q + qd) - positions  # positions are linear in q


def angular_rate(u: np.ndarray, ud: np.ndarray) -> float:
    return float((u[0] * ud[1] - u[1] * ud[0]) / (u @ u))


def length_rate(d: np.ndarray, dd: np.ndarray) -> float:
    return float(d @ dd / np.linalg.norm(d))


def test_model_has_state_forces(mech) -> None:
    assert has_state_forces(mech)
    assert len(mech.arrays.spring_idx) == 3 and len(mech.arrays.torsion_idx) == 2 and len(mech.arrays.torque_idx) == 2


def test_jacobians_by_central_differences(mech) -> None:
    # Q is smooth (springs away from zero length); h = 1e-6 gives truncation ~h² |Q'''| ~1e-10 and
    # rounding ~1e-16 |Q| / h ~1e-8 for |Q| ~ 100 N: tolerance 1e-6.
    h = 1e-6
    for q, qd in random_states(mech.n):
        dq, dqd = force_jacobians(mech, q, qd)
        for k in range(mech.n):
            step = np.zeros(mech.n)
            step[k] = h
            numeric_q = (generalized_forces(mech, q + step, qd) - generalized_forces(mech, q - step, qd)) / (2 * h)
            numeric_qd = (generalized_forces(mech, q, qd + step) - generalized_forces(mech, q, qd - step)) / (2 * h)
            np.testing.assert_allclose(dq[:, k], numeric_q, atol=1e-6)
            np.testing.assert_allclose(dqd[:, k], numeric_qd, atol=1e-6)


def test_position_forces_do_the_virtual_work_of_each_element(mech) -> None:
    """Q(q, 0)·v = −∇V·v + F·v₂ + 0.7 θ̇₀ + Σ τ ω for every direction v: V (gravity, springs,
    torsional springs) is differentiated numerically, the loads' and torques' power computed from
    point velocities; n directions determine Q(q, 0) completely. Tolerance: the central
    difference of V (h = 1e-6, |V| ~ 10 J) is good to ~1e-8."""
    h = 1e-6
    theta = mech.index("theta0")
    for q, _ in random_states(mech.n):
        force = generalized_forces(mech, q, np.zeros(mech.n))
        for v in np.eye(mech.n):
            r, rd = point_kinematics(mech, q, v)
            dv = (potential_energy(mech, q + h * v) - potential_energy(mech, q - h * v)) / (2 * h)
            power = (-dv + np.array([1.0, -2.0]) @ rd[2] + 0.7 * v[theta]
                     + 4.0 * angular_rate(r[2] - r[1], rd[2] - rd[1]) - 1.5 * angular_rate(r[2] - r[3], rd[2] - rd[3]))
            assert force @ v == pytest.approx(power, abs=1e-7)


def test_damping_dissipates_c_times_rate_squared(mech) -> None:
    """(Q(q, q̇) − Q(q, 0))·q̇ = −Σ c l̇² − c θ̇² (dampers along a line and on a coordinate)."""
    theta = mech.index("theta0")
    for q, qd in random_states(mech.n):
        r, rd = point_kinematics(mech, q, qd)
        dissipation = (2.0 * length_rate(r[3] - r[1], rd[3] - rd[1]) ** 2
                       + 3.0 * length_rate(r[2] - r[1], rd[2] - rd[1]) ** 2 + 0.5 * qd[theta] ** 2)
        damping = generalized_forces(mech, q, qd) - generalized_forces(mech, q, np.zeros(mech.n))
        assert damping @ qd == pytest.approx(-dissipation, rel=1e-12)


def test_torsional_spring_closed_form(mech) -> None:
    q, qd = random_states(mech.n)[0]
    theta, knee = mech.index("theta0"), mech.index("knee")
    force = generalized_forces(mech, q, qd)
    assert force[theta] == pytest.approx(-5 * (q[theta] - 0.2) - 0.5 * qd[theta] + 0.7, rel=1e-12)
    assert force[knee] == pytest.approx(-2 * q[knee], rel=1e-12)


def test_spring_energy_at_rest_length_is_zero(write_yaml) -> None:
    mech = load_mechanism(write_yaml("""
gravity: [0, 0]
points: [{x: 0, y: 0, fixed: true}, {x: 0.3, y: 0.4}]
forces: [{type: spring, points: [0, 1], k: 100}]
"""))
    assert potential_energy(mech, mech.q0) == 0.0
    np.testing.assert_allclose(generalized_forces(mech, mech.q0, np.zeros(2)), 0.0, atol=1e-12)
    q = np.array([0.6, 0.8])  # stretched by 0.5 m along (0.6, 0.8)
    assert potential_energy(mech, q) == pytest.approx(0.5 * 100 * 0.5**2)
    np.testing.assert_allclose(generalized_forces(mech, q, np.zeros(2)), -100 * 0.5 * np.array([0.6, 0.8]))
