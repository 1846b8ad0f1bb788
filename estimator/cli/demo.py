"""``mbstate demo``: virtual sensors of a machine (the four-bar, the Panda arm with ``--mechanism panda`` or
the Delta robot with ``--mechanism delta``) and a subscriber in a second process, the node in this one, on loopback (estimator.demo.run); progress
on stderr, the summary on stdout."""

from __future__ import annotations

import argparse
import json
import sys

from estimator.argument_types import simulated_duration
from estimator.cli.arguments import add_scheduling_options, loop_scheduling
from estimator.demo.cases import CASES
from estimator.demo.run import run_demo, summary_text


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo", help="run the estimator node on a simulated machine and summarize",
        description="Simulate a machine (the four-bar with a driven crank, the Panda arm or the Delta robot), publish its virtual "
                    "sensors at real time from a second process to the online estimator node running in this one "
                    "on loopback, collect the estimates with a subscriber and print the node's latency, the errors "
                    "against the simulation's truth and the message counts.")
    parser.add_argument("--mechanism", choices=sorted(CASES), default="fourbar",
                        help="the machine: fourbar (a crank encoder, a coupler IMU, a load cell; the crank torque "
                             "estimated), panda (seven joint encoders; the seven drive torques estimated) or delta (a "
                             "closed chain: three motor encoders and a platform IMU; the three motor torques "
                             "estimated); default fourbar")
    parser.add_argument("--duration", type=simulated_duration, default=5.0,
                        help="simulated seconds (default 5, at most 600)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sensor noise (default 0)")
    parser.add_argument("--json", action="store_true", help="the summary as one JSON object")
    parser.add_argument("--curve", action="store_true",
                        help="the node and the sensor process use CURVE (node.curve), with key pairs made for the run")
    parser.add_argument("--sigmas", action="store_true",
                        help="the estimator publishes σ with every estimate (publish_sigmas; the view's bands)")
    parser.add_argument("--view", action="store_true",
                        help="watch it live: serve the view (mbstate view) on 127.0.0.1 and print its URL on a line "
                             "of its own (on stderr with --json)")
    add_scheduling_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    url_stream = sys.stderr if args.json else sys.stdout
    summary = run_demo(args.duration, args.seed, curve=args.curve, sigmas=args.sigmas, mechanism=args.mechanism,
                       scheduling=loop_scheduling(args),
                       progress=lambda text: print(f"mbstate demo: {text}", file=sys.stderr, flush=True),
                       view=(lambda url: print(url, file=url_stream, flush=True)) if args.view else None)
    print(json.dumps(summary) if args.json else summary_text(summary))
    return 130 if summary["interrupted"] else 0  # 130: as the shell reports an interrupted command
