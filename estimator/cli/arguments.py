"""Loading helpers and CURVE options shared by the subcommands; errors are one-line MbstateErrors."""

from __future__ import annotations

import argparse

import numpy as np

from estimator.drive_trajectory import DriveTrajectory, load_drive_trajectory
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.node.client import ClientKeys
from estimator.node.realtime import LoopScheduling, cpu_list


def load(path: str, gravity: np.ndarray | None = None) -> Mechanism:
    """Load a mechanism file, optionally under another gravity vector."""
    from estimator.mass import with_gravity

    mech = load_mechanism(path)
    return mech if gravity is None else with_gravity(mech, gravity)


def driven(mech: Mechanism, drive: str, trajectory: str) -> tuple[list[str], DriveTrajectory]:
    """The driven coordinate names of ``drive`` (comma-separated, checked against ``mech``) and the
    samples of the ``trajectory`` file, one column per name."""
    from estimator.dynamics.inverse import drive_indices

    drives = [name.strip() for name in drive.split(",")]
    drive_indices(mech, drives)
    return drives, load_drive_trajectory(trajectory, len(drives))


def add_curve_options(parser: argparse.ArgumentParser) -> None:
    """``--curve-key`` and ``--server-key``: a client's CURVE keys for a node with ``node.curve``."""
    group = parser.add_argument_group(
        "CURVE", "for a node with node.curve: both options, or neither for a node without it. A refused key, "
                 "a wrong server key or CURVE on one side only is one error line (exit 2)")
    group.add_argument("--curve-key", metavar="CLIENT.key_secret",
                       help="this client's key pair (mbstate keys CLIENT); CLIENT.key must be in the node's "
                            "node.curve.clients directory")
    group.add_argument("--server-key", metavar="NODE.key", help="the node's public key (its NODE.key)")


def client_keys(args: argparse.Namespace) -> ClientKeys | None:
    """The keys of :func:`add_curve_options` (None: neither given), read before any socket is opened."""
    if (args.curve_key is None) != (args.server_key is None):
        raise MbstateError("--curve-key and --server-key go together")
    return None if args.curve_key is None else ClientKeys.load(args.curve_key, args.server_key)


def add_scheduling_options(parser: argparse.ArgumentParser) -> None:
    """``--priority`` and ``--cpu``: the node loop's real-time priority and cores (estimator.node.realtime)."""
    group = parser.add_argument_group("real time", "the node loop's thread (the systemd unit grants the same to the "
                                                   "whole service: docs/deploy.md)")
    group.add_argument("--priority", type=int, metavar="N",
                       help="run the loop at SCHED_FIFO priority N (1-99): no normal process preempts a step; "
                            "without the permission, one warning and the normal priority")
    group.add_argument("--cpu", type=cpu_list, metavar="CPUS", help="run the loop on these cores only, e.g. 1 or 2,3")


def loop_scheduling(args: argparse.Namespace) -> LoopScheduling:
    """The checked LoopScheduling of ``--priority`` and ``--cpu``."""
    scheduling = LoopScheduling(args.priority, args.cpu or frozenset())
    scheduling.check()
    return scheduling
