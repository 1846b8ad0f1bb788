"""Argument types and loading helpers shared by the subcommands; errors are one-line MbstateErrors."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

import numpy as np

from estimator.errors import MbstateError
from estimator.kinematics import AssemblyError, solve_position_problem
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.node.client import ClientKeys


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value) or value <= 0.0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text) if text.strip().lstrip("+").isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a finite float >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got '{text}'")
    return value


def vector2(text: str) -> np.ndarray:
    """argparse type: ``X,Y``."""
    try:
        values = np.array([float(part) for part in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X,Y, got {text!r}") from None
    if values.shape != (2,) or not np.all(np.isfinite(values)):
        raise argparse.ArgumentTypeError(f"expected two finite numbers X,Y, got {text!r}")
    return values


def assignments(text: str) -> dict[str, float]:
    """argparse type: ``NAME=VALUE[,NAME=VALUE...]``."""
    result: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            result[name.strip()] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {item!r}") from None
    return result


def coordinate_indices(mech: Mechanism, names: Mapping[str, float] | list[str], option: str) -> list[int]:
    """Indices of named coordinates; an unknown name is a one-line error naming ``option``."""
    try:
        return [mech.index(name) for name in names]
    except KeyError as exc:
        raise MbstateError(f"{option}: {exc.args[0]}") from None


def assembled(mech: Mechanism, held: Mapping[str, float], option: str = "--initial",
              guess: Mapping[str, float] | None = None) -> np.ndarray:
    """q satisfying the constraints near the file's coordinates (those named in ``guess`` replaced,
    to start on another assembly branch), ``held`` coordinates set and kept."""
    q = mech.q0.copy()
    if guess:
        q[coordinate_indices(mech, guess, option)] = list(guess.values())
    indices = coordinate_indices(mech, held, option)
    q[indices] = list(held.values())
    try:
        return solve_position_problem(mech, q, indices)
    except AssemblyError as exc:
        raise MbstateError(f"{mech.source}: {exc}") from None


def load(path: str, gravity: np.ndarray | None = None) -> Mechanism:
    """Load a mechanism file, optionally under another gravity vector."""
    from estimator.mass import with_gravity

    mech = load_mechanism(path)
    return mech if gravity is None else with_gravity(mech, gravity)


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
