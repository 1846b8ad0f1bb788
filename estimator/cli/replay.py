"""``mbstate replay``: a recorded log through the node's estimator path, without sockets (replay.replay)."""

from __future__ import annotations

import argparse
import sys
import time

from estimator.cli.run import summary_line
from estimator.node.config import load_node_config
from estimator.timeseries import write_csv
from replay.replay import estimates_trajectory, replay

BAR = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay", help="run a recorded log through the estimator, write the estimates",
        description="Feed every message LOG recorded, and the node's resets, in recorded order through "
                    "the same per-message path as the live node (same validation, counters and estimator) "
                    "and write the estimates as CSV (t, q.*, qd.*, qdd.*, Q.<actuator coordinate>, lambda.*). "
                    "Deterministic by default: the estimator never degrades under load, so the same LOG and "
                    "CONFIG give the same CSV, byte for byte (the steps' wall time is still measured for the "
                    "summary). LOG must be recorded for CONFIG's mechanism and sensors (its header is "
                    "checked); other model parameters are allowed, with a note.")
    parser.add_argument("log", metavar="LOG", help="log recorded by mbstate run or mbstate simulate")
    parser.add_argument("--config", required=True, metavar="CONFIG.yaml", help="node configuration")
    parser.add_argument("--out", required=True, metavar="EST.csv", help="estimates (CSV)")
    parser.add_argument("--realtime", action="store_true",
                        help="at the pace of the stamps, not as fast as possible, and timed by the wall clock as "
                             "on a live node: the estimator degrades when steps run over budget, so the "
                             "estimates depend on the machine's load")
    parser.add_argument("--as-recorded", action="store_true",
                        help="time the steps as the node's log recorded them (its estimate records), so that "
                             "the estimator degrades as it did live and gives the live estimates")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


class ProgressBar:
    """``[#####.....]  45%  1234/2740`` on stderr, redrawn at most every 0.1 s and at the end."""

    def __init__(self) -> None:
        self._drawn = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._drawn < 0.1:
            return
        self._drawn = now
        filled = BAR * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {100 * done // max(total, 1):3d}%  {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    config = load_node_config(args.config)
    result = replay(args.log, config, realtime=args.realtime, progress=None if args.quiet else ProgressBar(),
                    as_recorded=args.as_recorded, note=lambda line: print(line, file=sys.stderr))
    write_csv(args.out, estimates_trajectory(config.mech, result.estimates))
    print(f"replayed: {summary_line(result.status)}")
    print(f"written: {args.out}")
    return 0
