"""Position, velocity and acceleration problems, the four-bar in closed form, the rank and degrees
of freedom of redundant mechanisms, and body-point and body-angle kinematics along a path (the reference
forms of tests/reference_forms.py, and sensors.geometry's maps against them)."""

import math

import numpy as np
import pytest
from conftest import MECHANISMS, angle_between, load_reference
from reference_forms import body_angle, body_point, body_point_rate, point_positions

from estimator.constraints import (acceleration_rhs, angle_coordinates, constraint_jacobian, constraint_values,
                                   turn_limited_fraction)
from estimator.kinematics import (MAX_TURN, AssemblyError, constraint_rank, degrees_of_freedom, independent_coordinates,
                                  solve_acceleration_problem, solve_position_problem, solve_velocity_problem)
from estimator.mechanism_file import load_mechanism
from sensors.geometry import axis_angle, axis_map, axis_rate, point_map

DRIVEN = [  # (file, held coordinates)
    (MECHANISMS / "fourbar_crank.yaml", ("theta0",)),
    (MECHANISMS / "slider_crank.yaml", ("crank",)),
    (MECHANISMS / "five_bar.yaml", ("left", "right")),
    (MECHANISMS / "pick_and_place.yaml", ("theta0", "theta1")),
    (MECHANISMS / "double_pendulum.yaml", ("shoulder", "elbow")),
]


@pytest.mark.parametrize(("path", "names"), DRIVEN)
def test_position_problem_from_a_perturbed_guess(path, names) -> None:
    mech = load_mechanism(path)
    held = [mech.index(name) for name in names]
    rng = np.random.default_rng(17)
    for _ in range(3):
        guess = mech.q0 + 0.05 * rng.normal(size=mech.n)
        q = solve_position_problem(mech, guess, held=held)
        assert np.abs(constraint_values(mech, q)).max() < 1e-12
        np.testing.assert_array_equal(q[held], guess[held])


@pytest.mark.parametrize(("path", "names"), DRIVEN)
def test_velocity_and_acceleration_problems(path, names) -> None:
    mech = load_mechanism(path)
    held = [mech.index(name) for name in names]
    rng = np.random.default_rng(23)
    q = solve_position_problem(mech, mech.q0)
    qd_held, qdd_held = rng.normal(size=(2, len(held)))
    qd = solve_velocity_problem(mech, q, qd_held, held)
    qdd = solve_acceleration_problem(mech, q, qd, qdd_held, held)
    jac = constraint_jacobian(mech, q)
    scale = 1.0 + np.abs(qd).max() ** 2
    np.testing.assert_allclose(jac @ qd, 0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(jac @ qdd, acceleration_rhs(mech, q, qd), atol=1e-11 * scale)
    np.testing.assert_array_equal(qd[held], qd_held)
    np.testing.assert_array_equal(qdd[held], qdd_held)


def fourbar_closed_form(theta: float) -> np.ndarray:
    """[x1, y1, x2, y2] of the paper's four-bar at crank angle θ: point 1 on the unit circle, point 2
    where the circle of radius 2 about point 1 meets the circle of radius √13 about B = (4, 0),
    on the branch of the file's configuration (left of the direction 1 → B)."""
    p1, b = np.array([math.cos(theta), math.sin(theta)]), np.array([4.0, 0.0])
    d = np.linalg.norm(b - p1)
    e = (b - p1) / d
    a = (4.0 - 13.0 + d * d) / (2 * d)
    p2 = p1 + a * e + math.sqrt(4.0 - a * a) * np.array([-e[1], e[0]])
    return np.concatenate((p1, p2))


def test_fourbar_against_closed_form() -> None:
    """A full crank turn by continuation (each solve starts at the previous solution), velocities and
    accelerations against differences of the closed form. Tolerances: the closed form is exact to
    rounding (1e-12); central differences with h = 1e-5 are good to ~1e-9 (first derivative) and,
    limited by rounding (~4e-16 / h²), to ~1e-5 (second derivative)."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    theta = mech.index("theta0")
    q = mech.q0.copy()
    h = 1e-5
    for angle in np.linspace(0.0, 2 * math.pi, 73):
        q[theta] = angle
        q = solve_position_problem(mech, q, held=[theta])
        np.testing.assert_allclose(q[:4], fourbar_closed_form(angle), atol=1e-12)
        rate = 1.7  # crank speed [rad/s]; zero crank acceleration
        qd = solve_velocity_problem(mech, q, [rate], [theta])
        qdd = solve_acceleration_problem(mech, q, qd, [0.0], [theta])
        forward, backward = fourbar_closed_form(angle + h * rate), fourbar_closed_form(angle - h * rate)
        np.testing.assert_allclose(qd[:4], (forward - backward) / (2 * h), atol=1e-8)
        np.testing.assert_allclose(qdd[:4], (forward - 2 * q[:4] + backward) / h**2, atol=1e-4)


@pytest.mark.parametrize("angle", [2.0, 2.5, -2.5, 4.0, 2 * math.pi + 2.0])
def test_held_angle_far_from_the_guess_keeps_the_files_branch(angle: float) -> None:
    """One solve from the file's configuration with the crank held far away: the crank points at
    the held angle (not half a turn off, the other root of its angle equation) and the rocker stays
    on the file's assembly branch."""
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    q = mech.q0.copy()
    q[mech.index("theta0")] = angle
    q = solve_position_problem(mech, q, held=[mech.index("theta0")])
    np.testing.assert_allclose(q[:4], fourbar_closed_form(angle), atol=1e-12)
    assert q[mech.index("theta0")] == angle


def test_free_relative_angles_follow_their_geometry() -> None:
    """Double pendulum, shoulder held half a turn from the file: both angle coordinates equal the
    angles of the rods (elbow: lower rod against upper rod), and a free angle stays on its turn:
    one started a full turn up ends near 2π, not wrapped back."""
    mech = load_mechanism(MECHANISMS / "double_pendulum.yaml")
    shoulder, elbow = mech.index("shoulder"), mech.index("elbow")
    guess = mech.q0.copy()
    guess[shoulder] = 2.5
    q = solve_position_problem(mech, guess, held=[shoulder])
    upper, lower = q[0:2], q[2:4] - q[0:2]
    np.testing.assert_allclose(upper, [math.cos(2.5), math.sin(2.5)], atol=1e-12)
    assert q[elbow] == pytest.approx(angle_between(upper, lower), abs=1e-12)
    guess = mech.q0 + 0.05 * np.random.default_rng(5).normal(size=mech.n)
    guess[elbow] += 2 * math.pi
    q = solve_position_problem(mech, guess)
    upper, lower = q[0:2], q[2:4] - q[0:2]
    assert q[elbow] - 2 * math.pi == pytest.approx(angle_between(upper, lower), abs=1e-12)
    assert abs(q[elbow] - 2 * math.pi) < 0.5


@pytest.mark.parametrize("name", ["fourbar_crank.yaml", "double_pendulum.yaml", "five_bar.yaml", "pick_and_place.yaml",
                                  "slider_crank.yaml"])
def test_angle_coordinates_are_the_files_angles(name: str) -> None:
    """The geometric angle of every relative-angle coordinate at the file's points equals the value
    the loader gives it (computed there from the points by atan2)."""
    mech = load_mechanism(MECHANISMS / name)
    a = mech.arrays
    coordinates, alpha = angle_coordinates(mech.q0, a.constants, a.c_kind, a.c_idx)
    assert len(coordinates) > 0
    np.testing.assert_allclose(alpha, mech.q0[coordinates], atol=1e-14)


def test_turn_limited_fraction_bounds_every_segment() -> None:
    """Random steps of the double pendulum's points: after the fraction f of the step no rod has
    turned by more than MAX_TURN nor changed its length by more than sin(MAX_TURN); a shortened step
    reaches the bound on some rod."""
    mech = load_mechanism(MECHANISMS / "double_pendulum.yaml")
    a = mech.arrays
    rng = np.random.default_rng(8)
    q = solve_position_problem(mech, mech.q0)
    for scale in (0.01, 0.5, 3.0, 30.0):
        for _ in range(20):
            step = scale * rng.normal(size=mech.n)
            f = turn_limited_fraction(q, step, a.constants, a.c_kind, a.c_idx, MAX_TURN)
            moved = [np.linalg.norm(f * step[0:2]) / np.linalg.norm(q[0:2]),
                     np.linalg.norm(f * (step[2:4] - step[0:2])) / np.linalg.norm(q[2:4] - q[0:2])]
            assert 0.0 < f <= 1.0 and max(moved) <= math.sin(MAX_TURN) * (1 + 1e-12)
            if f < 1.0:
                assert max(moved) == pytest.approx(math.sin(MAX_TURN), rel=1e-12)
            for u, du in ((q[0:2], f * step[0:2]), (q[2:4] - q[0:2], f * (step[2:4] - step[0:2]))):
                assert abs(angle_between(u, u + du)) <= MAX_TURN * (1 + 1e-12)


def test_upstream_crank_trajectory_start_is_assembled() -> None:
    mech = load_reference("fourbars1-with-rel-angle.yaml")
    q = solve_position_problem(mech, mech.q0, held=[mech.index("theta0")])
    np.testing.assert_allclose(q[:4], fourbar_closed_form(0.0), atol=1e-12)


def test_redundant_robot_rank_and_independent_coordinates() -> None:
    mech = load_mechanism(MECHANISMS / "pick_and_place.yaml")
    q = solve_position_problem(mech, mech.q0)
    assert (mech.m, constraint_rank(mech, q), degrees_of_freedom(mech, q)) == (21, 20, 2)
    independent = independent_coordinates(mech, q)
    assert len(independent) == 2
    dependent = [k for k in range(mech.n) if k not in independent]
    # a valid choice: the dependent columns of Φq keep its full rank
    assert np.linalg.matrix_rank(constraint_jacobian(mech, q)[:, dependent], tol=1e-9) == 20


def test_loop_that_cannot_close_raises_assembly_error(write_yaml) -> None:
    mech = load_mechanism(write_yaml("""
points:
  - {x: 0, y: 0, fixed: true}
  - {x: 1, y: 0}
  - {x: 1, y: 1}
  - {x: 10, y: 0, fixed: true}
planar_bodies:
  - {points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}
  - {points: [1, 2], mass: 1, I0: 1, cog: [0, 0]}
  - {points: [2, 3], length: 1, mass: 1, I0: 1, cog: [0, 0]}   # 10 m gap, 3 m of links
"""))
    with pytest.raises(AssemblyError, match="cannot be assembled"):
        solve_position_problem(mech, mech.q0)


def smooth_path(mech, seed: int):
    """q(t) = q0 + a sin t + b t², with its first and second derivatives (any q: the point and
    angle formulas hold without the constraints)."""
    a, b = 0.3 * np.random.default_rng(seed).normal(size=(2, mech.n))
    return (lambda t: mech.q0 + a * np.sin(t) + b * t * t, lambda t: a * np.cos(t) + 2 * b * t,
            lambda t: -a * np.sin(t) + 2 * b)


@pytest.mark.parametrize("path", [MECHANISMS / "slider_crank.yaml", MECHANISMS / "pick_and_place.yaml"])
def test_body_point_and_angle_rates_along_a_path(path) -> None:
    # body_point is linear in q, so its central difference is exact to rounding (1e-9 with h = 1e-6);
    # φ and ω are smooth: truncation ~h² ~1e-12, rounding ~1e-16/h ~1e-10: tolerance 1e-8.
    mech = load_mechanism(path)
    q, qd, qdd = smooth_path(mech, 31)
    h = 1e-6
    local = np.array([0.13, -0.07])
    for body in mech.bodies:
        for t in (0.2, 0.9):
            velocity = (body_point(mech, body, local, q(t + h)) - body_point(mech, body, local, q(t - h))) / (2 * h)
            np.testing.assert_allclose(body_point_rate(mech, body, local, qd(t)), velocity, atol=1e-8)
            acceleration = (body_point_rate(mech, body, local, qd(t + h))
                            - body_point_rate(mech, body, local, qd(t - h))) / (2 * h)
            np.testing.assert_allclose(body_point_rate(mech, body, local, qdd(t)), acceleration, atol=1e-8)
            phi, omega, alpha = body_angle(mech, body, q(t), qd(t), qdd(t))
            ahead, behind = body_angle(mech, body, q(t + h), qd(t + h)), body_angle(mech, body, q(t - h), qd(t - h))
            assert omega == pytest.approx(math.remainder(ahead[0] - behind[0], 2 * math.pi) / (2 * h), abs=1e-8)
            assert alpha == pytest.approx((ahead[1] - behind[1]) / (2 * h), abs=1e-7)


def test_body_point_in_the_body_frame() -> None:
    """(0, 0) is the first point, (L, 0) the second, (0, L) the second turned 90° about the first."""
    mech = load_mechanism(MECHANISMS / "five_bar.yaml")
    q = solve_position_problem(mech, mech.q0)
    r = point_positions(mech, q)
    for body in mech.bodies:
        r0, r1 = r[list(body.points[:2])]
        u = r1 - r0
        np.testing.assert_allclose(body_point(mech, body, np.zeros(2), q), r0, atol=1e-15)
        np.testing.assert_allclose(body_point(mech, body, np.array([body.length, 0.0]), q), r1, atol=1e-15)
        np.testing.assert_allclose(body_point(mech, body, np.array([0.0, body.length]), q), r0 + [-u[1], u[0]],
                                   atol=1e-15)
        assert body_angle(mech, body, q)[0] == pytest.approx(math.atan2(u[1], u[0]))


@pytest.mark.parametrize("path", [MECHANISMS / "slider_crank.yaml", MECHANISMS / "pick_and_place.yaml"])
def test_sensor_maps_agree_with_the_reference_point_and_angle(path) -> None:
    """sensors.geometry's constant maps (a point, the body axis with φ and ω compiled) against the
    reference forms above: the same linear map and angle, differently assembled (round-off only)."""
    mech = load_mechanism(path)
    q, qd, _ = smooth_path(mech, 32)
    local = (0.13, -0.07)
    for body in mech.bodies:
        point, axis = point_map(mech, body, local), axis_map(mech, body)
        for t in (0.2, 0.9):
            np.testing.assert_allclose(point(q(t)), body_point(mech, body, np.array(local), q(t)), atol=1e-12)
            np.testing.assert_allclose(point.rate(qd(t)), body_point_rate(mech, body, np.array(local), qd(t)),
                                       atol=1e-12)
            phi, omega, _ = body_angle(mech, body, q(t), qd(t))
            assert axis_angle(axis.matrix, axis.offset, q(t))[0] == pytest.approx(phi, abs=1e-12)
            assert axis_rate(axis.matrix, axis.offset, q(t), qd(t))[0] == pytest.approx(omega, abs=1e-12)
