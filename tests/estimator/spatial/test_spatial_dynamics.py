"""Spatial dynamics against its own identities: RNEA = M q̈ + C q̇ + g (CRBA, Christoffel C), ABA
inverts RNEA, Ṁ − 2C is skew-symmetric, the analytic derivatives match central differences,
gravity as a base acceleration equals gravity as applied wrenches (Müller 2018, the notes' M4 check
of the applied-wrench sign), applied wrenches enter as −Jᵀ W, and free motion keeps its energy."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from estimator.spatial.dynamics import (body_wrenches, coriolis_matrix, forward_dynamics, inverse_dynamics,
                                        mass_matrix, rnea_derivatives, workspace)
from estimator.spatial.model import SpatialModel, load_spatial

URDF = Path(__file__).resolve().parents[3] / "configs" / "mechanisms" / "urdf"
ROBOTS = ("ur5", "panda", "test_tree")


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
def test_gravity_as_base_acceleration_equals_gravity_wrenches(robot: str) -> None:
    """V̇₀ = (0; −g) against each body's weight applied at its centre of mass (d = h/m from Mᵇ),
    with the applied wrench entering (67a) with a minus sign: to 1e-12."""
    model = model_of(robot)
    q, qd, qdd = state(model.dof, 31)
    body = kin.body_kinematics(model, q, qd, qdd)
    weight = np.zeros((model.dof, 6))
    for i in range(model.dof):
        m = model.mass[i]
        com = np.array([model.inertia[i, 2, 4], model.inertia[i, 0, 5], model.inertia[i, 1, 3]]) / m  # m d̃
        force = m * body.rot[i].T @ model.gravity
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


def energy(model: SpatialModel, q: np.ndarray, qd: np.ndarray) -> tuple[float, float]:
    """(kinetic ½ q̇ᵀ M q̇, potential −Σ mᵢ gᵀ cᵢ) [J]."""
    zero = np.zeros(model.dof)
    body = kin.body_kinematics(model, q, zero, zero)
    potential = 0.0
    for i in range(model.dof):
        com = np.array([model.inertia[i, 2, 4], model.inertia[i, 0, 5], model.inertia[i, 1, 3]]) / model.mass[i]
        potential -= model.mass[i] * model.gravity @ (body.pos[i] + body.rot[i] @ com)
    return 0.5 * qd @ mass_matrix(model, q) @ qd, potential


@pytest.mark.parametrize("robot", ("ur5", "panda"))
def test_free_motion_keeps_its_energy(robot: str) -> None:
    """10 s under gravity, friction off, RK4 at 1 ms on ABA: the total energy drifts by at most
    1e-6 of the kinetic energy's range (issue 37's bound)."""
    model = model_of(robot)
    work = workspace(model)
    zero = np.zeros(model.dof)
    q, qd = np.random.default_rng(51).uniform(-1, 1, model.dof), np.zeros(model.dof)

    def rate(x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return v, forward_dynamics(model, x, v, zero, friction=False, work=work)

    dt, totals, kinetic = 1e-3, [], []
    for step in range(10_001):
        if step % 100 == 0:
            k, p = energy(model, q, qd)
            totals.append(k + p)
            kinetic.append(k)
        k1 = rate(q, qd)
        k2 = rate(q + 0.5 * dt * k1[0], qd + 0.5 * dt * k1[1])
        k3 = rate(q + 0.5 * dt * k2[0], qd + 0.5 * dt * k2[1])
        k4 = rate(q + dt * k3[0], qd + dt * k3[1])
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        qd = qd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    drift = max(abs(t - totals[0]) for t in totals)
    assert max(kinetic) - min(kinetic) > 1.0  # the arm really moves
    assert drift <= 1e-6 * (max(kinetic) - min(kinetic))
