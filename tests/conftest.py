"""Shared test helpers: the MBSE validation data in tests/data/mbse and small YAML mechanisms in
tmp_path.

The MBSE data (upstream-format mechanism files, the four-bar crank trajectory, MSC Adams results)
and their provenance and licence: tests/data/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import zmq

from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "data" / "mbse"
MECHANISMS = REPO / "configs" / "mechanisms"


def reference_file(name: str) -> Path:
    """Path of an MBSE validation file in tests/data/mbse."""
    return REFERENCE / name


def load_reference(name: str) -> Mechanism:
    """An upstream-format MBSE mechanism file of tests/data/mbse, loaded unchanged."""
    return load_mechanism(reference_file(name))


def cross(a: np.ndarray, b: np.ndarray) -> float:
    """The planar cross product a × b."""
    return float(a[0] * b[1] - a[1] * b[0])


def angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """Counter-clockwise angle from a to b in (−π, π]."""
    return math.atan2(cross(a, b), float(a @ b))


def central_difference(function: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float) -> np.ndarray:
    """∂f/∂x by central differences of step h, stacked on the last axis (the reference of every
    analytic Jacobian's test)."""
    columns = []
    for k in range(x.size):
        step = np.zeros_like(x)
        step[k] = h
        columns.append((function(x + step) - function(x - step)) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.fixture
def write_yaml(tmp_path: Path) -> Callable[..., Path]:
    """``write_yaml(text, name="mechanism.yaml")`` writes text into tmp_path and returns the path."""

    def write(text: str, name: str = "mechanism.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def cli_exit_code(argv: list[str]) -> int:
    """``mbstate ARGV``'s exit code: main's return value, or the code of the SystemExit that argparse
    raises for a bad argument."""
    from estimator.cli import main

    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.fixture
def context():
    """A ZeroMQ context whose sockets do not linger, destroyed after the test."""
    context = zmq.Context()
    context.setsockopt(zmq.LINGER, 0)
    yield context
    context.destroy()
