"""The YAML loader: upstream MBSE files load unchanged, our configs assemble with the expected
degrees of freedom, and every key of the format does what configs/mechanisms/README.md says."""

import math

import numpy as np
import pytest
from conftest import MECHANISMS, load_reference

from estimator.constraints import constraint_values
from estimator.errors import MechanismFileError
from estimator.kinematics import constraint_rank, degrees_of_freedom, solve_position_problem
from estimator.mechanism_file import DEFAULT_GRAVITY, load_mechanism


@pytest.mark.parametrize(("name", "n", "m", "rank"), [
    ("fourbars1.yaml", 4, 3, 3),
    ("fourbars1-with-rel-angle.yaml", 5, 4, 4),
    ("pendulum1.yaml", 2, 1, 1),
    ("pendulum2.yaml", 10, 6, 6),
    ("pendulum3.yaml", 12, 8, 8),
    ("pick-and-place-robot.yaml", 22, 21, 20),
])
def test_upstream_files_load_unchanged(name: str, n: int, m: int, rank: int) -> None:
    mech = load_reference(name)
    assert (mech.n, mech.m) == (n, m)
    # The upstream files give assembled positions: Φ(q0) = 0 up to rounding.
    assert np.abs(constraint_values(mech, mech.q0)).max() < 1e-12
    assert constraint_rank(mech, mech.q0) == rank


def test_upstream_fourbar_coordinates_and_mass_properties() -> None:
    mech = load_reference("fourbars1-with-rel-angle.yaml")
    assert mech.coordinate_names == ("x1", "y1", "x2", "y2", "theta0")
    np.testing.assert_allclose(mech.q0, [1, 0, 1, 2, 0], atol=1e-15)
    rocker = mech.bodies[2]
    assert rocker.length == pytest.approx(math.sqrt(13))  # length: auto
    assert rocker.inertia == pytest.approx(4 * 13 / 3)  # (1/3)*mass*length^2
    assert rocker.cog == pytest.approx((math.sqrt(13) / 2, 0.0))
    np.testing.assert_array_equal(mech.gravity, DEFAULT_GRAVITY)


def test_upstream_expressions_use_earlier_points_and_body_lengths() -> None:
    mech = load_reference("pendulum2.yaml")
    c = 5 * math.cos(math.pi / 4)
    np.testing.assert_allclose(mech.q0[:6], [7, 0, 7 + c, c, 7 + c, -c])  # x1+5*cos(45*pi/180), ...
    ternary = mech.bodies[1]
    assert ternary.length == pytest.approx(5.0)  # length is ignored for 3 or more points
    assert ternary.inertia == pytest.approx(0.5 * 3 * 25)  # (1/2)*mass*length12^2
    quaternary = load_reference("pendulum3.yaml").bodies[0]
    assert quaternary.cog == pytest.approx((1.0, 0.5))  # [0.5*length12, 0.5*length14]


@pytest.mark.parametrize(("name", "dof", "actuated"), [
    ("pendulum.yaml", 1, ()),
    ("double_pendulum.yaml", 2, ()),
    ("fourbar.yaml", 1, ()),
    ("fourbar_crank.yaml", 1, ("theta0",)),
    ("slider_crank.yaml", 1, ("crank",)),
    ("five_bar.yaml", 2, ("left", "right")),
    ("pick_and_place.yaml", 2, ("theta0", "theta1")),
    ("fourbar_benchmark.yaml", 1, ()),
    ("five_bar_benchmark.yaml", 2, ()),
])
def test_configs_assemble_with_expected_dof(name: str, dof: int, actuated: tuple[str, ...]) -> None:
    mech = load_mechanism(MECHANISMS / name)
    q = solve_position_problem(mech, mech.q0)
    assert np.abs(constraint_values(mech, q)).max() < 1e-12
    assert degrees_of_freedom(mech, q) == dof
    assert tuple(mech.coordinate_names[a.coordinate] for a in mech.actuators) == actuated


@pytest.mark.parametrize(("name", "points"), [
    ("pendulum.yaml", ["x1", "y1"]),
    ("five_bar.yaml", ["x_B", "y_B", "x_C", "y_C", "x_D", "y_D"]),
    ("pick_and_place.yaml", [f"{axis}{i}" for i in range(2, 12) for axis in "xy"]),
])
def test_point_coordinates_are_the_moving_points(name: str, points: list[str]) -> None:
    mech = load_mechanism(MECHANISMS / name)
    assert [mech.coordinate_names[i] for i in mech.point_coordinates] == points


def test_every_config_is_listed_above() -> None:
    assert {p.name for p in MECHANISMS.glob("*.yaml")} == {
        "pendulum.yaml", "double_pendulum.yaml", "fourbar.yaml", "fourbar_crank.yaml", "slider_crank.yaml",
        "five_bar.yaml", "pick_and_place.yaml", "fourbar_benchmark.yaml", "five_bar_benchmark.yaml"}


def test_crank_fourbar_config_matches_upstream_model() -> None:
    ours, upstream = load_mechanism(MECHANISMS / "fourbar_crank.yaml"), load_reference("fourbars1-with-rel-angle.yaml")
    assert ours.coordinate_names == upstream.coordinate_names
    np.testing.assert_allclose(ours.q0, upstream.q0, atol=1e-15)
    np.testing.assert_allclose(ours.arrays.mass, upstream.arrays.mass, rtol=1e-14)
    np.testing.assert_allclose(ours.arrays.q_force, upstream.arrays.q_force, rtol=1e-14)
    rng = np.random.default_rng(1)
    for q in rng.normal(size=(3, ours.n)):
        np.testing.assert_allclose(constraint_values(ours, q), constraint_values(upstream, q), rtol=1e-14)


def test_robot_config_matches_upstream_model() -> None:
    ours, upstream = load_mechanism(MECHANISMS / "pick_and_place.yaml"), load_reference("pick-and-place-robot.yaml")
    assert ours.coordinate_names == upstream.coordinate_names
    np.testing.assert_allclose(ours.arrays.mass, upstream.arrays.mass, rtol=1e-14, atol=1e-14)
    q = np.random.default_rng(2).normal(size=ours.n)
    np.testing.assert_allclose(constraint_values(ours, q), constraint_values(upstream, q), rtol=1e-14, atol=1e-14)


def test_names_parameters_and_defaults(write_yaml) -> None:
    mech = load_mechanism(write_yaml("""
name: demo
description: two rods
parameters: {a: 2.0, b: a/2}          # each parameter may use the ones before it
gravity: [0, -b*9.81]
points:
  - {x: 0, y: 0, fixed: true, name: O}
  - {x: a, y: 0, name: P}
  - {x: x1, y: y1 + b}
planar_bodies:
  - {points: [0, 1], mass: 1, I0: mass*length^2/3, cog: [length/2, 0]}
  - {points: [1, 2], mass: 1, I0: 1, cog: [0, 0], name: second}
relative_coordinates:
  - {type: RelativeAngleAbsoluteDOF, points: [1, 2]}
  - {type: RelativeAngle, bodies: [0, second], name: knee}
"""))
    assert mech.coordinate_names == ("x_P", "y_P", "x2", "y2", "theta0", "knee")
    assert mech.point_names == ("O", "P", "2")
    assert [b.name for b in mech.bodies] == ["body0", "second"]
    np.testing.assert_allclose(mech.q0, [2, 0, 2, 1, math.pi / 2, math.pi / 2])
    np.testing.assert_allclose(mech.gravity, [0, -9.81])
    assert mech.bodies[0].inertia == pytest.approx(4 / 3)
    assert mech.bodies[0].length == 2.0  # "length" absent means auto
    np.testing.assert_allclose(constraint_values(mech, mech.q0), 0, atol=1e-15)


def test_constraint_and_force_defaults_come_from_the_file_positions(write_yaml) -> None:
    mech = load_mechanism(write_yaml("""
points:
  - {x: 0, y: 0, fixed: true}
  - {x: 1, y: 0}
  - {x: 1, y: 1}
planar_bodies:
  - {points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}
  - {points: [1, 2], mass: 1, I0: 1, cog: [0, 0]}
constraints:
  - {type: relative_angle, bodies: [0, 1]}        # default: the angle in the file, 90°
  - {type: fixed_coordinate, coordinate: x2}     # default: the value in the file, 1
forces:
  - {type: spring, points: [0, 2], k: 10}        # default rest length: the file's distance √2
  - {type: torsional_spring, coordinate: x1, k: 3}
"""))
    q = mech.q0.copy()
    np.testing.assert_allclose(constraint_values(mech, q), 0, atol=1e-15)
    assert mech.arrays.spring_par[0] == pytest.approx([10, 0, math.sqrt(2)])
    assert mech.arrays.torsion_par[0] == pytest.approx([3, 0, 0])
    q[2] = 1.5
    assert constraint_values(mech, q)[-1] == pytest.approx(0.5)  # the fixed-coordinate row: x2 − 1


@pytest.mark.parametrize(("text", "entry", "problem"), [
    ("points: [{x: 0, y: 0}]\nplanar_bodies: [{points: [0, 0], mass: 1, I0: 1, cog: [0, 0]}]",
     "planar_bodies[0].points", "a point appears twice"),
    ("points: [{x: 0, y: 0}, {x: 0, y: 0}]\nplanar_bodies: [{points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}]",
     "planar_bodies[0].points", "the first two points coincide"),
    ("points: [{x: 0, y: 0}, {x: 1, y: 0}]\nplanar_bodies: [{points: [0, 1], mass: -1, I0: 1, cog: [0, 0]}]",
     "planar_bodies[0].mass", "must not be negative"),
    ("points: [{x: 0, y: 0}, {x: 1, y: 0}]\nplanar_bodies: [{points: [0, 1], mass: 1, I0: 1, cog: [0]}]",
     "planar_bodies[0].cog", "expected 2 values"),
    ("points: [{x: 0, y: 0, fixed: yes please}]", "points[0].fixed", "expected true or false"),
    ("points: [{x: 0}]", "points[0]", "missing key 'y'"),
    ("gravity: 9.81\npoints: [{x: 0, y: 0}]", "gravity", "expected a list"),
    ("points: [{x: 0, y: 0, name: 'a b'}]", "points[0].name", "without spaces"),
])
def test_invalid_entries_are_named(write_yaml, text: str, entry: str, problem: str) -> None:
    path = write_yaml(text)
    with pytest.raises(MechanismFileError, match=problem) as info:
        load_mechanism(path)
    assert (info.value.path, info.value.entry) == (str(path), entry)


BAR = "points: [{x: 0, y: 0, fixed: true}, {x: 1, y: 0}]\nplanar_bodies: [{points: [0, 1], %s}]"
BODY = {"mass": "1", "I0": "1", "cog": "[0, 0]"}


def bar(**keys: str) -> str:
    """A one-body pendulum file with some body keys replaced (or added)."""
    return BAR % ", ".join(f"{key}: {value}" for key, value in {**BODY, **keys}.items())


@pytest.mark.parametrize(("text", "entry", "message"), [
    (bar(mass="1e20"), "planar_bodies[0].mass", "must be at most 1e+09, got 1e+20"),
    (bar(mass="1" + "0" * 400), "planar_bodies[0].mass",
     "value 100000000000000000...0000000000000000000 is too large for a float"),
    (bar(mass=".nan"), "planar_bodies[0].mass", "value nan is not finite (nan)"),
    (bar(mass="'1e300 * 1e300'"), "planar_bodies[0].mass", "1e+300 * 1e+300: non-finite result inf in '1e300 * 1e300'"),
    (bar(length="-2"), "planar_bodies[0].length", "must be positive, got -2.0"),
    (bar(length="0"), "planar_bodies[0].length", "must be positive, got 0.0"),
    (bar(I0="-0.5"), "planar_bodies[0].I0", "must not be negative, got -0.5"),
    (bar(cog="[0, -2e9]"), "planar_bodies[0].cog[1]", "must be at least -1e+09, got -2000000000.0"),
    ("points: [{x: 0, y: .inf}]", "points[0].y", "value inf is not finite (inf)"),
    ("gravity: [0, -1e12]\npoints: [{x: 0, y: 0}]", "gravity[1]", "must be at least -1e+09, got -1000000000000.0"),
    ("parameters: {big: 1e10}\npoints: [{x: 0, y: 0}]", "parameters.big", "must be at most 1e+09, got 10000000000.0"),
    (bar() + "\nforces: [{type: spring, points: [0, 1], k: -3}]", "forces[0].k", "must not be negative, got -3.0"),
    (bar() + "\nforces: [{type: damper, points: [0, 1], c: -1e-3}]", "forces[0].c", "must not be negative, got -0.001"),
    (bar() + "\nforces: [{type: spring, points: [0, 1], k: 1, length: -1}]", "forces[0].length",
     "must not be negative, got -1.0"),
    (bar() + "\nforces: [{type: point_force, point: 1, value: [3e9, 0]}]", "forces[0].value[0]",
     "must be at most 1e+09, got 3000000000.0"),
    (bar() + "\nrelative_coordinates: [{type: RelativeAngleAbsoluteDOF, points: [0, 1]}]\n"
     "forces: [{type: torsional_spring, coordinate: theta0, k: 1, angle: 1e10}]", "forces[0].angle",
     "must be at most 1e+09, got 10000000000.0"),
])
def test_every_number_has_a_range(write_yaml, text: str, entry: str, message: str) -> None:
    path = write_yaml(text)
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(path)
    assert str(info.value) == f"{path}: {entry}: {message}"


def test_the_bounds_themselves_load(write_yaml) -> None:
    mech = load_mechanism(write_yaml(bar(mass="1e9", I0="0", cog="[-1e9, 1e9]")
                                     + "\nforces: [{type: spring, points: [0, 1], k: 0, c: 0, length: 0}]"))
    assert mech.bodies[0].mass == 1e9 and mech.bodies[0].inertia == 0.0
    assert mech.arrays.spring_par[0] == pytest.approx([0, 0, 0])
