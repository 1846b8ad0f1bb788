"""``mbstate publish``: re-publish a log's sensor messages over ZeroMQ at real time (replay.publish)."""

from __future__ import annotations

import argparse

from estimator.cli.arguments import positive_float
from estimator.node.config import NodeParams
from replay.publish import Command, log_messages, publish


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``publish`` subcommand."""
    parser = subparsers.add_parser(
        "publish", help="re-publish a log's sensor messages to a running node",
        description="Send every sensor message recorded in LOG (malformed ones too) to ENDPOINT, paced by "
                    "their stamps, from a PUB socket connected to the node's input, and every reset the "
                    "recording node carried out to the node's control socket, in its place (once the node "
                    "has received the messages before it). Waits for the node to be there first.")
    parser.add_argument("log", metavar="LOG", help="log recorded by mbstate run or mbstate simulate")
    parser.add_argument("--endpoint", default=NodeParams.sub, help=f"the node's input (default {NodeParams.sub})")
    parser.add_argument("--control", default=NodeParams.control,
                        help=f"the node's control socket, for the log's resets (default {NodeParams.control})")
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument("--speed", type=positive_float, default=1.0, help="times real time (default 1)")
    pace.add_argument("--fast", action="store_true", help="as fast as possible")
    parser.add_argument("--wait", type=positive_float, default=5.0, help="seconds to wait for the node (default 5)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    messages = log_messages(args.log)
    sent = publish(messages, args.endpoint, speed=None if args.fast else args.speed, wait_s=args.wait,
                   control=args.control)
    commands = sum(isinstance(m, Command) for m in messages)
    print(f"published {sent} messages to {args.endpoint}" + (f"; control commands to {args.control}: {commands}"
                                                                 * bool(commands)))
    return 0
