"""The known constants of the dynamics factors at a state (q, q̇): each joint's carry, screw,
armature and passive force, each body's inertia, gravity in its axes, applied wrench and the further
wrenches on it (child joints, loop joints), each loop joint's frames and free directions."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from estimator.spatial import lie
from estimator.spatial.kinematics import BodyKinematics, body_kinematics, frame_pose, relative
from estimator.spatial.model import SpatialModel
from estimator.spatial_graph.factors import BodyTerms, JointTerms, LoopJointTerms


@dataclass(frozen=True)
class GraphTerms:
    """The factors' constants of every joint and body of the spanning tree, its parent array, and of
    each loop joint with its bodies (b, a): frame B's, frame A's (−1: the fixed base)."""
    parent: np.ndarray
    joints: tuple[JointTerms, ...]
    bodies: tuple[BodyTerms, ...]
    loops: tuple[LoopJointTerms, ...]
    loop_ends: tuple[tuple[int, int], ...]


FREE = {"revolute": np.eye(6)[:, 2:3], "ball": np.eye(6)[:, :3], "weld": np.zeros((6, 0))}  # in B's axes


def passive_force(model: SpatialModel, i: int, qd: float) -> float:
    """dᵢ q̇ᵢ + μᵢ sign q̇ᵢ, the URDF's damping and Coulomb friction [N·m or N]."""
    return float(model.damping[i] * qd + (math.copysign(model.friction[i], qd) if qd != 0.0 else 0.0))


def loop_terms(model: SpatialModel, kin: BodyKinematics) -> tuple[list[LoopJointTerms], list[tuple[int, int]]]:
    """Each loop joint's constants and bodies (b, a) at the poses of ``kin``. Body a sees the loop
    joint at A's origin in B's axes, as the loop closure Φ = r_A − r_B (estimator.spatial.loops) has
    it: an assembled state's |Φ| of 1e-13 m would otherwise be a lever arm of F_L on body a."""
    terms, ends = [], []
    for loop in model.loops:
        a, b = (model.frame(name) for name in loop.frames)
        turn = frame_pose(model, kin, b.name)[0].T @ frame_pose(model, kin, a.name)[0]
        to_parent = lie.compose((turn, np.zeros(3)), lie.inverse((a.rot, a.pos)))
        terms.append(LoopJointTerms(lie.adjoint(lie.inverse((b.rot, b.pos))), lie.adjoint(to_parent), FREE[loop.type]))
        ends.append((b.body, a.body))
    return terms, ends


def graph_terms(model: SpatialModel, q: np.ndarray, qd: np.ndarray, wrench: np.ndarray | None = None,
                friction: bool = True) -> GraphTerms:
    """The constants at (q, q̇); ``wrench`` (n, 6) the applied body wrenches (default none)."""
    n = model.dof
    kin = body_kinematics(model, q, qd, np.zeros(n))
    carries = [lie.adjoint(lie.inverse(relative(model, i, q[i]))) for i in range(n)]
    joints = tuple(JointTerms(carries[i], model.screw[i], float(model.armature[i]),
                              passive_force(model, i, qd[i]) if friction else 0.0) for i in range(n))
    loops, ends = loop_terms(model, kin)
    applied = np.zeros((n, 6)) if wrench is None else np.asarray(wrench, float)
    joined = GraphTerms(np.asarray(model.parent), joints, (), tuple(loops), tuple(ends))  # the bodies next
    bodies = tuple(BodyTerms(model.inertia[i], kin.rot[i].T @ model.gravity, applied[i],
                             tuple(coupling(joined, i, source) for source in coupled_wrenches(joined, i)))
                   for i in range(n))
    return replace(joined, bodies=bodies)


def coupled_wrenches(terms: GraphTerms, i: int) -> list[tuple[bool, int]]:
    """The further wrenches on body i, in the order of its BodyTerms.couplings: (False, c) for each
    child joint c, then (True, k) for each loop joint k with an end on it."""
    return ([(False, c) for c in range(len(terms.parent)) if terms.parent[c] == i]
            + [(True, k) for k, ends in enumerate(terms.loop_ends) if i in ends])


def coupling(terms: GraphTerms, i: int, source: tuple[bool, int]) -> np.ndarray:
    """P of a further wrench on body i (factors.BodyTerms): a child joint's carry; a loop wrench acts
    on its body b (−Ad_{C_{B,b}}, as −Fᵢ) and its reaction on a (+Ad_{C_{B,a}}, as a child's)."""
    is_loop, index = source
    if not is_loop:
        return terms.joints[index].carry
    loop = terms.loops[index]
    return -loop.to_child if terms.loop_ends[index][0] == i else loop.to_parent
