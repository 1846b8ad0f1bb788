"""``mbstate run``: the online estimator node (estimator.node.runtime) until shutdown or a signal."""

from __future__ import annotations

import argparse
import logging

from estimator.cli.arguments import add_scheduling_options, loop_scheduling
from estimator.node.config import load_node_config
from estimator.node.runtime import Node, with_log_path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run", help="run the online estimator node",
        description="Run the online estimator node of CONFIG: sensor messages in over ZeroMQ (SUB), "
                    "estimates and status out (PUB), commands status / reset / shutdown (REP). "
                    "Ctrl-C or SIGTERM stops it cleanly. configs/estimator/README.md documents CONFIG.")
    parser.add_argument("--config", required=True, metavar="CONFIG.yaml", help="node configuration")
    log = parser.add_mutually_exclusive_group()
    log.add_argument("--log", metavar="PATH", help="record to PATH instead of the configured node.log.path")
    log.add_argument("--no-log", action="store_true", help="do not record")
    parser.add_argument("--quiet", action="store_true", help="log warnings only")
    add_scheduling_options(parser)
    parser.set_defaults(run=run)


def summary_line(status: dict) -> str:
    """One line of a status message's counters and latency."""
    latency = status["latency_ms"]
    return (f"{status['steps']} steps, received {status['received']}, dropped {status['dropped']}, "
            f"late {status['late']}, malformed {status['malformed']}, overruns {status['overruns']}, "
            f"recoveries {status['recoveries']}, latency p50 {latency['p50']:.3f} / p99 {latency['p99']:.3f} / "
            f"max {latency['max']:.3f} ms")


def run(args: argparse.Namespace) -> int:
    """Load the configuration (errors before any socket is opened), serve, print a summary."""
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="mbstate %(message)s")
    scheduling = loop_scheduling(args)
    config = load_node_config(args.config)
    if args.log or args.no_log:
        config = with_log_path(config, None if args.no_log else args.log)
    with Node(config) as node:
        node.run(scheduling)
        print(f"stopped: {summary_line(node.status())}")
    return 0
