"""Elimination orderings of a spatial dynamics graph and the structure of their Bayes nets.

Xie and Dellaert §IV–V: on a tree (bodies numbered parents first), with "joint i" the unknown of
joint i (τᵢ or q̈ᵢ),
- RNEA: the joints from the tips, the wrenches from the root, the accelerations from the tips
  (back-substitution is the RNEA's two passes, Algorithm 1);
- CRBA: all wrenches, then all accelerations, then the joints, each from the tips;
- ABA: Fᵢ, V̇ᵢ and joint i for i from the tips to the root;
and GTSAM's fill-reducing COLAMD and METIS (nested dissection), and NATURAL (key order).
"""

from __future__ import annotations

from collections.abc import Callable

import gtsam
import numpy as np

from estimator.errors import MbstateError
from estimator.factors import keys

FILL_REDUCING: dict[str, Callable[[gtsam.GaussianFactorGraph], gtsam.Ordering]] = {
    "COLAMD": gtsam.Ordering.ColamdGaussianFactorGraph, "METIS": gtsam.Ordering.MetisGaussianFactorGraph,
    "NATURAL": gtsam.Ordering.NaturalGaussianFactorGraph}
TREE_ORDERINGS = ("RNEA", "CRBA", "ABA")
ORDERINGS = (*TREE_ORDERINGS, *FILL_REDUCING)


def check_ordering(name: str) -> str:
    """``name`` when it is one of ORDERINGS; MbstateError with one line otherwise."""
    if name not in ORDERINGS:
        raise MbstateError(f"unknown ordering '{name}' (choose from {', '.join(ORDERINGS)})")
    return name


def joint_keys(graph_keys: set[int], i: int) -> list[int]:
    """The keys of joint i's unknowns in the graph (its torque, its acceleration, or both)."""
    return [key for key in (keys.JOINT_TORQUE(i), keys.JOINT_ACCEL(i)) if key in graph_keys]


def tree_sequence(name: str, n: int, graph_keys: set[int]) -> list[int]:
    """The keys in the order of the tree ordering ``name`` over bodies 0..n−1 (parents first)."""
    tips_first, root_first = range(n - 1, -1, -1), range(n)
    joints = [key for i in tips_first for key in joint_keys(graph_keys, i)]
    if name == "RNEA":
        return joints + [keys.JOINT_WRENCH(i) for i in root_first] + [keys.BODY_ACCEL(i) for i in tips_first]
    if name == "CRBA":
        return [keys.JOINT_WRENCH(i) for i in tips_first] + [keys.BODY_ACCEL(i) for i in tips_first] + joints
    return [key for i in tips_first for key in (keys.JOINT_WRENCH(i), keys.BODY_ACCEL(i), *joint_keys(graph_keys, i))]


def ordering(name: str, graph: gtsam.GaussianFactorGraph, n: int, closed: bool = False) -> gtsam.Ordering:
    """The elimination ordering ``name`` (ORDERINGS) of a dynamics graph of n joints, with loop joints
    when ``closed`` (then a tree ordering is refused)."""
    if check_ordering(name) in FILL_REDUCING:
        return FILL_REDUCING[name](graph)
    if closed:
        raise MbstateError(f"ordering {name}: defined on trees (a closed chain: {', '.join(FILL_REDUCING)})")
    out = gtsam.Ordering()
    for key in tree_sequence(name, n, set(graph.keys())):
        out.push_back(key)
    return out


Structure = tuple[tuple[int, tuple[int, ...]], ...]  # per conditional: its frontal key and its parents' keys


def structure(bayes_net: gtsam.GaussianBayesNet) -> Structure:
    """Each conditional's frontal key and the parents it depends on: a parent when its block is not
    zero. GTSAM keeps the separator of a factor that elimination leaves with no rows (an empty
    factor), whose keys then ride into later conditionals with exactly zero blocks: no dependence
    (with them the RNEA ordering of a 3R chain would count 14 edges, not 10)."""
    conditionals = [bayes_net.at(i) for i in range(bayes_net.size())]
    size = {c.firstFrontalKey(): c.R().shape[1] for c in conditionals}
    out = []
    for c in conditionals:
        parents, start, linked = c.S(), 0, []
        for key in list(c.keys())[1:]:
            if np.any(parents[:, start:start + size[key]]):
                linked.append(key)
            start += size[key]
        out.append((c.firstFrontalKey(), tuple(linked)))
    return tuple(out)


def edge_count(bayes_net: gtsam.GaussianBayesNet) -> int:
    """The Bayes net's edges: the parents summed over its conditionals (``structure``)."""
    return sum(len(parents) for _, parents in structure(bayes_net))
