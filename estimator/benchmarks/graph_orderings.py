"""The elimination orderings of the spatial dynamics graphs on the PUMA 560 (Xie and Dellaert,
Tables I–II): per ordering, the Bayes net's edges and the time of one solve, beside the classical
recursion (RNEA for inverse, ABA for forward dynamics) in the same run.

Two times per ordering: ``eliminate_us``, QR elimination and back-substitution of a graph already
built in an ordering already computed (a robot's structure is fixed), which is what the orderings
change; ``solve_us``, the whole call from (q, q̇, …): the graph's construction in Python, the
ordering (computed for COLAMD and METIS) and the refinement step (estimator.spatial_graph.solve)
included. Each is the least over repeats of the mean over ``calls`` calls (benchmarks.spatial.per_call).
"""

from __future__ import annotations

import numpy as np

from estimator.benchmarks import CONFIGS, machine
from estimator.benchmarks.spatial import per_call
from estimator.spatial.dynamics import forward_dynamics, inverse_dynamics, workspace
from estimator.spatial.model import load_spatial
from estimator.spatial_graph.orderings import ORDERINGS, edge_count, ordering
from estimator.spatial_graph.problems import hybrid_dynamics, hybrid_graph
from estimator.spatial_graph.solve import eliminate

ROBOT = "puma560"
PROBLEMS = ("inverse", "forward")
BASELINES = {"inverse": "RNEA", "forward": "ABA"}  # the ordering each fill-reducing one is compared with


def ordering_benchmarks(repeat: int = 3, calls: int = 200) -> dict:
    """{"machine", "robot", problem: {"classical_us": …, ordering: {"edges", "eliminate_us", "solve_us"}}}."""
    model = load_spatial(CONFIGS / "urdf" / f"{ROBOT}.urdf")
    q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, model.dof))
    work = workspace(model)
    tau = inverse_dynamics(model, q, qd, qdd, work=work)
    out: dict = {"machine": machine(), "robot": ROBOT}
    for problem in PROBLEMS:
        known = np.full(model.dof, problem == "inverse")
        graph = hybrid_graph(model, q, qd, qdd, tau, known)
        classical = ((lambda: inverse_dynamics(model, q, qd, qdd, work=work)) if problem == "inverse"
                     else (lambda: forward_dynamics(model, q, qd, tau, work=work)))
        out[problem] = {"classical_us": per_call(calls, repeat, classical)[0]}
        for name in ORDERINGS:
            order = ordering(name, graph, model.dof)
            eliminate_us, solve_us = per_call(calls, repeat, lambda: eliminate(graph, order).optimize(),
                                              lambda: hybrid_dynamics(model, q, qd, qdd, tau, known, name))
            out[problem][name] = {"edges": edge_count(eliminate(graph, order)), "eliminate_us": eliminate_us,
                                  "solve_us": solve_us}
    return out


def ordering_table(results: dict) -> str:
    """The results as text: one line per problem and ordering, with each ordering's elimination time
    relative to the baseline ordering (RNEA for inverse, ABA for forward dynamics)."""
    lines = [results["machine"], "", f"{results['robot']}: {'problem':<8} {'ordering':<9} {'edges':>5} "
             f"{'eliminate µs':>12} {'solve µs':>9} {'baseline/this':>13}"]
    for problem in PROBLEMS:
        figures = results[problem]
        base = figures[BASELINES[problem]]["eliminate_us"]
        for name in ORDERINGS:
            row = figures[name]
            lines.append(f"{'':<{len(results['robot']) + 1}} {problem:<8} {name:<9} {row['edges']:5d} "
                         f"{row['eliminate_us']:12.1f} {row['solve_us']:9.1f} {base / row['eliminate_us']:13.2f}")
        lines.append(f"{'':<{len(results['robot']) + 1}} {problem:<8} {'classical':<9} {'':>5} "
                     f"{figures['classical_us']:12.1f} {figures['classical_us']:9.1f} {'':>13}")
    return "\n".join(lines)
