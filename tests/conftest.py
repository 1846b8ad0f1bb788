"""Shared test helpers: the MBSE validation data in tests/data/mbse and small YAML mechanisms in
tmp_path.

The MBSE data (upstream-format mechanism files, the four-bar crank trajectory, MSC Adams results)
and their provenance and licence: tests/data/README.md.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import zmq

from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.timeseries import Trajectory

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "data" / "mbse"
MECHANISMS = REPO / "configs" / "mechanisms"


def load_script(name: str) -> ModuleType:
    """A script of scripts/ as a module (registered, as its dataclasses need)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def csv_columns(path: str | Path, prefix: str, names) -> np.ndarray:
    """The columns ``<prefix>.<name>`` of a CSV time series (rows, names), in the order of ``names``."""
    with open(path, encoding="utf-8") as stream:
        header = stream.readline().strip().split(",")
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)[:, [header.index(f"{prefix}.{name}") for name in names]]


def deviation(got: np.ndarray, ref: np.ndarray) -> float:
    """‖Δ‖∞ / max(1, ‖ref‖∞): the spatial issues' agreement measure."""
    return float(np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref))))


def read_csv(path: str | Path) -> Trajectory:
    """A trajectory from a CSV written by estimator.timeseries.write_csv (or by hand with the same
    header convention)."""
    try:
        with open(path, encoding="utf-8") as stream:
            header = stream.readline().strip().split(",")
            data = np.loadtxt(stream, delimiter=",", ndmin=2)
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise MbstateError(f"{path}: not a numeric CSV ({exc})") from None
    if not header or header[0] != "t":
        raise MbstateError(f"{path}: the first column must be 't'")
    if data.shape[1] != len(header):
        raise MbstateError(f"{path}: {len(header)} header columns but {data.shape[1]} data columns")
    groups: dict[str, list[int]] = {}
    for k, name in enumerate(header[1:], start=1):
        prefix, _, _ = name.partition(".")
        groups.setdefault(prefix, []).append(k)
    names = tuple(header[k].partition(".")[2] for k in groups.get("q", groups.get("qd", groups.get("qdd", []))))

    def block(prefix: str) -> np.ndarray | None:
        return data[:, groups[prefix]] if prefix in groups else None

    forces = {header[k].partition(".")[2]: data[:, k] for k in groups.get("Q", [])}
    model = {header[k].partition(".")[2]: data[:, k] for k in groups.get("model", [])}
    return Trajectory(t=data[:, 0], coordinate_names=names, q=block("q"), qd=block("qd"), qdd=block("qdd"),
                      forces=forces, lam=block("lambda"), model=model)
