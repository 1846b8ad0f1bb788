"""The payload's joint forces (estimator.spatial.payload): every Jacobian against central differences, the
rows against Pinocchio's RNEA of the model with the point mass merged into the link's inertia (an
independent oracle: its own URDF reader, frames and recursion), and the stacked state's dynamics rows
with the payload columns (estimator.factors.estimation_state.payload_rows). Seeded states."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from conftest import MECHANISMS, central_difference

from estimator.errors import MbstateError
from estimator.factors.estimation_state import EstimationLayout, dynamics_rows
from estimator.model_protocol import load_model, payload_terms
from estimator.spatial import lie
from estimator.spatial.dynamics import body_wrenches, inverse_dynamics
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.model import load_spatial
from estimator.spatial.payload import STATES, point_mass, published, with_payload

# (robot, link): the last moving link, and a link merged into it by fixed joints (a pose in its body)
CASES = (("panda", "panda_link7"), ("panda", "panda_hand"), ("ur5", "wrist_3_link"), ("ur5", "tool0"))


def state(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """(q, q̇, q̈, θ): joint values over the circle, rates of a fast arm, a payload of 0.1–2 kg within 0.2 m
    whose rotational inertia about its centre of mass is a random positive-definite matrix."""
    rng = np.random.default_rng(seed)
    mass, com, axes = rng.uniform(0.1, 2.0), rng.uniform(-0.2, 0.2, 3), rng.normal(size=(3, 3))
    about_com = 1e-3 * (axes @ axes.T + np.eye(3))
    theta = point_mass(mass, com) + np.concatenate((np.zeros(4), about_com[[0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]]))
    return rng.uniform(-np.pi, np.pi, n), rng.uniform(-3, 3, n), rng.uniform(-10, 10, n), theta, about_com


@pytest.mark.parametrize("robot, link", CASES)
@pytest.mark.parametrize("seed", range(2))
def test_jacobians_against_central_differences(robot: str, link: str, seed: int) -> None:
    model = load_spatial(MECHANISMS / "urdf" / f"{robot}.urdf")
    terms = payload_terms(model, link)
    n = model.dof
    x = np.concatenate(state(n, seed)[:4])
    _, analytic = terms.rows(x[:n], x[n:2 * n], x[2 * n:3 * n], x[3 * n:])

    def forces(y: np.ndarray) -> np.ndarray:
        return terms.rows(y[:n], y[n:2 * n], y[2 * n:3 * n], y[3 * n:], jac=False)[0].copy()

    numeric = central_difference(forces, x, 1e-6)
    # step 1e-6: truncation ~1e-12 |f'''|, rounding ~1e-16 |f| / 1e-6; both far below 1e-8 of the entries' scale
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=1e-8 * (1.0 + np.abs(numeric).max()))


@pytest.mark.parametrize("robot, link", CASES)
def test_rows_are_the_merged_models_rnea_in_pinocchio(robot: str, link: str) -> None:
    """Jᵀ W_p(θ) = RNEA of the model whose link carries the payload − RNEA of the model, with Pinocchio's
    RNEA and frames for the merged model (the joint's inertia gains the payload's pin.Inertia(m, c, I_c)
    carried from the link's frame to the joint's), and with ours (with_payload, the lab's truth)."""
    pin = pytest.importorskip("pinocchio")
    path = str(MECHANISMS / "urdf" / f"{robot}.urdf")
    model = load_spatial(path)
    terms = payload_terms(model, link)
    reference = pin.buildModelFromUrdf(path)
    assert reference.nq == reference.nv == model.dof  # revolute joints only: q and v as ours
    order = [reference.joints[reference.getJointId(name)].idx_v for name in model.joint_names]
    frame = reference.frames[reference.getFrameId(link)]
    reference.gravity.linear = model.gravity
    for seed in range(5):
        q, qd, qdd, theta, about_com = state(model.dof, seed)
        ours = terms.rows(q, qd, qdd, theta, jac=False)[0]
        loaded = reference.copy()
        loaded.inertias[frame.parentJoint] += frame.placement.act(pin.Inertia(theta[0], theta[1:4] / theta[0], about_com))
        args = []
        for value in (q, qd, qdd):
            at = np.zeros(model.dof)
            at[order] = value
            args.append(at)
        expected = (pin.rnea(loaded, loaded.createData(), *args) - pin.rnea(reference, reference.createData(), *args))[order]
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        merged = with_payload(model, link, theta)
        own = inverse_dynamics(merged, q, qd, qdd, friction=False) - inverse_dynamics(model, q, qd, qdd, friction=False)
        np.testing.assert_allclose(ours, own, rtol=0, atol=1e-9 * max(1.0, np.abs(own).max()))


@pytest.mark.parametrize("wrenches", [(), ("panda_hand_tcp",)])
def test_the_stacked_states_dynamics_rows_carry_the_payload(wrenches: tuple[str, ...]) -> None:
    """dynamics_rows on a layout with θ (and with an external wrench's w after it): RNEA + Jᵀ W_p on the
    equations of motion, and its Jacobian over the whole stacked state (θ's and w's columns where the layout
    puts them) against central differences."""
    model = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
    terms = payload_terms(model, "panda_link7")
    frames = FrameWrenches.of(model, wrenches) if wrenches else None
    n = model.dof
    layout = EstimationLayout(n, (), (), (), payload=True, wrenches=wrenches)
    assert layout.size == 3 * n + STATES + 6 * len(wrenches) and layout.payload_state == slice(3 * n, 3 * n + STATES)
    q, qd, qdd, theta, _ = state(n, 3)
    w = np.random.default_rng(3).uniform(-10.0, 10.0, 6 * len(wrenches))
    x = np.concatenate((q, qd, qdd, theta, w))
    selection = np.zeros((n, 0))
    rows = partial(dynamics_rows, model, layout, selection, None, None, terms, frames=frames)
    error, jacobian = rows(x)
    applied = None if frames is None else body_wrenches(model, dict(zip(wrenches, w.reshape(-1, 6))))
    expected = inverse_dynamics(model, q, qd, qdd, applied) + terms.rows(q, qd, qdd, theta, jac=False)[0]
    np.testing.assert_allclose(error, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    numeric = central_difference(lambda y: rows(y, jac=False)[0], x, 1e-6)
    np.testing.assert_allclose(jacobian, numeric, rtol=0, atol=1e-8 * (1.0 + np.abs(numeric).max()))


def test_a_link_without_a_payload_is_one_line() -> None:
    model = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
    for link, message in (("gripper", "no link 'gripper' in panda"), ("panda_link0", "on the fixed base")):
        with pytest.raises(MbstateError, match=message):
            payload_terms(model, link)
    with pytest.raises(MbstateError, match="needs a spatial model"):
        payload_terms(load_model(MECHANISMS / "fourbar.yaml"), "crank")


def test_a_point_mass_and_what_is_published_of_it() -> None:
    """θ of a point mass is the URDF's inertial of a massive point (lie.spatial_inertia with no inertia about
    its centre); the published (m, c) is its mass and centre; merged, it adds its mass to its body."""
    theta = point_mass(0.5, np.array([0.01, -0.02, 0.05]))
    model = load_spatial(Path(MECHANISMS) / "urdf" / "panda.urdf")
    terms = payload_terms(model, "panda_link7")  # the body's own link: the basis is M_l's
    np.testing.assert_allclose(np.tensordot(theta, terms.basis, axes=1),
                               lie.spatial_inertia(0.5, np.array([0.01, -0.02, 0.05]), np.zeros((3, 3))), atol=1e-15)
    np.testing.assert_allclose(published(theta), [0.5, 0.01, -0.02, 0.05])
    np.testing.assert_array_equal(published(np.zeros(STATES)), np.zeros(4))
    merged = with_payload(model, "panda_hand", theta)
    body = payload_terms(model, "panda_hand").body
    assert merged.mass[body] == pytest.approx(model.mass[body] + 0.5)
    assert merged.total_mass == pytest.approx(model.total_mass + 0.5)
