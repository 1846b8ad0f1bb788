"""``mbstate publish``: re-publish a log's sensor messages over ZeroMQ at real time (replay.publish)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from estimator.argument_types import positive_float
from estimator.cli.arguments import add_curve_options, client_keys
from estimator.node.config import NodeParams
from replay.publish import Command, has_commands, log_messages, publish


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``publish`` subcommand."""
    parser = subparsers.add_parser(
        "publish", help="re-publish a log's sensor messages to a running node",
        description="Send every sensor message recorded in LOG (malformed ones too) to ENDPOINT, paced by "
                    "their stamps, from a PUB socket connected to the node's input, and every reset the "
                    "recording node carried out to the node's control socket, in its place (once the node "
                    "has received the messages before it). Waits for the node to be there first.")
    parser.add_argument("log", nargs="+", metavar="LOG",
                        help="log recorded by mbstate run or mbstate simulate; several files or a folder (a rotated "
                             "recording) are sent in order as one stream")
    parser.add_argument("--endpoint", default=NodeParams.sub, help=f"the node's input (default {NodeParams.sub})")
    parser.add_argument("--control", default=NodeParams.control,
                        help=f"the node's control socket, for the log's resets (default {NodeParams.control}); the "
                             f"log is read once first to find them")
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument("--speed", type=positive_float, default=1.0, help="times real time (default 1)")
    pace.add_argument("--fast", action="store_true",
                      help="as fast as possible (a node with node.max_lag_s skips what it cannot keep up with: "
                           "null has it estimate every message)")
    parser.add_argument("--wait", type=positive_float, default=5.0, help="seconds to wait for the node (default 5)")
    add_curve_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    keys = client_keys(args)
    commands = []

    def counted(messages: Iterator[Any]) -> Iterator[Any]:
        for message in messages:
            if isinstance(message, Command):
                commands.append(message)
            yield message

    messages = counted(log_messages(args.log, lambda line: print(line, file=sys.stderr)))
    sent = publish(messages, args.endpoint, speed=None if args.fast else args.speed, wait_s=args.wait,
                   control=args.control if has_commands(args.log) else None, keys=keys)
    print(f"published {sent} messages to {args.endpoint}" + (f"; control commands to {args.control}: "
                                                             f"{len(commands)}" * bool(commands)))
    return 0
