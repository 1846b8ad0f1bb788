"""Spatial dynamics against its own identities: RNEA = M q̈ + C q̇ + g (CRBA, Christoffel C), ABA
inverts RNEA, Ṁ − 2C is skew-symmetric, the analytic derivatives match central differences and
their M the CRBA's, gravity as a base acceleration equals gravity as applied wrenches (Müller 2018,
the notes' M4 check of the applied-wrench sign), applied wrenches enter as −Jᵀ W, free motion keeps
its energy, the armature enters Q and M's diagonal only, and the PUMA's placeholder link-1 mass
changes no torque."""

from __future__ import annotations

import dataclasses
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from estimator.errors import MbstateError
from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from estimator.spatial.dynamics import (body_wrenches, coriolis_matrix, forward_dynamics, inverse_dynamics,
                                        joint_wrenches, mass_matrix, rnea_derivatives, workspace)
from estimator.spatial.energy import centres_of_mass, kinetic_energy, potential_energy
from estimator.spatial.model import SpatialModel, load_spatial
from estimator.spatial.simulate import simulate
from estimator.timeseries import Trajectory

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
ROBOTS = ("ur5", "panda", "test_tree", "puma560", "kinova")


def model_of(robot: str) -> SpatialModel:
    return load_spatial(URDF / f"{robot}.urdf")


def state(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n)


def loads(model: SpatialModel, seed: int) -> np.ndarray:
    """Random wrenches on the last two named frames (on moving bodies)."""
    rng = np.random.default_rng(seed)
    names = [frame.name for frame in model.frames if frame.body >= 0][-2:]
    return body_wrenches(model, {name: rng.normal(size=6) for name in names})


@pytest.mark.parametrize("robot", ROBOTS)
def test_rnea_splits_into_mass_coriolis_gravity_and_aba_inverts_it(robot: str) -> None:
    model = model_of(robot)
    work = workspace(model)
    for seed in range(5):
        q, qd, qdd = state(model.dof, seed)
        wrench = loads(model, seed)
        tau = inverse_dynamics(model, q, qd, qdd, wrench, work=work)
        zero = np.zeros(model.dof)
        parts = (mass_matrix(model, q, work) @ qdd + coriolis_matrix(model, q, qd, work) @ qd
                 + inverse_dynamics(model, q, zero, zero, wrench, friction=False, work=work)
                 + model.damping * qd + model.friction * np.sign(qd))
        np.testing.assert_allclose(tau, parts, rtol=0, atol=1e-12 * max(1.0, np.abs(tau).max()))
        np.testing.assert_allclose(forward_dynamics(model, q, qd, tau, wrench, work=work), qdd, rtol=0, atol=1e-10)
        assert np.linalg.eigvalsh(mass_matrix(model, q, work))[0] > 0.0


@pytest.mark.parametrize("robot", ROBOTS)
def test_coriolis_is_the_christoffel_matrix(robot: str) -> None:
    """Γ_ijk = C(q, eₖ)_ij is symmetric in j, k and equals ½(∂ₖM_ij + ∂ⱼM_ik − ∂ᵢM_jk) by central
    differences of the CRBA; Ṁ − 2C is skew-symmetric with Ṁ = Σ ∂ₖM q̇ₖ. Step 1e-6: truncation
    ~1e-12, rounding ~1e-10 on entries of size ~1."""
    model = model_of(robot)
    n, h = model.dof, 1e-6
    q, qd, _ = state(n, 11)
    dm = np.array([(mass_matrix(model, q + h * e) - mass_matrix(model, q - h * e)) / (2 * h) for e in np.eye(n)])
    gamma = np.array([coriolis_matrix(model, q, e) for e in np.eye(n)])  # [k, i, j]
    christoffel = 0.5 * (dm.transpose(1, 2, 0) + dm.transpose(1, 0, 2) - dm)  # [i, j, k]: ∂ₖM_ij + ∂ⱼM_ik − ∂ᵢM_jk
    np.testing.assert_allclose(gamma.transpose(1, 2, 0), christoffel, rtol=0, atol=1e-8)
    np.testing.assert_allclose(gamma, gamma.transpose(2, 1, 0), rtol=0, atol=1e-13)  # Γ_ijk = Γ_ikj
    c = coriolis_matrix(model, q, qd)
    skew = np.einsum("kij,k->ij", dm, qd) - 2 * c
    np.testing.assert_allclose(skew, -skew.T, rtol=0, atol=1e-8)


@pytest.mark.parametrize("robot", ROBOTS)
def test_rnea_derivatives_match_central_differences(robot: str) -> None:
    """With damping, Coulomb friction (q̇ away from 0) and applied wrenches; step 1e-6."""
    model = model_of(robot)
    n, h = model.dof, 1e-6
    q, qd, qdd = state(n, 21)
    wrench = loads(model, 21)
    dq, dqd, dqdd = rnea_derivatives(model, q, qd, qdd, wrench)

    def rnea(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return inverse_dynamics(model, a, b, c, wrench)

    for analytic, which in ((dq, 0), (dqd, 1), (dqdd, 2)):
        columns = []
        for e in np.eye(n):
            plus = [q, qd, qdd]
            minus = [q, qd, qdd]
            plus[which], minus[which] = plus[which] + h * e, minus[which] - h * e
            columns.append((rnea(*plus) - rnea(*minus)) / (2 * h))
        np.testing.assert_allclose(analytic, np.array(columns).T, rtol=0, atol=1e-7)


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_derivatives_mass_matrix_is_the_crba_one(robot: str) -> None:
    """∂Q/∂q̈ from the derivatives' world-frame composites (Jₖᵀ Mᶜᵢ Jᵢ) against the CRBA's body-frame
    recursion, two formulations: to 1e-13 of ‖M‖ (rounding only, measured ~1e-15)."""
    model = model_of(robot)
    work = workspace(model)
    for seed in range(5):
        q, qd, qdd = state(model.dof, 81 + seed)
        m = mass_matrix(model, q, work)
        np.testing.assert_allclose(rnea_derivatives(model, q, qd, qdd, work=work)[2], m, rtol=0,
                                   atol=1e-13 * np.abs(m).max())


@pytest.mark.parametrize("robot", ROBOTS)
def test_gravity_as_base_acceleration_equals_gravity_wrenches(robot: str) -> None:
    """V̇₀ = (0; −g) against each body's weight applied at its centre of mass (d = h/m from Mᵇ),
    with the applied wrench entering (67a) with a minus sign: to 1e-12."""
    model = model_of(robot)
    q, qd, qdd = state(model.dof, 31)
    body = kin.body_kinematics(model, q, qd, qdd)
    weight = np.zeros((model.dof, 6))
    for i, com in enumerate(centres_of_mass(model)):
        force = model.mass[i] * body.rot[i].T @ model.gravity
        weight[i] = np.concatenate((np.cross(com, force), force))
    weightless = dataclasses.replace(model, gravity=np.zeros(3))
    np.testing.assert_allclose(inverse_dynamics(weightless, q, qd, qdd, weight), inverse_dynamics(model, q, qd, qdd),
                               rtol=0, atol=1e-12 * 100)


@pytest.mark.parametrize("robot", ROBOTS)
def test_applied_wrench_enters_as_minus_jacobian_transpose(robot: str) -> None:
    """At rest without gravity, Q = −J_fᵀ W_f for a wrench W_f in a frame's axes, J_f that frame's
    body-fixed Jacobian Ad_{C_{f,b}} Jᵇ_b."""
    model = dataclasses.replace(model_of(robot), gravity=np.zeros(3))
    q = state(model.dof, 41)[0]
    zero = np.zeros(model.dof)
    body = kin.body_kinematics(model, q, zero, zero)
    wrench = np.random.default_rng(41).normal(size=6)
    for frame in model.frames:
        if frame.body < 0:
            continue
        jac = lie.adjoint(lie.inverse((frame.rot, frame.pos))) @ kin.body_jacobian(model, body, frame.body)
        tau = inverse_dynamics(model, q, zero, zero, body_wrenches(model, {frame.name: wrench}))
        np.testing.assert_allclose(tau, -jac.T @ wrench, rtol=0, atol=1e-13)


def energies(model: SpatialModel, run: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    """(total, kinetic) energy at every state of a run [J]."""
    kinetic = np.array([kinetic_energy(model, q, qd) for q, qd in zip(run.q, run.qd)])
    return kinetic + np.array([potential_energy(model, q) for q in run.q]), kinetic


@pytest.mark.parametrize("robot", ("ur5", "panda", "puma560"))
def test_free_motion_keeps_its_energy(robot: str) -> None:
    """10 s under gravity, friction off, RK4 at 1 ms on ABA: the total energy drifts by at most
    1e-6 of the kinetic energy's range (issue 37's bound); the PUMA's with ½ Iₐ q̇² of its armature
    in the kinetic energy (M). Not the Kinova: without armature its light wrist links reach ~290 rad/s
    from this start, where RK4 at 1 ms drifts by 7e-5 of the range (the integrator, not the model)."""
    model = model_of(robot)
    q0 = np.random.default_rng(51).uniform(-1, 1, model.dof)
    run = simulate(model, q0, np.zeros(model.dof), 1e-3, 10_000, friction=False)
    total, kinetic = energies(model, run)
    assert np.ptp(kinetic) > 1.0  # the arm really moves
    assert np.max(np.abs(total - total[0])) <= 1e-6 * np.ptp(kinetic)


def test_armature_adds_to_the_joint_force_and_the_mass_diagonal_only() -> None:
    """PUMA 560 with and without its armature Iₐ (sidecar): Q gains Iₐ q̈, M gains diag(Iₐ) and T
    gains ½ Σ Iₐ q̇², ABA still inverts RNEA; the joint wrenches, the Coriolis matrix and ∂Q/∂q, ∂Q/∂q̇
    do not change (the same floating-point operations: compared exactly)."""
    model = model_of("puma560")
    bare = dataclasses.replace(model, armature=np.zeros(model.dof))
    assert model.armature.min() > 0.1
    work, bare_work = workspace(model), workspace(bare)
    for seed in range(5):
        q, qd, qdd = state(model.dof, 61 + seed)
        tau = inverse_dynamics(model, q, qd, qdd, work=work)
        np.testing.assert_allclose(tau, inverse_dynamics(bare, q, qd, qdd, work=bare_work) + model.armature * qdd,
                                   rtol=0, atol=1e-12 * np.abs(tau).max())
        np.testing.assert_array_equal(joint_wrenches(model, work), joint_wrenches(bare, bare_work))
        np.testing.assert_allclose(mass_matrix(model, q), mass_matrix(bare, q) + np.diag(model.armature), rtol=0,
                                   atol=1e-14)
        np.testing.assert_allclose(forward_dynamics(model, q, qd, tau), qdd, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(coriolis_matrix(model, q, qd), coriolis_matrix(bare, q, qd))
        dq, dqd, m = rnea_derivatives(model, q, qd, qdd)
        bare_dq, bare_dqd, bare_m = rnea_derivatives(bare, q, qd, qdd)
        np.testing.assert_array_equal(dq, bare_dq)
        np.testing.assert_array_equal(dqd, bare_dqd)
        np.testing.assert_allclose(m, bare_m + np.diag(model.armature), rtol=0, atol=1e-14)
        assert kinetic_energy(model, q, qd) - kinetic_energy(bare, q, qd) == pytest.approx(
            0.5 * model.armature @ qd**2, rel=1e-12)


def test_puma_link1_placeholder_mass_changes_no_joint_torque(tmp_path: Path) -> None:
    """puma560.urdf gives link 1 (no published mass) 0.01 kg on the vertical joint-1 axis and
    transverse moments of its own: other values change neither M nor any joint torque, at any state;
    only joint 1's wrench gains the extra weight, Δm g along the axis (body 1's z is the world's)."""
    tree = ET.parse(URDF / "puma560.urdf")
    inertial = tree.getroot().find("link[@name='link1']/inertial")
    inertial.find("mass").set("value", "7.5")
    inertial.find("inertia").set("ixx", "0.4")
    inertial.find("inertia").set("iyy", "0.3")
    tree.write(tmp_path / "puma560.urdf")
    shutil.copy(URDF / "puma560.yaml", tmp_path)
    model, heavy = model_of("puma560"), load_spatial(tmp_path / "puma560.urdf")
    assert heavy.mass[0] == 7.5 and heavy.total_mass - model.total_mass == pytest.approx(7.49, rel=1e-12)
    work, heavy_work = workspace(model), workspace(heavy)
    weight = np.zeros((model.dof, 6))
    weight[0, 5] = 7.49 * 9.81
    for seed in range(5):
        q, qd, qdd = state(model.dof, 71 + seed)
        tau = inverse_dynamics(model, q, qd, qdd, work=work)
        np.testing.assert_allclose(inverse_dynamics(heavy, q, qd, qdd, work=heavy_work), tau, rtol=0,
                                   atol=1e-12 * np.abs(tau).max())
        np.testing.assert_allclose(joint_wrenches(heavy, heavy_work) - joint_wrenches(model, work), weight, rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(mass_matrix(heavy, q), mass_matrix(model, q), rtol=0, atol=1e-14)


def test_damping_dissipates_what_it_removes() -> None:
    """Panda (URDF damping 0.003 N·m·s/rad): E(t) − E(0) = −∫ Σ dᵢ q̇ᵢ² dt, the integral by the
    trapezoidal rule at 1 ms (error ~1e-6 of the loss)."""
    model = model_of("panda")
    run = simulate(model, np.full(model.dof, 0.3), np.ones(model.dof), 1e-3, 1000)
    total, _ = energies(model, run)
    power = (model.damping * run.qd**2).sum(axis=1)
    lost = np.concatenate(([0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * 1e-3)))
    assert lost[-1] > 0.01
    np.testing.assert_allclose(total - total[0], -lost, rtol=0, atol=1e-5 * lost[-1])


def test_wrong_sizes_and_unknown_frames_are_errors() -> None:
    """The kernels do not check bounds: the public functions refuse arrays of the wrong size."""
    model = model_of("ur5")
    zero = np.zeros(model.dof)
    with pytest.raises(MbstateError, match="qd: expected 6 values"):
        inverse_dynamics(model, zero, np.zeros(5), zero)
    with pytest.raises(MbstateError, match=r"wrench: expected shape \(6, 6\)"):
        forward_dynamics(model, zero, zero, zero, np.zeros((5, 6)))
    with pytest.raises(MbstateError, match="no frame 'gripper' in ur5"):
        body_wrenches(model, {"gripper": np.zeros(6)})
    assert not body_wrenches(model, {"base_link": np.ones(6)}).any()
    with pytest.raises(MbstateError, match="applied wrench on 'tool0': expected 6 values"):
        body_wrenches(model, {"tool0": np.zeros(3)})  # a load on the fixed base does nothing


def test_a_workspace_serves_only_its_model_and_any_sequence_is_converted() -> None:
    """A workspace carries its model's rows: another model's (even of the same file) is refused
    rather than silently used; lists and integer arrays go the converting path to the same result."""
    model, again = model_of("ur5"), model_of("ur5")
    q, qd, qdd = state(model.dof, 91)
    work = workspace(again)
    for call in (lambda: inverse_dynamics(model, q, qd, qdd, work=work), lambda: mass_matrix(model, q, work),
                 lambda: forward_dynamics(model, q, qd, qdd, work=work), lambda: joint_wrenches(model, work),
                 lambda: rnea_derivatives(model, q, qd, qdd, work=work)):
        with pytest.raises(MbstateError, match="workspace of another model"):
            call()
    tau = inverse_dynamics(model, q, qd, qdd, work=workspace(model))
    np.testing.assert_array_equal(inverse_dynamics(model, list(q), tuple(qd), list(qdd)), tau)
    ints = np.arange(model.dof)
    np.testing.assert_array_equal(inverse_dynamics(model, ints, ints, ints), inverse_dynamics(model, *[1.0 * ints] * 3))
