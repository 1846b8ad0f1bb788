"""``mbstate echo``: print the estimates and status messages a node publishes."""

from __future__ import annotations

import argparse
import json
import math
import sys

import zmq

from estimator.argument_types import positive_float
from estimator.cli.arguments import add_curve_options, client_keys
from estimator.cli.run import summary_line
from estimator.errors import MbstateError
from estimator.node.client import Handshake
from estimator.node.config import NodeParams
from estimator.node.publishing import UNPACK_ERRORS, unpack


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``echo`` subcommand."""
    parser = subparsers.add_parser(
        "echo", help="print what a node publishes",
        description="Subscribe to a node's PUB endpoint and print each estimate on one line "
                    "(t, q, qd, forces, latency, flags) and each status message as a summary.")
    parser.add_argument("--endpoint", default=NodeParams.pub, help=f"the node's output (default {NodeParams.pub})")
    parser.add_argument("--count", type=int, metavar="N", help="stop after printing N estimates")
    parser.add_argument("--every", type=int, default=1, metavar="N", help="print every N-th estimate (default 1)")
    parser.add_argument("--status", action="store_true", help="status messages only")
    parser.add_argument("--json", action="store_true", help="each message as one JSON line")
    parser.add_argument("--timeout", type=positive_float, metavar="S",
                        help="give up after S seconds without a message (exit 2)")
    add_curve_options(parser)
    parser.set_defaults(run=run)


def _vector(values: list) -> str:
    return "[" + " ".join(f"{v:.6g}" for v in values) + "]"


def estimate_line(message: dict) -> str:
    """One line of an estimate message."""
    forces = " ".join(f"{name}={value:.6g}" for name, value in message["forces"].items())
    flags = f" [{','.join(message['flags'])}]" if message["flags"] else ""
    return (f"t={message['t']:.6f} q={_vector(message['q'])} qd={_vector(message['qd'])} {forces} "
            f"latency={message['latency_ms']:.3f}ms{flags}")


def _json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def run(args: argparse.Namespace) -> int:
    if (args.count is not None and args.count < 1) or args.every < 1:
        raise MbstateError("--count and --every must be at least 1")
    keys = client_keys(args)
    context = zmq.Context()
    try:
        socket = context.socket(zmq.SUB)
        socket.setsockopt(zmq.LINGER, 0)
        socket.subscribe(b"")
        handshake = Handshake(socket, args.endpoint, keys)
        estimates = printed = 0
        while args.count is None or printed < args.count:
            if not handshake.poll(args.timeout):
                raise MbstateError(f"no message from {args.endpoint} within {args.timeout:g} s")
            try:
                message = unpack(socket.recv())
            except UNPACK_ERRORS:
                continue
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "estimate":
                estimates += 1
                if args.status or (estimates - 1) % args.every:
                    continue
                printed += 1
            elif kind != "status":
                continue
            if args.json:
                print(json.dumps(_json_safe(message)))
            else:
                print(estimate_line(message) if kind == "estimate" else f"status {message['state']}: "
                      f"{summary_line(message)}")
            sys.stdout.flush()
        return 0
    finally:
        context.destroy()
