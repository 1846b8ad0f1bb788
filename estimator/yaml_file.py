"""Reading a YAML configuration file (mechanism, sensors, node) with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from estimator.errors import MbstateError


def read_yaml(path: str | Path) -> Any:
    """The parsed document (``yaml.safe_load``: plain data, no object construction); MbstateError
    naming the file, and the line and column of a syntax error."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MbstateError(f"{path}: not a text file") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MbstateError(f"{path}: invalid YAML{where}: {problem}") from None
