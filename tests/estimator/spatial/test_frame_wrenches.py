"""External wrenches on named frames as states (estimator.spatial.frame_wrenches) and the step rows that take
them (estimator.spatial.loop_rows.step_rows): the step rows' Jacobian over [q, q̇, q̈, λ, F, w] against
central differences at seeded states of the Panda (a tree) and the RSSR (a closed chain, its loop rows
kept); the body wrenches against body_wrenches; ∂Q/∂w = −J_fᵀ against Pinocchio's frame Jacobians and the
loaded RNEA against Pinocchio's with external forces. Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, central_difference

from estimator.errors import MbstateError
from estimator.model_protocol import assemble, independent_rows, start_configuration
from estimator.spatial import loop_rows
from estimator.spatial.dynamics import body_wrenches, inverse_dynamics
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.kinematics import body_kinematics
from estimator.spatial.model import load_spatial

# (robot, frames): the Panda's tool and a link half-way, a closed chain's coupler frame and its rocker
CASES = (("panda", ("panda_hand_tcp", "panda_link4")), ("rssr", ("coupler_end", "rocker")))
# Central differences of step 1e-6: truncation ~1e-11 and round-off ~1e-10 |e| (|e| up to a few hundred
# N·m with wrenches of tens of N); 1e-7 (1 + max|J|) leaves a margin while a wrong term (O(1)) fails.
STEP, TOLERANCE = 1e-6, 1e-7


def state(name: str, seed: int):
    """(model, frames, loop rows, q, q̇, q̈, λ, F, w): the RSSR at its assembled start (q̇, q̈ need not
    satisfy the loop: the rows are evaluated anyway), the Panda anywhere."""
    model = load_spatial(MECHANISMS / "urdf" / f"{name}.urdf")
    frames = FrameWrenches.of(model, dict(CASES)[name])
    rng = np.random.default_rng(seed)
    n = model.dof
    q = assemble(model, start_configuration(model)) if model.loops else rng.uniform(-np.pi, np.pi, n)
    rows = np.asarray(independent_rows(model, q), int)
    return (model, frames, rows, q, rng.uniform(-2, 2, n), rng.uniform(-5, 5, n), rng.normal(size=len(rows)),
            rng.normal(size=len(model.actuated)), rng.uniform(-20, 20, frames.size))


@pytest.mark.parametrize("name", [name for name, _ in CASES])
@pytest.mark.parametrize("seed", range(3))
def test_step_rows_jacobian_over_q_and_w(name: str, seed: int) -> None:
    model, frames, rows, q, qd, qdd, lam, f, w = state(name, seed)
    selection, n, size = model.actuation(), model.dof, len(rows)
    x = np.concatenate((q, qd, qdd, lam, f, w))
    cuts = np.cumsum([n, n, n, size, len(f)])

    def error(x: np.ndarray) -> np.ndarray:
        parts = np.split(x, cuts)
        return loop_rows.step_rows(model, rows, selection, *parts[:5], False, frames, parts[5])[0]

    value, analytic = loop_rows.step_rows(model, rows, selection, q, qd, qdd, lam, f, True, frames, w)
    numeric = central_difference(error, x, STEP)
    np.testing.assert_allclose(value, error(x), rtol=0, atol=1e-12 * (1 + np.abs(value).max()))
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=TOLERANCE * (1.0 + np.abs(numeric).max()))
    without = loop_rows.step_rows(model, rows, selection, q, qd, qdd, lam, f, True)  # w = 0: the rows of old
    zero = loop_rows.step_rows(model, rows, selection, q, qd, qdd, lam, f, True, frames, np.zeros(frames.size))
    assert np.array_equal(without[0], zero[0]) and np.array_equal(without[1], zero[1][:, :without[1].shape[1]])


@pytest.mark.parametrize("name", [name for name, _ in CASES])
def test_body_wrenches_are_body_wrenches_of_the_named_frames(name: str) -> None:
    model, frames, *_, w = state(name, 0)
    named = {frame: w[6 * k:6 * k + 6] for k, frame in enumerate(frames.names)}
    np.testing.assert_allclose(frames.body_wrenches(w), body_wrenches(model, named), rtol=0, atol=1e-13)


def test_against_pinocchio_frame_jacobians_and_external_forces() -> None:
    """−∂Q/∂w_f is Pinocchio's LOCAL frame Jacobian transposed (rows swapped: its twists are linear first),
    and RNEA with w equals Pinocchio's rnea with the frames' forces carried to their joints (fext), both to
    1e-12 relative."""
    pin = pytest.importorskip("pinocchio")
    model, frames, _, q, qd, qdd, _, _, w = state("panda", 1)
    pm = pin.buildModelFromUrdf(str(MECHANISMS / "urdf" / "panda.urdf"))
    pm.gravity.linear = model.gravity
    data = pm.createData()
    ids = [pm.getJointId(joint) for joint in model.joint_names]
    assert ids == list(range(1, 8))  # Panda's joints are Pinocchio's, in order: no reordering of q
    kinematics = body_kinematics(model, q, qd, qdd)
    columns = frames.joint_columns((kinematics.rot, kinematics.pos))
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for k, name in enumerate(frames.names):
        frame = pm.frames[pm.getFrameId(name)]
        reference = pin.computeFrameJacobian(pm, data, q, pm.getFrameId(name), pin.LOCAL)
        np.testing.assert_allclose(-columns[:, 6 * k:6 * k + 6].T, np.vstack((reference[3:], reference[:3])),
                                   rtol=0, atol=1e-12)
        wrench = w[6 * k:6 * k + 6]
        fext[frame.parentJoint] += frame.placement.act(pin.Force(wrench[3:], wrench[:3]))
    expected = pin.rnea(pm, data, q, qd, qdd, fext)
    loaded = inverse_dynamics(model, q, qd, qdd, frames.body_wrenches(w), friction=False)
    np.testing.assert_allclose(loaded - model.armature * qdd, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def test_a_frame_unknown_or_on_the_fixed_base_is_one_line() -> None:
    model = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
    with pytest.raises(MbstateError, match="no frame 'tool' in"):
        FrameWrenches.of(model, ("tool",))
    with pytest.raises(MbstateError, match="'panda_link0' is on the fixed base"):
        FrameWrenches.of(model, ("panda_link0",))
