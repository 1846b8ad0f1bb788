"""A dynamics graph's Bayes net in readable names (``--explain``): per conditional its frontal variable
and the parents it depends on (Xie and Dellaert §III; orderings.structure), and the edges, the parents
summed over the conditionals. The conditionals come in the Bayes net's order: GTSAM eliminates along
the ordering's elimination tree, an order with the same conditionals as the ordering's."""

from __future__ import annotations

import gtsam

from estimator.factors import keys
from estimator.spatial.model import SpatialModel
from estimator.spatial_graph.orderings import Structure

PATTERNS = ((keys.BODY_ACCEL, "accel[{}]", False), (keys.JOINT_WRENCH, "wrench[{}]", False),
            (keys.JOINT_ACCEL, "qdd[{}]", False), (keys.JOINT_TORQUE, "tau[{}]", False),
            (keys.LOOP_WRENCH, "loop_wrench[{}]", True), (keys.LOOP_ACCEL, "loop_qdd[{}]", True))
NAMES = {gtsam.Symbol(make(0)).chr(): (pattern, loop) for make, pattern, loop in PATTERNS}  # symbol -> name, loop?


def key_name(model: SpatialModel, key: int) -> str:
    """accel[joint] (V̇ of the joint's body), wrench[joint], qdd[joint], tau[joint], loop_wrench[loop]
    or loop_qdd[loop]: the keys of estimator.factors.keys, named by URDF joint or sidecar loop."""
    symbol = gtsam.Symbol(key)
    pattern, loop = NAMES[symbol.chr()]
    names = [item.name for item in model.loops] if loop else model.joint_names
    return pattern.format(names[symbol.index()])


def describe(model: SpatialModel, structure: Structure, order: str) -> str:
    """The Bayes net as text: a header with its conditionals and edges, then one line per conditional,
    ``frontal <- parent, parent`` (a root: no arrow)."""
    edges = sum(len(parents) for _, parents in structure)
    lines = [f"Bayes net of the {order} ordering: {len(structure)} conditionals, {edges} edges "
             "(frontal <- parents)"]
    for frontal, parents in structure:
        arrow = " <- " + ", ".join(key_name(model, key) for key in parents) if parents else ""
        lines.append(f"  {key_name(model, frontal)}{arrow}")
    return "\n".join(lines)

