"""argparse types shared by the subcommands and the benchmarks' own command lines."""

from __future__ import annotations

import argparse

import numpy as np

from estimator.errors import LIMIT


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value) or value <= 0.0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


LONGEST_SIMULATION_S = 600.0  # [s] of simulated time per lab or accuracy cell or demo: truth and readings in memory


def simulated_duration(text: str) -> float:
    """argparse type: a positive number of seconds, at most LONGEST_SIMULATION_S."""
    value = positive_float(text)
    if value > LONGEST_SIMULATION_S:
        raise argparse.ArgumentTypeError(f"at most {LONGEST_SIMULATION_S:g} s (the simulated truth and readings are "
                                         f"held in memory), got {text!r}")
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
    """argparse type: ``NAME=VALUE[,NAME=VALUE...]``, each VALUE finite and at most LIMIT in magnitude."""
    result: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            result[name.strip()] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {item!r}") from None
        if not abs(result[name.strip()]) <= LIMIT:
            raise argparse.ArgumentTypeError(f"expected a finite VALUE within ±{LIMIT:g}, got {item!r}")
    return result
