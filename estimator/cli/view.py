"""``mbstate view``: the live view of a running node, a page served on loopback (estimator.view, docs/view.md)."""

from __future__ import annotations

import argparse
import sys

from estimator.argument_types import positive_float
from estimator.cli.arguments import add_curve_options, client_keys
from estimator.errors import MbstateError
from estimator.node.config import load_node_config
from estimator.view.run import ViewParams, serve

MAX_RATE_HZ = 60.0  # frames per second: more than a screen shows


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``view`` subcommand."""
    parser = subparsers.add_parser(
        "view", help="watch a running node in a browser",
        description="Serve a page on loopback that draws a running node's estimates: the mechanism, chosen "
                    "coordinates and forces over a sliding window with their ±2σ bands (when the estimator "
                    "publishes σ), the readings of sensors that also connect to --readings, and the node's "
                    "health. Prints the page's URL on a line of its own; Ctrl-C stops it.")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="the node's configuration (its mechanism, its node.pub endpoint, node.curve)")
    parser.add_argument("--endpoint", help="the node's output, instead of the configuration's node.pub")
    parser.add_argument("--readings", metavar="ENDPOINT",
                        help="bind this endpoint for sensor messages (sensors connect to it as to the node)")
    parser.add_argument("--series", metavar="NAMES",
                        help="comma-separated coordinates and actuators to plot, an actuator named as a coordinate as "
                             "Q.NAME (default: the angles, the actuators)")
    parser.add_argument("--host", default="127.0.0.1", help="address the page is served on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port of the page (default 0: a free one)")
    parser.add_argument("--rate", type=positive_float, default=10.0, metavar="HZ",
                        help=f"frames per second sent to the page (default 10, at most {MAX_RATE_HZ:g})")
    parser.add_argument("--window", type=positive_float, default=10.0, metavar="S",
                        help="the series' sliding window [s of sensor time] (default 10)")
    add_curve_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.rate > MAX_RATE_HZ:
        raise MbstateError(f"--rate: at most {MAX_RATE_HZ:g} frames per second, got {args.rate:g}")
    if not 0 <= args.port <= 65535:
        raise MbstateError(f"--port: 0 to 65535, got {args.port}")
    client_keys(args)
    config = load_node_config(args.config)
    endpoint = args.endpoint or config.node.pub
    if endpoint.endswith(":*"):
        raise MbstateError(f"{config.source}: node.pub {endpoint} is a free port: give the bound one with --endpoint")
    series = tuple(name.strip() for name in args.series.split(",")) if args.series else ()
    serve(ViewParams(mechanism=str(config.mechanism_path), endpoint=endpoint, host=args.host, port=args.port,
                     rate=args.rate, window_s=args.window, series=series, readings=args.readings,
                     curve_key=args.curve_key, server_key=args.server_key),
          lambda url: print(url, flush=True))
    return 0
