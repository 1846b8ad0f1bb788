"""``mbstate bench orderings``: every ordering of the PUMA 560's inverse and forward graphs with its
edges and times beside the classical recursion, and the suite runs alone."""

import json

from estimator.benchmarks.graph_orderings import PROBLEMS, ordering_benchmarks, ordering_table
from estimator.cli import main
from estimator.spatial_graph.orderings import ORDERINGS


def test_results_have_every_problem_and_ordering() -> None:
    results = ordering_benchmarks(repeat=1, calls=1)
    json.dumps(results)
    assert results["robot"] == "puma560"
    for problem in PROBLEMS:
        assert results[problem]["classical_us"] > 0
        for name in ORDERINGS:
            assert results[problem][name]["eliminate_us"] > 0 and results[problem][name]["solve_us"] > 0
    assert results["inverse"]["RNEA"]["edges"] == 22 and results["forward"]["ABA"]["edges"] == 48
    assert len(ordering_table(results).splitlines()) == 3 + len(PROBLEMS) * (len(ORDERINGS) + 1)


def test_orderings_runs_alone(capsys) -> None:
    assert main(["bench", "orderings", "spatial"]) == 2
    err = capsys.readouterr()[1]
    assert "runs alone (not with " in err and len(err.strip().splitlines()) == 1
