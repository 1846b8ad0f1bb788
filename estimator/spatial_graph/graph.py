"""The linear dynamics graphs of a tree with q and q̇ known (Xie and Dellaert §III–VI).

With q and q̇ known, the twists follow from the twist factors (4) alone, a graph of their own (the
paper's precomputed twists). Given the twists, the factors (5)–(7) are affine in the unknowns V̇ᵢ,
Fᵢ and, per joint, q̈ᵢ or τᵢ: each is a native ``gtsam.JacobianFactor`` read off its numpy error
function (value and analytic Jacobians at zero unknowns, exact for an affine error), so that
elimination runs in C++ with no Python callback. A tree's graph is square; a unit noise model
(any scale gives the same solution of a square system).

A closed chain adds per loop joint (§VII) its wrench F_L and accelerations q̈_L (unknown), its
twist-acceleration factor (5), its torque factor (7) (unactuated), and F_L in the wrench factors (6) of
its two bodies; a planar loop's graph is then rank-deficient (F_L's out-of-plane components) unless the
planar factor is added, which makes it overdetermined and consistent (QR: least squares, exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import gtsam
import numpy as np

from estimator.factors import keys
from estimator.factors.adapter import ErrorFunction
from estimator.factors.native import LinearRelation
from estimator.spatial_graph.factors import (accel_error, loop_accel_error, loop_torque_error, min_torque_error,
                                             planar_error, torque_error, twist_error, wrench_error)
from estimator.spatial_graph.terms import GraphTerms, coupled_wrenches


@dataclass(frozen=True)
class Unknown:
    """A variable of the graph: its key and size."""
    key: int
    size: int


Slot = Unknown | np.ndarray  # an argument of an error function: a variable, or a known value


def linear_factor(fn: ErrorFunction, slots: Sequence[Slot], hard: bool = False) -> gtsam.JacobianFactor:
    """The factor of an error function affine in its Unknown slots, the other slots held at their
    values; ``hard``: a constraint (GTSAM's constrained noise model, which QR elimination keeps exact)."""
    values = [np.zeros(slot.size) if isinstance(slot, Unknown) else slot for slot in slots]
    error, jacobians = fn(*values, jac=True)
    picked = [i for i, slot in enumerate(slots) if isinstance(slot, Unknown)]
    noise = gtsam.noiseModel.Constrained.All(len(error)) if hard else gtsam.noiseModel.Unit.Create(len(error))
    relation = LinearRelation.of_blocks(noise, [jacobians[i] for i in picked], -error)
    return relation.jacobian([slots[i].key for i in picked])


def twist_graph(terms: GraphTerms, qd: np.ndarray) -> gtsam.GaussianFactorGraph:
    """The twist factors (4) of every joint, the base at rest: unknowns Vᵢ."""
    graph = gtsam.GaussianFactorGraph()
    for i, joint in enumerate(terms.joints):
        p = int(terms.parent[i])
        parent = np.zeros(6) if p < 0 else Unknown(keys.BODY_TWIST(p), 6)
        graph.add(linear_factor(partial(twist_error, joint), [Unknown(keys.BODY_TWIST(i), 6), parent, qd[i:i + 1]]))
    return graph


def solve_twists(terms: GraphTerms, qd: np.ndarray) -> np.ndarray:
    """(n, 6) the body twists from the twist graph."""
    solution = twist_graph(terms, qd).optimize()
    return np.array([solution.at(keys.BODY_TWIST(i)) for i in range(len(terms.joints))])


@dataclass(frozen=True)
class JointInputs:
    """The joint-level knowns: q̇, and per joint q̈ᵢ where ``accel_known`` and τᵢ where ``tau_known``
    (a tree: exactly one of them; a redundantly actuated loop: neither, for some joints)."""
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    accel_known: np.ndarray
    tau_known: np.ndarray


def joint_slots(inputs: JointInputs, i: int) -> tuple[Slot, Slot]:
    """(q̈ᵢ, τᵢ): each its known value or an Unknown."""
    return (inputs.qdd[i:i + 1] if inputs.accel_known[i] else Unknown(keys.JOINT_ACCEL(i), 1),
            inputs.tau[i:i + 1] if inputs.tau_known[i] else Unknown(keys.JOINT_TORQUE(i), 1))


def wrench_key(source: tuple[bool, int]) -> int:
    """The key of a further wrench on a body (terms.coupled_wrenches)."""
    is_loop, index = source
    return keys.LOOP_WRENCH(index) if is_loop else keys.JOINT_WRENCH(index)


def dynamics_graph(terms: GraphTerms, twists: np.ndarray, inputs: JointInputs, planar: Sequence[int] = (),
                   minimum_torque: bool = False) -> gtsam.GaussianFactorGraph:
    """Factors (5), (6) and (7) of every joint, body and loop joint, the base at rest (V̇₀ = 0; gravity
    is in (6)), and the planar factor on the loop joints ``planar`` (indices into terms.loops).

    ``minimum_torque`` (redundant actuation, §VII): every factor a hard constraint and a unit
    minimum-torque factor τᵢ on each unknown τᵢ, so that QR gives the minimum-norm forces.
    A joint without armature leaves q̈ᵢ out of its torque factor (7), as in the paper's graphs."""
    graph = gtsam.GaussianFactorGraph()
    hard = minimum_torque
    for i, (joint, body) in enumerate(zip(terms.joints, terms.bodies)):
        p = int(terms.parent[i])
        accel = Unknown(keys.BODY_ACCEL(i), 6)
        wrench = Unknown(keys.JOINT_WRENCH(i), 6)
        qdd, tau = joint_slots(inputs, i)
        parent = np.zeros(6) if p < 0 else Unknown(keys.BODY_ACCEL(p), 6)
        graph.add(linear_factor(partial(accel_error, joint), [accel, parent, qdd, twists[i], inputs.qd[i:i + 1]],
                                hard))
        graph.add(linear_factor(partial(wrench_error, body), [wrench, accel, twists[i],
                                *(Unknown(wrench_key(source), 6) for source in coupled_wrenches(terms, i))], hard))
        torque_qdd = qdd if inputs.accel_known[i] or joint.armature != 0.0 else np.zeros(1)
        graph.add(linear_factor(partial(torque_error, joint), [wrench, tau, torque_qdd], hard))
        if minimum_torque and isinstance(tau, Unknown):
            graph.add(linear_factor(min_torque_error, [tau]))
    for k, (loop, ends) in enumerate(zip(terms.loops, terms.loop_ends)):
        side = [(Unknown(keys.BODY_ACCEL(body), 6), twists[body]) if body >= 0 else (np.zeros(6), np.zeros(6))
                for body in ends]
        free = loop.free.shape[1]
        qdd = Unknown(keys.LOOP_ACCEL(k), free) if free else np.zeros(0)
        graph.add(linear_factor(partial(loop_accel_error, loop), [side[0][0], side[1][0], qdd, side[0][1], side[1][1]],
                                hard))
        if free:
            graph.add(linear_factor(partial(loop_torque_error, loop), [Unknown(keys.LOOP_WRENCH(k), 6)], hard))
        if k in planar:
            graph.add(linear_factor(planar_error, [Unknown(keys.LOOP_WRENCH(k), 6)], hard))
    return graph
