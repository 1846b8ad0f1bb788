"""The constant mass matrix and gravity forces of natural coordinates, against independent
references: closed-form rod blocks, numerical integration over a plate, and the rigid-body
kinetic energy ½ m v_cog² + ½ I_cog ω² computed from point velocities."""

import numpy as np
import pytest
from conftest import MECHANISMS, load_reference
from reference_forms import point_positions

from estimator.constraints import constraint_jacobian
from estimator.forces import kinetic_energy, potential_energy
from estimator.kinematics import solve_position_problem
from estimator.mass import body_gravity_force, body_mass_matrix, body_mass_terms
from estimator.mechanism_file import load_mechanism
from estimator.model import Body, Mechanism


def rotation(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def rigid_body_energy(mech: Mechanism, q: np.ndarray, qd: np.ndarray) -> float:
    """Σ ½ m |v_cog|² + ½ I_cog ω² from the positions and velocities of each body's first two points.

    ω = (u × u̇)/|u|² with u = r1 − r0; the cog is r0 + R(φ) c, so v_cog = v0 + ω J R(φ) c;
    I_cog = I0 − m |c|² (parallel axes). Point velocities are taken as the exact derivative of the
    (linear) point positions along q̇.
    """
    positions = point_positions(mech, q)
    velocities = point_positions(mech, q + qd) - positions  # point positions are linear in q
    energy = 0.0
    for body in mech.bodies:
        r0, r1 = positions[list(body.points[:2])]
        v0, v1 = velocities[list(body.points[:2])]
        u, ud = r1 - r0, v1 - v0
        omega = (u[0] * ud[1] - u[1] * ud[0]) / (u @ u)
        arm = rotation(np.arctan2(u[1], u[0])) @ np.array(body.cog)
        v_cog = v0 + omega * np.array([-arm[1], arm[0]])
        i_cog = body.inertia - body.mass * (arm @ arm)
        energy += 0.5 * body.mass * (v_cog @ v_cog) + 0.5 * i_cog * omega**2
    return energy


def gravity_energy(mech: Mechanism, q: np.ndarray) -> float:
    """V = −Σ m g · r_cog, with r_cog = r0 + R(φ) c from each body's first two points."""
    positions = point_positions(mech, q)
    energy = 0.0
    for body in mech.bodies:
        r0, r1 = positions[list(body.points[:2])]
        u = r1 - r0
        r_cog = r0 + rotation(np.arctan2(u[1], u[0])) @ np.array(body.cog)
        energy -= body.mass * (mech.gravity @ r_cog)
    return energy


def feasible_states(mech: Mechanism, rng: np.random.Generator, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Assembled configurations near the file's, each with a random velocity in the null space of Φq.
    Assembled to |Φ| ≤ 1e-14 (not the default 1e-12, which leaves lengths off by up to ~1e-12 / 2L
    and the energies by more than the 1e-12 compared)."""
    states = []
    for _ in range(count):
        q = solve_position_problem(mech, mech.q0 + 0.05 * rng.normal(size=mech.n), tol=1e-14)
        _, s, vt = np.linalg.svd(constraint_jacobian(mech, q))
        rank = int(np.sum(s > 1e-9 * s[0]))
        null = vt[rank:].T
        states.append((q, null @ rng.normal(size=null.shape[1])))
    return states


def load(source) -> Mechanism:
    """An upstream reference file given by name (str), or one of our configs given by path."""
    return load_reference(source) if isinstance(source, str) else load_mechanism(source)


def test_uniform_rod_element() -> None:
    m, length = 3.0, 2.0
    rod = Body(name="rod", points=(0, 1), mass=m, inertia=m * length**2 / 3, cog=(length / 2, 0.0), length=length)
    eye = np.eye(2)
    expected = np.block([[m / 3 * eye, m / 6 * eye], [m / 6 * eye, m / 3 * eye]])
    np.testing.assert_allclose(body_mass_matrix(rod), expected, rtol=1e-15, atol=1e-15)


def test_plate_with_offset_cog_against_numerical_integration() -> None:
    """∫ Cᵀ C dm and ∫ Cᵀ g dm summed over the cells of a uniform rectangular plate that lies off
    the body's x axis; C is obtained column by column from the geometric definition of a material
    point r = r0 + ξ e + η e⊥ (e = (r1 − r0)/L), not from the formula under test. The mass, cog and
    I0 handed to the element come from the same cells, so agreement is to rounding (1e-12)."""
    length, cells = 0.8, 50
    xi, eta = np.meshgrid(np.linspace(-0.3, 1.1, cells), np.linspace(0.15, 0.6, cells))
    xi, eta = xi.ravel(), eta.ravel()
    dm = np.full(xi.size, 2.5 / xi.size)  # 2.5 kg spread evenly

    def material_point(r0r1: np.ndarray, k: int) -> np.ndarray:
        r0, r1 = r0r1[:2], r0r1[2:]
        e = (r1 - r0) / length
        return r0 + xi[k] * e + eta[k] * np.array([-e[1], e[0]])

    reference_mass, reference_gravity = np.zeros((4, 4)), np.zeros(4)
    g = np.array([0.3, -9.81])
    for k in range(xi.size):
        c = np.column_stack([material_point(unit, k) for unit in np.eye(4)])
        reference_mass += dm[k] * c.T @ c
        reference_gravity += dm[k] * c.T @ g
    m = dm.sum()
    plate = Body(name="plate", points=(0, 1), mass=m, inertia=float(dm @ (xi**2 + eta**2)),
                 cog=(float(dm @ xi) / m, float(dm @ eta) / m), length=length)
    np.testing.assert_allclose(body_mass_matrix(plate), reference_mass, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(body_gravity_force(plate, g), reference_gravity, rtol=1e-12, atol=1e-12)


BODIES = """
points:
  - {x: 0, y: 0, fixed: true}   # 0
  - {x: 1.2, y: 0.4}            # 1
  - {x: 0.5, y: 2.0}            # 2
  - {x: 3, y: 1, fixed: true}   # 3
  - {x: 2.0, y: 2.5}            # 4
planar_bodies:
  - {name: first_fixed, points: [0, 1], mass: 2.0, I0: 0.9, cog: [0.4, 0.3]}
  - {name: reversed, points: [2, 1], mass: 1.5, I0: 1.1, cog: [0.7, -0.2]}
  - {name: second_fixed, points: [4, 3], mass: 3.0, I0: 2.0, cog: [0.2, 0.25]}
"""


def test_fixed_and_reversed_points_against_rigid_body_energy(write_yaml) -> None:
    """Bodies with the first point fixed, the second point fixed, and a first point of higher index
    than the second; off-axis centres of gravity. Any rigid motion of the free points (not only
    those allowed by the joints) must give the rigid-body kinetic energy."""
    mech = load_mechanism(write_yaml(BODIES))
    rng = np.random.default_rng(7)
    q = mech.q0
    positions = point_positions(mech, q)
    for _ in range(5):
        # Rigid velocities: point 1 turns about the fixed point 0; the body 2-1 moves rigidly
        # (v2 = v1 + ω J (r2 − r1)); point 4 turns about the fixed point 3.
        w0, w1, w2 = rng.normal(size=3)
        v1 = w0 * np.array([-positions[1, 1], positions[1, 0]])
        v2 = v1 + w1 * np.array([-(positions[2, 1] - positions[1, 1]), positions[2, 0] - positions[1, 0]])
        v4 = w2 * np.array([-(positions[4, 1] - positions[3, 1]), positions[4, 0] - positions[3, 0]])
        qd = np.concatenate((v1, v2, v4))
        assert kinetic_energy(mech, qd) == pytest.approx(rigid_body_energy(mech, q, qd), rel=1e-12)


def test_body_with_first_point_fixed_is_a_pure_rotation() -> None:
    """Upstream pendulum: a uniform rod about a fixed end has M = (I0/L²) I = (m/3) I."""
    mech = load_reference("pendulum1.yaml")
    np.testing.assert_allclose(mech.arrays.mass, 5.0 / 3.0 * np.eye(2), rtol=1e-14)


@pytest.mark.parametrize("path", [
    "pendulum2.yaml", "pendulum3.yaml", "pick-and-place-robot.yaml", "fourbars1-with-rel-angle.yaml",
    MECHANISMS / "slider_crank.yaml", MECHANISMS / "double_pendulum.yaml", MECHANISMS / "five_bar.yaml",
])
def test_total_kinetic_energy_for_admissible_velocities(path) -> None:
    mech = load(path)
    for q, qd in feasible_states(mech, np.random.default_rng(11), 4):
        assert kinetic_energy(mech, qd) == pytest.approx(rigid_body_energy(mech, q, qd), rel=1e-10)


@pytest.mark.parametrize("path", ["pendulum3.yaml", "pick-and-place-robot.yaml", MECHANISMS / "slider_crank.yaml"])
def test_gravity_potential_is_sum_of_m_g_y_cog(path) -> None:
    mech = load(path)
    for q, _ in feasible_states(mech, np.random.default_rng(3), 4):
        assert potential_energy(mech, q) == pytest.approx(gravity_energy(mech, q), rel=1e-12, abs=1e-12)


def test_gravity_potential_in_any_direction(write_yaml) -> None:
    mech = load_mechanism(write_yaml("gravity: [2.0, -9.0]\n" + BODIES))
    q = mech.q0
    assert potential_energy(mech, q) == pytest.approx(gravity_energy(mech, q), rel=1e-12)


@pytest.mark.parametrize("name", ["fourbar_benchmark.yaml", "five_bar.yaml", "pick_and_place.yaml"])
def test_body_mass_terms_split_the_assembled_mass_matrix_and_gravity(name: str) -> None:
    """Σ_b M_b = M and Σ_b Q_g,b = the model's gravity force; P ν moves mass between the bodies and keeps
    the total: Σ_b m_b (P ν)_b = 0."""
    mech = load_mechanism(MECHANISMS / name)
    terms = body_mass_terms(mech)
    np.testing.assert_allclose(terms.matrices.sum(axis=0), mech.arrays.mass, atol=1e-12)
    np.testing.assert_allclose(terms.gravity.sum(axis=1), mech.gravity_z[:mech.n], atol=1e-12)
    masses = np.array([b.mass for b in mech.bodies if b.mass > 0.0])
    assert len(terms.names) == len(masses) > 1
    nu = np.random.default_rng(3).normal(size=len(masses))
    assert masses @ terms.distribution @ nu == pytest.approx(0.0, abs=1e-12)
