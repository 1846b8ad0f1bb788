"""``mbstate bench``: benchmark figures (time per step) for the solvers, with the machine and date."""

from __future__ import annotations

import argparse
import json

from estimator.benchmarks import machine
from estimator.benchmarks.classical import forward_benchmarks, inverse_benchmarks
from estimator.benchmarks.fg_forward import fg_forward_benchmarks
from estimator.benchmarks.fg_inverse import fg_inverse_benchmarks
from estimator.benchmarks.node import node_benchmarks

SUITES = {"forward": forward_benchmarks, "inverse": inverse_benchmarks, "fg-forward": fg_forward_benchmarks,
          "fg-inverse": fg_inverse_benchmarks, "node": node_benchmarks}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="time per step of the solvers",
        description="Run benchmark suites (compilation excluded; median of repeats) and print µs per step.")
    parser.add_argument("suites", nargs="*", choices=[*SUITES, []], metavar="SUITE",
                        help=f"suites to run (default: all of {', '.join(SUITES)})")
    parser.add_argument("--repeat", type=int, default=3, help="timed repeats per case (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    results = {name: SUITES[name](repeat=max(1, args.repeat)) for name in (args.suites or SUITES)}
    if args.json:
        print(json.dumps({"machine": machine(), **{name: [t.__dict__ for t in timings]
                                                   for name, timings in results.items()}}, indent=2))
        return 0
    print(machine())
    for name, timings in results.items():
        print(f"\n{name}: µs per step or point (median of {max(1, args.repeat)}, min-max)")
        for t in timings:
            print(f"  {t.case:<44} {t.per_step * 1e6:9.2f}   ({t.fastest * 1e6:.2f}-{t.slowest * 1e6:.2f}), "
                  f"{t.steps} steps{'; ' + t.note if t.note else ''}")
    return 0
