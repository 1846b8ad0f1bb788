"""Shared test helpers: the upstream MBSE reference files and small YAML mechanisms in tmp_path.

The reference data live outside the repository (``../shared/reference/mbse-upstream``, BSD-3,
see its README); tests that need them are skipped with a clear reason when it is absent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import zmq

from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / ".." / "shared" / "reference" / "mbse-upstream"
MECHANISMS = REPO / "configs" / "mechanisms"


def reference_file(name: str) -> Path:
    """Path of an upstream reference file; skips the test when the reference data are absent."""
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"reference data not found: {path}")
    return path


def load_reference(name: str) -> Mechanism:
    """An upstream MBSE mechanism file, loaded unchanged."""
    return load_mechanism(reference_file(name))


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
