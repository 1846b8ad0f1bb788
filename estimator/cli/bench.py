"""``mbstate bench``: benchmark figures (time per step) for the solvers, with the machine and date;
``mbstate bench accuracy``: the estimator's accuracy matrix (estimator.benchmarks.accuracy);
``mbstate bench spatial``: spatial dynamics per call against Pinocchio (estimator.benchmarks.spatial);
``mbstate bench orderings``: the spatial dynamics graphs' elimination orderings on the PUMA 560
(estimator.benchmarks.graph_orderings); ``mbstate bench contact``: contact detection and the tool wrench on
the Panda, each estimator kind side by side (estimator.benchmarks.contact); ``mbstate bench view``: the live
view's cost to the node (estimator.benchmarks.view)."""

from __future__ import annotations

import argparse
import json

from estimator.argument_types import simulated_duration
from estimator.benchmarks import machine
from estimator.benchmarks.accuracy import MOTIONS, accuracy_matrix
from estimator.benchmarks.contact import DURATION as CONTACT_DURATION
from estimator.benchmarks.contact import print_contact
from estimator.benchmarks.classical import forward_benchmarks, inverse_benchmarks
from estimator.benchmarks.fg_forward import fg_forward_benchmarks
from estimator.benchmarks.fg_inverse import fg_inverse_benchmarks
from estimator.benchmarks.graph_orderings import ordering_benchmarks, ordering_table
from estimator.benchmarks.node import node_benchmarks
from estimator.benchmarks.spatial import spatial_benchmarks, spatial_table
from estimator.benchmarks.view import view_cost, view_table
from estimator.cli.arguments import add_scheduling_options, loop_scheduling
from estimator.errors import MbstateError
from estimator.online.config import KINDS

SUITES = {"forward": forward_benchmarks, "inverse": inverse_benchmarks, "fg-forward": fg_forward_benchmarks,
          "fg-inverse": fg_inverse_benchmarks, "node": node_benchmarks}
ACCURACY = "accuracy"
SPATIAL = "spatial"
ORDERINGS = "orderings"
CONTACT = "contact"
CONTACT_KINDS = ("momentum_observer",)  # the default methods of the contact benchmark
VIEW = "view"
VIEW_DURATION = 10.0  # [s] of sensor time per demo
ALONE = {SPATIAL: (spatial_benchmarks, spatial_table), ORDERINGS: (ordering_benchmarks, ordering_table)}
ACCURACY_DURATION = 5.0  # [s] of sensor time per cell


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="time per step of the solvers; the estimator's accuracy matrix",
        description="Run benchmark suites (compilation excluded; median of repeats) and print µs per step. "
                    f"'{ACCURACY}' runs the estimator's accuracy matrix instead (mechanisms × sensor sets × "
                    "motions, configs/bench/accuracy.yaml): errors against the simulation, latency, smoother "
                    "failures.")
    parser.add_argument("suites", nargs="*", choices=[*SUITES, ACCURACY, CONTACT, *ALONE, VIEW, []], metavar="SUITE",
                        help=f"suites to run (default: all of {', '.join(SUITES)}), or {ACCURACY} alone, or "
                             f"{SPATIAL} alone (µs per call of RNEA, ABA, CRBA and RNEA derivatives on URDF arms "
                             f"and chains, beside Pinocchio's when pin is installed), or {ORDERINGS} alone (the "
                             "dynamics graphs' orderings on the PUMA 560: edges and µs per solve, beside the "
                             f"classical recursions), or {CONTACT} alone (contact detection delay, false alarms and "
                             "tool-wrench RMSE on the Panda with encoders and joint torque sensors, exact model and "
                             f"masses 10 %% off, per estimator kind), or {VIEW} alone (the live view's cost to the node: "
                             "mbstate demo without a view, with one, with its page in headless chromium; "
                             "--repeat rounds, --duration per demo, --priority / --cpu: the same again with "
                             "the node loop's)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repeats per case (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    group = parser.add_argument_group(f"{ACCURACY} (every cell by default)")
    group.add_argument("--duration", type=simulated_duration, metavar="S",
                       help=f"sensor time per cell [s] (default {ACCURACY_DURATION:g}; a drive trajectory may "
                            f"end earlier); {CONTACT}: of each run (default {CONTACT_DURATION:g}); "
                            f"{VIEW}: per demo (default {VIEW_DURATION:g})")
    group.add_argument("--mechanism", nargs="+", action="extend", metavar="NAME", help="only these mechanisms")
    group.add_argument("--set", nargs="+", action="extend", metavar="SET",
                       help="only these sensor sets (a encoders, b encoders and gyroscopes, c IMU, d all; an arm's "
                            "enc, imu, tau, ft: joint encoders, and link IMUs, joint torque or wrist force-torque "
                            "sensors)")
    group.add_argument("--motion", nargs="+", action="extend", choices=MOTIONS, help="only these motions")
    group.add_argument("--estimator", metavar="CONFIG.yaml",
                       help="a node configuration whose estimator settings every cell uses instead of the "
                            "matrix's (configs/bench/README.md)")
    group.add_argument("--defaults", action="store_true",
                       help="the estimator a user gets: the defaults but for the rate, the lag and the unknown "
                            "forces, started from the file's configuration and the readings")
    parser.add_argument("--kinds", nargs="+", action="extend", choices=KINDS, metavar="KIND",
                        help=f"{CONTACT}: the estimator kinds compared (default {' '.join(CONTACT_KINDS)}; of "
                             f"{', '.join(KINDS)})")
    add_scheduling_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    accuracy_options = [f"--{name}" for name in ("duration", "mechanism", "set", "motion", "estimator")
                        if getattr(args, name) is not None] + ["--defaults"] * args.defaults
    if (args.priority is not None or args.cpu) and VIEW not in args.suites:
        raise MbstateError(f"--priority, --cpu: only for the {VIEW} suite")
    if CONTACT in args.suites:
        others = [s for s in args.suites if s != CONTACT] + [
            f"--{name}" for name in ("mechanism", "set", "motion", "estimator") if getattr(args, name) is not None]
        if others or args.defaults:
            raise MbstateError(f"{CONTACT} runs alone (not with {', '.join(others + ['--defaults'] * args.defaults)})")
        print_contact(args.kinds or CONTACT_KINDS, args.duration or CONTACT_DURATION, args.json)
        return 0
    if args.kinds:
        raise MbstateError(f"--kinds: only for the {CONTACT} suite")
    if VIEW in args.suites:
        if len(args.suites) > 1:
            raise MbstateError(f"{VIEW} runs alone (not with {', '.join(s for s in args.suites if s != VIEW)})")
        if others := [option for option in accuracy_options if option != "--duration"]:
            raise MbstateError(f"{', '.join(others)}: only for the {ACCURACY} suite")
        loop_scheduling(args)  # checked here, once
        node_options = [*(["--priority", str(args.priority)] if args.priority is not None else []),
                        *(["--cpu", ",".join(map(str, sorted(args.cpu)))] if args.cpu else [])]
        result = view_cost(max(1, args.repeat), args.duration or VIEW_DURATION, node_options)
        print(json.dumps(result, indent=2) if args.json else view_table(result))
        return 0
    if ACCURACY in args.suites:
        if len(args.suites) > 1:
            others = ", ".join(s for s in args.suites if s != ACCURACY)
            raise MbstateError(f"{ACCURACY} runs alone (not with {others})")
        accuracy_matrix(args.duration or ACCURACY_DURATION, args.mechanism or (), args.set or (), args.motion or (),
                        as_json=args.json, estimator=args.estimator, defaults=args.defaults)
        return 0
    if accuracy_options:
        raise MbstateError(f"{', '.join(accuracy_options)}: only for the {ACCURACY} suite")
    for alone, (benchmarks, table) in ALONE.items():
        if alone in args.suites:
            if len(args.suites) > 1:
                raise MbstateError(f"{alone} runs alone (not with {', '.join(s for s in args.suites if s != alone)})")
            results = benchmarks(repeat=max(1, args.repeat))
            print(json.dumps(results, indent=2) if args.json else table(results))
            return 0
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
