"""``--planar-loops`` and ``--explain``, the spatial dynamics graphs' options of ``inverse``,
``forward`` and ``hybrid`` on URDF files (estimator.spatial_graph).

The planar factor is asked for on the command line, not in the sidecar: it belongs to the graph
method alone (the classical KKT solver takes a planar loop's redundant closure rows as they are), and
naming the loops keeps the graph's rank check meaningful: a loop left without it is reported as
rank-deficient, never solved silently."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial.model import SpatialModel
from estimator.spatial_graph.explain import describe
from estimator.spatial_graph.problems import hybrid_dynamics
from estimator.timeseries import Trajectory


def add_spatial_graph_options(parser: argparse.ArgumentParser, explain: str) -> None:
    """Add ``--planar-loops NAME[,NAME...]`` and ``--explain`` (``explain``: when it applies)."""
    parser.add_argument("--planar-loops", default="", metavar="NAME[,NAME...]",
                        help="the factor-graph method on a URDF closed chain: the sidecar loops that are planar "
                             "(over-constrained) and get the planar factor on their wrench")
    parser.add_argument("--explain", action="store_true",
                        help=f"{explain}: print the Bayes net of the ordering (each conditional's frontal variable "
                             "and parents, and the edges) at the first sample")


def checked_planar_loops(args: argparse.Namespace, model: SpatialModel | None, graph: bool) -> list[str]:
    """The ``--planar-loops`` names, both options checked: MbstateError with one line for
    ``--planar-loops`` unless the graph method runs on a URDF closed chain (``model``: None for a planar
    mechanism file), or for ``--explain`` unless it runs on a URDF."""
    names = [name.strip() for name in args.planar_loops.split(",") if name.strip()]
    if names and not (graph and model is not None and model.loops):
        raise MbstateError("--planar-loops: for the factor-graph method on a URDF closed chain")
    if args.explain and not (graph and model is not None):
        raise MbstateError("--explain: for the factor-graph method on a URDF file")
    return names


def explain(args: argparse.Namespace, model: SpatialModel, trajectory: Trajectory, driven: Sequence[int], order: str,
            planar: Sequence[str]) -> None:
    """With ``--explain``, print the Bayes net of the hybrid graph at the trajectory's first state (the
    ``driven`` joints' accelerations given, the other joints' forces zero: inverse dynamics when all
    are driven, free motion when none)."""
    if not args.explain:
        return
    known = np.zeros(model.dof, bool)
    known[list(driven)] = True
    solution = hybrid_dynamics(model, trajectory.q[0], trajectory.qd[0], trajectory.qdd[0], np.zeros(model.dof), known,
                               order, planar=planar)
    print(describe(model, solution.structure, order))
