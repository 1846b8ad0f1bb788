"""Constraint equations: central-difference checks of Φq, Φqq, Φ̇q and γ for every constraint
kind, and the geometric meaning of each kind after assembly."""

import math

import numpy as np
import pytest
from conftest import angle_between, central_difference, cross
from reference_forms import jacobian_rate, point_positions

from estimator.constraints import acceleration_rhs, constraint_derivatives, constraint_jacobian, constraint_values
from estimator.kinematics import constraint_rank, solve_position_problem
from estimator.mechanism_file import load_mechanism

# Every constraint kind at once:
#   distance (each body), linear body-frame rows (the ternary body), absolute angle (theta0),
#   angle between bodies (phi), slider on a moving line (point 4 on line 2-3), point on a fixed
#   line (point 5), fixed relative angle between two bodies, fixed coordinate.
ALL_KINDS = """
parameters: {tilt: deg2rad(30)}
points:
  - {x: 0, y: 0, fixed: true}                         # 0
  - {x: 1, y: 0}                                      # 1
  - {x: 1, y: 1}                                      # 2
  - {x: 2, y: 0.5}                                    # 3
  - {x: 3, y: 0}                                      # 4: on line 2-3
  - {x: 4*cos(tilt), y: -2 + 4*sin(tilt)}             # 5: on the line through (0, -2) at 30°
  - {x: 1.5, y: 2.5}                                  # 6
planar_bodies:
  - {name: crank, points: [0, 1], mass: 1, I0: 1, cog: [0.5, 0]}
  - {name: plate, points: [1, 2, 3], mass: 1, I0: 1, cog: [0, 0]}
  - {name: rod, points: [4, 5], mass: 1, I0: 1, cog: [0, 0]}
  - {name: arm, points: [2, 6], mass: 1, I0: 1, cog: [0, 0]}
relative_coordinates:
  - {type: RelativeAngleAbsoluteDOF, points: [0, 1]}
  - {type: RelativeAngle, bodies: [plate, rod], name: phi}
constraints:
  - {type: slider, point: 4, line: [2, 3], name: slide}
  - {type: point_on_line, point: 5, through: [0, -2], angle: tilt, name: rail}
  - {type: relative_angle, bodies: [plate, arm], angle: deg2rad(45), name: weld}
  - {type: fixed_coordinate, coordinate: y6, value: 2.5}
"""


@pytest.fixture
def mech(write_yaml):
    return load_mechanism(write_yaml(ALL_KINDS))


def random_states(n: int, count: int = 4):
    """Arbitrary (q, q̇, q̈): the derivative identities hold everywhere, not only on Φ = 0."""
    rng = np.random.default_rng(2024)
    return [tuple(rng.normal(size=(3, n))) for _ in range(count)]


def test_model_uses_every_row_kind(mech) -> None:
    assert mech.n == 14 and mech.m == 12
    assert set(mech.arrays.c_kind) == {0, 1, 2}  # LINEAR, DISTANCE, ANGLE


def test_jacobian_by_central_differences(mech) -> None:
    # Φ is a cubic polynomial in positions times sin/cos of angles; with h = 1e-6 the truncation
    # error (~h² |Φ'''|) is ~1e-11 and the rounding error (~1e-16 |Φ| / h) ~1e-9: tolerance 1e-7.
    for q, _, _ in random_states(mech.n):
        numeric = central_difference(lambda x: constraint_values(mech, x), q, 1e-6)
        np.testing.assert_allclose(constraint_jacobian(mech, q), numeric, atol=1e-7)


def test_hessians_by_central_differences(mech) -> None:
    # Differences of the analytic Φq: same error budget as above.
    for q, _, _ in random_states(mech.n):
        numeric = central_difference(lambda x: constraint_jacobian(mech, x), q, 1e-6)
        np.testing.assert_allclose(constraint_derivatives(mech, q, True)[2], numeric, atol=1e-7)


def test_jacobian_rate_by_central_differences(mech) -> None:
    # d(Φq)/dt along q + t q̇; same error budget.
    h = 1e-6
    for q, qd, _ in random_states(mech.n):
        numeric = (constraint_jacobian(mech, q + h * qd) - constraint_jacobian(mech, q - h * qd)) / (2 * h)
        np.testing.assert_allclose(jacobian_rate(mech, q, qd), numeric, atol=1e-7)


def test_acceleration_rhs_is_second_derivative_along_a_path(mech) -> None:
    """On q(t) = q + t q̇ + ½ t² q̈: d²Φ/dt² = Φq q̈ + q̇ᵀ Φqq q̇ = Φq q̈ − γ.
    Second central difference with h = 1e-3: truncation h²/12 |Φ''''|, up to ~1e-5 for the
    unit-normal rates used here, rounding ~4e-16 |Φ| / h² ~1e-8: relative tolerance 1e-5
    (a wrong term in γ is of order one)."""
    h = 1e-3
    for q, qd, qdd in random_states(mech.n):
        def phi(t: float) -> np.ndarray:
            return constraint_values(mech, q + t * qd + 0.5 * t * t * qdd)
        second = (phi(h) - 2 * phi(0.0) + phi(-h)) / h**2
        np.testing.assert_allclose(constraint_jacobian(mech, q) @ qdd - acceleration_rhs(mech, q, qd), second,
                                   rtol=1e-5, atol=1e-5)


def test_acceleration_rhs_agrees_with_the_hessian_contraction(mech) -> None:
    # Two formulations of γ = −Φ̇q q̇ (per-row local Hessians vs the assembled m x n x n tensor).
    for q, qd, _ in random_states(mech.n):
        np.testing.assert_allclose(acceleration_rhs(mech, q, qd), -jacobian_rate(mech, q, qd) @ qd,
                                   rtol=1e-12, atol=1e-12)


def test_each_kind_means_what_it_says_after_assembly(mech) -> None:
    rng = np.random.default_rng(5)
    theta, phi = mech.index("theta0"), mech.index("phi")
    guess = mech.q0 + 0.02 * rng.normal(size=mech.n)
    guess[[theta, phi]] = 0.3, mech.q0[phi] + 0.05
    q = solve_position_problem(mech, guess, held=[theta, phi])
    assert np.abs(constraint_values(mech, q)).max() < 1e-12
    assert q[theta] == 0.3 and constraint_rank(mech, q) == 12  # 14 coordinates, 2 degrees of freedom
    r = point_positions(mech, q)
    r0 = point_positions(mech, mech.q0)
    # distances and the rigid ternary body
    assert np.linalg.norm(r[1] - r[0]) == pytest.approx(1.0)
    for i, j in [(1, 2), (1, 3), (2, 3)]:
        assert np.linalg.norm(r[j] - r[i]) == pytest.approx(np.linalg.norm(r0[j] - r0[i]))
    assert cross(r[2] - r[1], r[3] - r[1]) == pytest.approx(cross(r0[2] - r0[1], r0[3] - r0[1]))  # not mirrored
    # absolute angle: counter-clockwise from +x
    assert angle_between(np.array([1.0, 0.0]), r[1] - r[0]) == pytest.approx(0.3)
    # relative angle: from the plate's x axis (1→2) to the rod's (4→5)
    assert angle_between(r[2] - r[1], r[5] - r[4]) == pytest.approx(q[phi])
    # slider on the moving line 2-3
    assert cross(r[3] - r[2], r[4] - r[2]) == pytest.approx(0.0, abs=1e-12)
    # point on the fixed line through (0, -2) at 30°
    assert cross(np.array([math.cos(math.pi / 6), math.sin(math.pi / 6)]), r[5] - [0, -2]) == pytest.approx(
        0.0, abs=1e-12)
    # fixed relative angle of 45° between plate and arm, fixed coordinate y6
    assert angle_between(r[2] - r[1], r[6] - r[2]) == pytest.approx(math.pi / 4)
    assert q[mech.index("y6")] == pytest.approx(2.5)
