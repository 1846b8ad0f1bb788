"""``mbstate keys``: make a CURVE key pair for the node or for one of its clients (estimator.node.access)."""

from __future__ import annotations

import argparse

from estimator.node.access import make_key_pair


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``keys`` subcommand."""
    parser = subparsers.add_parser(
        "keys", help="make a CURVE key pair (node.curve)",
        description="Write NAME.key (the public key: give it to the peers) and NAME.key_secret (both halves, "
                    "readable by the owner only: keep it) into DIR. The node names its own .key_secret in "
                    "node.curve.secret_key and lists its clients' .key files in the node.curve.clients directory.")
    parser.add_argument("name", metavar="NAME", help="file name of the pair, e.g. node or crank_sensor")
    parser.add_argument("--dir", default=".", metavar="DIR", help="where to write them (default: here)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    public, secret = make_key_pair(args.dir, args.name)
    print(f"public key {public}\nsecret key {secret}")
    return 0
