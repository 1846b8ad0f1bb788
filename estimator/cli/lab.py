"""``mbstate lab SUITE.yaml``: scenarios × sensor sets × estimators × seeds on Dask, the RMSE table and an
HTML report (replay.lab; the suite format in configs/lab/README.md)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from estimator.argument_types import simulated_duration
from estimator.benchmarks import machine
from estimator.errors import MbstateError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lab", help="estimators side by side on simulated scenarios with model errors: RMSE table and report",
        description="Simulate every scenario of SUITE (the truth, readings from it, the estimator given a model "
                    "with errors) for each sensor set, estimator and seed, on Dask distributed (a local cluster "
                    "of worker processes, or --scheduler); print the RMSE table of q, q̇, q̈ and forces (whole "
                    "run and after the suite's `after`) with the cost per step, and write an HTML report with "
                    "plots to --out.")
    parser.add_argument("suite", metavar="SUITE.yaml", help="lab suite (configs/lab/README.md)")
    parser.add_argument("--out", metavar="DIR", help="report directory (default: lab-<suite name>)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster (default 2)")
    parser.add_argument("--duration", type=simulated_duration, metavar="S", help="simulated time per cell [s] "
                                                                           "(default: the suite's)")
    parser.add_argument("--scenario", nargs="+", action="extend", metavar="NAME", help="only these scenarios")
    parser.add_argument("--estimator", nargs="+", action="extend", metavar="NAME", help="only these estimators")
    parser.add_argument("--json", action="store_true", help="print the table as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from replay.lab.report import markdown_table, rows, write_report
    from replay.lab.runner import run_cells
    from replay.lab.suite import load_suite

    if args.workers < 1:
        raise MbstateError(f"--workers: must be at least 1, got {args.workers}")
    suite = load_suite(args.suite)
    cells = suite.cells(args.scenario or (), args.estimator or ())
    results = run_cells(suite.source, cells, args.duration, args.workers, args.scheduler, not args.quiet)
    table = rows(suite, results)
    duration = args.duration or suite.duration
    header = (f"{len(cells)} cells of {duration:g} s, seeds {', '.join(map(str, suite.seeds))}; RMSE over the whole "
              f"run (start included) and from {suite.after:g} s on, mean over the seeds; cost per step measured "
              f"under load; {machine()}")
    out = Path(args.out or f"lab-{Path(args.suite).stem}")
    page = write_report(suite, results, table, out, header)
    if args.json:
        print(json.dumps({"header": header, "report": str(page), "rows": [_plain(row.__dict__) for row in table]},
                         indent=2))
        return 0
    print(header)
    print(markdown_table(suite, table))
    for r in results:
        if r.error is not None:
            print(f"error: {r.cell.label()}: {r.error}")
    print(f"report: {page}")
    return 0


def _plain(value: Any) -> Any:
    """JSON-ready: NaN (nothing scored) becomes null."""
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    return None if isinstance(value, float) and math.isnan(value) else value
