"""The link-mass errors of a URDF model (estimator.spatial.link_masses): Σ_b μ_b Q_b against Pinocchio's
RNEA of the model with every link's inertia scaled by (1 + μ_b) and against our own RNEA of the scaled
model; the q-, q̇-, q̈-tangents, the step rows' ν-, q-, q̇-, q̈-columns and the joint torque sensor's blocks
(``with_masses``, block ``m``) against central differences; the distribution P (total kept or free).
Seeded states."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import central_difference
from spatial_sensor_cases import STEP, TOLERANCE, PinocchioPair, assert_jacobians, random_state, robot

from estimator.factors.estimation_state import EstimationLayout, dynamics_rows
from estimator.spatial.dynamics import inverse_dynamics
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.link_masses import link_mass_terms
from sensors.config import build_sensors

ROBOTS = ("panda", "test_tree", "rssr")  # an arm, a tree with a prismatic joint and branches, a loop's tree


def scaled(model, terms, mu: np.ndarray):
    """``model`` with link b's inertia and mass (1 + μ_b) times its own."""
    inertia, mass = model.inertia.copy(), model.mass.copy()
    inertia[terms.links] *= (1.0 + mu)[:, None, None]
    mass[terms.links] *= 1.0 + mu
    return dataclasses.replace(model, inertia=inertia, mass=mass)


@pytest.mark.parametrize("name", ROBOTS)
def test_the_link_terms_are_the_rnea_of_the_scaled_inertias(name: str) -> None:
    """RNEA(scaled) − RNEA(model) = Σ_b μ_b Q_b to 1e-12 · max(1, |Q|) (both ours: linear in the inertias)."""
    model = robot(name)
    terms = link_mass_terms(model, free_total=True)
    for seed in range(3):
        state = random_state(model, seed)
        mu = np.random.default_rng(seed).uniform(-0.3, 0.3, len(terms.links))
        values, _ = terms.evaluate(state.q, state.qd, state.qdd)
        change = (inverse_dynamics(scaled(model, terms, mu), state.q, state.qd, state.qdd)
                  - inverse_dynamics(model, state.q, state.qd, state.qdd))
        np.testing.assert_allclose(values @ mu, change, rtol=0, atol=1e-12 * max(1.0, np.abs(change).max()))


def test_against_pinocchio_with_scaled_inertias() -> None:
    """Our RNEA plus Σ_b μ_b Q_b against Pinocchio's rnea on its model of the Panda with each joint's
    inertia (the links merged on it) scaled by (1 + μ_b), friction and armature off: ≤ 1e-10 · max(1, |τ|)."""
    pin = pytest.importorskip("pinocchio")
    model = robot("panda")
    terms = link_mass_terms(model, free_total=True)
    pair = PinocchioPair(pin, model, "panda")
    for seed in range(3):
        state = random_state(model, seed)
        mu = np.random.default_rng(seed).uniform(-0.3, 0.3, len(terms.links))
        pm = pair.pm.copy()
        for link, factor in zip(terms.links, 1.0 + mu):
            inertia = pm.inertias[pair.jid[link]]
            pm.inertias[pair.jid[link]] = pin.Inertia(factor * inertia.mass, inertia.lever, factor * inertia.inertia)
        tau = pin.rnea(pm, pm.createData(), *_pin_state(pair, state))[pair.iv]
        ours = inverse_dynamics(model, state.q, state.qd, state.qdd, friction=False) \
            - model.armature * state.qdd + terms.evaluate(state.q, state.qd, state.qdd)[0] @ mu
        np.testing.assert_allclose(ours, tau, rtol=0, atol=1e-10 * max(1.0, np.abs(tau).max()))


def _pin_state(pair: PinocchioPair, state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, v, a) in Pinocchio's order (continuous joints as (cos, sin))."""
    q = np.zeros(pair.pm.nq)
    for (start, size), value in zip(pair.iq, state.q):
        q[start:start + size] = (np.cos(value), np.sin(value)) if size == 2 else value
    v, a = np.zeros(pair.pm.nv), np.zeros(pair.pm.nv)
    v[pair.iv], a[pair.iv] = state.qd, state.qdd
    return q, v, a


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("free", [False, True])
def test_the_step_rows_mass_columns_against_central_differences(name: str, free: bool) -> None:
    """dynamics_rows with ν (no loop rows: the tree's d) against central differences over all of x, the
    tolerance of the sensors' tests (spatial_sensor_cases)."""
    model = robot(name)
    terms = link_mass_terms(model, free)
    n, nm = model.dof, len(terms.links)
    layout = EstimationLayout(n, (), tuple(range(len(model.actuated))), (), masses=nm)
    selection = np.eye(n)[:, model.actuated]
    rng = np.random.default_rng(4)
    state = random_state(model, 4)
    x = np.concatenate((state.q, state.qd, state.qdd, rng.uniform(-50, 50, len(model.actuated)),
                        rng.uniform(-0.3, 0.3, nm)))
    assert x.size == layout.size

    def error(v: np.ndarray) -> np.ndarray:
        return dynamics_rows(model, layout, selection, terms, None, None, v, jac=False)[0].copy()

    _, analytic = dynamics_rows(model, layout, selection, terms, None, None, x)
    numeric = central_difference(error, x, STEP)
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * (1.0 + np.abs(numeric).max()))
    mu = terms.distribution @ x[layout.mass_error]
    if not free:  # the total mass kept
        assert abs(model.mass[terms.links] @ mu) < 1e-12 * model.total_mass
    change = (inverse_dynamics(scaled(model, terms, mu), state.q, state.qd, state.qdd)
              - inverse_dynamics(model, state.q, state.qd, state.qdd))
    np.testing.assert_allclose(error(x) - dynamics_rows(model, layout, selection, terms, None, None,
                                                        np.concatenate((x[:-nm], np.zeros(nm))), jac=False)[0],
                               change, rtol=0, atol=1e-10 * max(1.0, np.abs(change).max()))


@pytest.mark.parametrize("name", ("panda", "test_tree"))
def test_the_joint_torque_sensor_reads_the_link_masses(name: str) -> None:
    """Every block (q, q̇, q̈, w, ν) against central differences, and h at ν equal to the scaled model's
    sensor's reading (≤ 1e-12 · max(1, |h|))."""
    model = robot(name)
    terms = link_mass_terms(model, free_total=True)
    frames = FrameWrenches.of(model, (model.frames[-1].name,))
    config = {f"tau_{j}": {"kind": "joint_torque", "joint": j, "rate": 1000, "noise": {"density": 1e-2},
                           "units": "N" if kind else "N*m"} for j, kind in zip(model.joint_names, model.kind)}
    plain = build_sensors({"sensors": config}, model, "tau.yaml").sensors
    rng = np.random.default_rng(7)
    state = random_state(model, 7)
    w, mu = rng.uniform(-20.0, 20.0, frames.size), rng.uniform(-0.3, 0.3, len(terms.links))
    heavy = build_sensors({"sensors": config}, scaled(model, terms, mu), "tau.yaml").sensors
    blocks = [state.q, state.qd, state.qdd, w, mu]
    for sensor, reference in zip(plain, heavy):
        reader = sensor.with_wrenches(frames).with_masses(terms)
        assert reader.variables == ("q", "v", "a", "w", "m")
        value = reader.measurement(*blocks, jac=False)[0].copy()
        expected = reference.measurement(state.q, state.qd, state.qdd, jac=False)[0]
        loaded = sensor.with_wrenches(frames).measurement(state.q, state.qd, state.qdd, w, jac=False)[0] \
            - sensor.measurement(state.q, state.qd, state.qdd, jac=False)[0]
        np.testing.assert_allclose(value, expected + loaded, rtol=0, atol=1e-12 * max(1.0, np.abs(value).max()))
        assert_jacobians(reader, state, blocks)


def test_the_force_torque_sensor_reads_the_link_masses() -> None:
    """Every block (q, q̇, q̈, ν) of a force-torque sensor on each joint of the Panda against central
    differences, and h at ν equal to the scaled model's sensor's reading (≤ 1e-12 · max(1, |h|))."""
    model = robot("panda")
    terms = link_mass_terms(model, free_total=False)
    config = {f"ft_{j}": {"kind": "force_torque", "joint": j, "xyz": [0.02, -0.03, 0.05], "rpy": [0.4, -0.3, 1.2],
                          "rate": 1000, "noise": {"density": 1e-2}} for j in model.joint_names}
    rng = np.random.default_rng(8)
    state = random_state(model, 8)
    nu = rng.uniform(-0.3, 0.3, len(terms.links))
    heavy = build_sensors({"sensors": config}, scaled(model, terms, terms.distribution @ nu), "ft.yaml").sensors
    blocks = [state.q, state.qd, state.qdd, nu]
    for sensor, reference in zip(build_sensors({"sensors": config}, model, "ft.yaml").sensors, heavy):
        reader = sensor.with_masses(terms)
        assert reader.variables == ("q", "v", "a", "m")
        value = reader.measurement(*blocks, jac=False)[0].copy()
        expected = reference.measurement(state.q, state.qd, state.qdd, jac=False)[0]
        np.testing.assert_allclose(value, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(value).max()))
        assert_jacobians(reader, state, blocks)
