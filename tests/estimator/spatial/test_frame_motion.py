"""The motion of a mounted frame (estimator.spatial.frame_motion): V_s and V̇_s against the numpy
kinematics carried by Ad_{S⁻¹} (V̇ with the base at (0; −g)), and all six rows of the five tangents
against central differences — the sensors use only some of them. Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, central_difference

from estimator.spatial import kinematics as kin
from estimator.spatial import lie
from estimator.spatial.frame_motion import FrameMotion, mounted_pose
from estimator.spatial.model import load_spatial

MOUNTS = {"ur5": "tool0", "panda": "panda_hand_tcp", "test_tree": "left_tool"}


@pytest.mark.parametrize("robot", tuple(MOUNTS))
@pytest.mark.parametrize("seed", range(2))
def test_motion_and_tangents(robot: str, seed: int) -> None:
    model = load_spatial(MECHANISMS / "urdf" / f"{robot}.urdf")
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-np.pi, np.pi, model.dof), rng.uniform(-2, 2, model.dof), rng.uniform(-5, 5, model.dof)
    body, rot, pos = mounted_pose(model, MOUNTS[robot], rng.uniform(-0.2, 0.2, 3), rng.uniform(-np.pi, np.pi, 3))
    motion = FrameMotion(model, body, rot, pos)
    twist, accel, tangents = (x.copy() for x in motion.evaluate(q, qd, qdd))
    bodies = kin.body_kinematics(model, q, qd, qdd)
    carry = lie.adjoint(lie.inverse((rot, pos)))
    gravity = np.concatenate((np.zeros(3), -bodies.rot[body].T @ model.gravity))  # (0; −g) in the body's axes
    scale = max(1.0, np.abs(accel).max())
    np.testing.assert_allclose(twist, carry @ bodies.twist[body], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(accel, carry @ (bodies.accel[body] + gravity), rtol=0, atol=1e-12 * scale)
    blocks = (q, qd, qdd)
    # (tangent, output 0 V_s or 1 V̇_s, block): step 1e-6, tolerance 1e-7 (1 + max|J|) as the sensors' tests
    for tangent, output, block in ((0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1), (4, 1, 2)):
        def value(x: np.ndarray, block: int = block, output: int = output) -> np.ndarray:
            args = list(blocks)
            args[block] = x
            return motion.evaluate(*args)[output].copy()

        numeric = central_difference(value, blocks[block], 1e-6)
        np.testing.assert_allclose(tangents[tangent].T, numeric, rtol=0, atol=1e-7 * (1.0 + np.abs(numeric).max()),
                                   err_msg=f"tangent {tangent}")
