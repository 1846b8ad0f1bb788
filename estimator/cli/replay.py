"""``mbstate replay``: a recorded log through the node's estimator path, without sockets (replay.replay)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from estimator.cli.run import summary_line
from estimator.model_protocol import Model
from estimator.node.config import load_node_config
from estimator.timeseries import CsvWriter
from replay.replay import estimates_trajectory, replay

BAR = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay", help="run a recorded log through the estimator, write the estimates",
        description="Feed every message LOG recorded, and the node's resets, in recorded order through "
                    "the same per-message path as the live node (same validation, counters and estimator) "
                    "and write the estimates as CSV (t, q.*, qd.*, qdd.*, Q.<actuator coordinate>, lambda.*, and "
                    "W.<frame>.<axis> with wrench states). "
                    "Deterministic by default: the estimator never degrades under load, so the same LOG and "
                    "CONFIG give the same CSV, byte for byte (the steps' wall time is still measured for the "
                    "summary). LOG must be recorded for CONFIG's mechanism and sensors (its header is "
                    "checked); other model parameters are allowed, with a note.")
    parser.add_argument("log", nargs="+", metavar="LOG",
                        help="log recorded by mbstate run or mbstate simulate; several files or a folder (a rotated "
                             "recording) are read in order as one stream")
    parser.add_argument("--config", required=True, metavar="CONFIG.yaml", help="node configuration")
    parser.add_argument("--out", required=True, metavar="EST.csv", help="estimates (CSV)")
    parser.add_argument("--realtime", action="store_true",
                        help="at the pace of the stamps, not as fast as possible, and timed by the wall clock as "
                             "on a live node: the estimator degrades when steps run over budget, so the "
                             "estimates depend on the machine's load")
    parser.add_argument("--as-recorded", action="store_true",
                        help="time the steps as the node's log recorded them (its estimate records) and skip "
                             "the backlogs it skipped (its skip and resume records), so that the estimator degrades "
                             "as it did live and gives the live estimates")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


class ProgressBar:
    """``[#####.....]  45%  12.3/27.1 MB`` on stderr, redrawn at most every 0.1 s and at the end."""

    def __init__(self) -> None:
        self._drawn, self._ended = 0.0, False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._ended or (done < total and now - self._drawn < 0.1):
            return
        self._drawn, self._ended = now, done >= total
        filled = BAR * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {100 * done // max(total, 1):3d}%  "
                         f"{done / 1e6:.1f}/{total / 1e6:.1f} MB" + "\n" * self._ended)
        sys.stderr.flush()


class EstimatesCsv:
    """The estimates to CSV as they come, a thousand rows at a time (a replay of hours holds none);
    the file is created with the first rows, or by ``finish`` (a header only)."""

    def __init__(self, path: str, mech: Model, rows: int = 1000) -> None:
        self.path, self.mech, self.rows = path, mech, rows
        self.writer: CsvWriter | None = None
        self.pending: list[Any] = []

    def __call__(self, estimates: list[Any]) -> None:
        self.pending += estimates
        if len(self.pending) >= self.rows:
            self._write()

    def _write(self) -> None:
        self.writer = self.writer or CsvWriter(self.path)
        self.writer.write(estimates_trajectory(self.mech, self.pending))
        self.pending = []

    def finish(self) -> None:
        """Write the rest and close."""
        if self.pending or self.writer is None:
            self._write()
        self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def run(args: argparse.Namespace) -> int:
    config = load_node_config(args.config)
    out = EstimatesCsv(args.out, config.mech)
    try:
        result = replay(args.log, config, realtime=args.realtime, progress=None if args.quiet else ProgressBar(),
                        as_recorded=args.as_recorded, note=lambda line: print(line, file=sys.stderr), sink=out)
        out.finish()
    finally:
        out.close()
    print(f"replayed: {summary_line(result.status)}")
    print(f"written: {args.out}")
    return 0
