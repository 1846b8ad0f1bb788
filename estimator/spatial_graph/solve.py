"""The solution of a linear dynamics graph: QR elimination in an ordering into a Bayes net (Xie and
Dellaert §III), back-substitution, and one step of iterative refinement.

Refinement: with x the back-substituted solution, the graph of the same Jacobians with right-hand
sides b − A x (each factor's residual, its noise model kept) is eliminated in the same ordering and its
solution δ added, x + δ. The graphs are linear, so x + δ solves the original graph in exact arithmetic
whatever x; in floating point it removes the part of QR's backward error that a closed chain's light
bodies (a Delta rod's spin inertia against loop wrenches of tens of newtons) amplify.
"""

from __future__ import annotations

from dataclasses import dataclass

import gtsam
import numpy as np

from estimator.errors import MbstateError
from estimator.factors.native import LinearRelation


def eliminate(graph: gtsam.GaussianFactorGraph, order: gtsam.Ordering) -> gtsam.GaussianBayesNet:
    """The Bayes net of QR elimination; MbstateError with one line when GTSAM refuses."""
    try:
        return graph.eliminateSequential(order, gtsam.EliminateQR)
    except RuntimeError as exc:
        reason = next((line.strip() for line in str(exc).splitlines() if line.strip()), "solver failure")
        raise MbstateError(f"factor graph: {reason}") from None


def residual_graph(graph: gtsam.GaussianFactorGraph, values: gtsam.VectorValues) -> gtsam.GaussianFactorGraph:
    """The graph's factors A x − b with b replaced by the residual b − A x at ``values``."""
    out = gtsam.GaussianFactorGraph()
    for i in range(graph.size()):
        factor = graph.at(i)
        factor_keys = list(factor.keys())
        matrix, rhs = factor.jacobianUnweighted()
        point = np.concatenate([values.at(key) for key in factor_keys])
        ends = np.cumsum([0] + [values.at(key).size for key in factor_keys])
        blocks = [matrix[:, start:end] for start, end in zip(ends[:-1], ends[1:])]
        out.add(LinearRelation.of_blocks(factor.get_model(), blocks, rhs - matrix @ point).jacobian(factor_keys))
    return out


@dataclass(frozen=True)
class Solved:
    """The Bayes net of the graph in its ordering and the refined solution."""
    bayes_net: gtsam.GaussianBayesNet
    values: gtsam.VectorValues


def solve(graph: gtsam.GaussianFactorGraph, order: gtsam.Ordering) -> Solved:
    """The graph eliminated in ``order`` and solved, with one step of refinement."""
    bayes_net = eliminate(graph, order)
    values = bayes_net.optimize()
    correction = eliminate(residual_graph(graph, values), order).optimize()
    return Solved(bayes_net, values.add(correction))
