"""User-facing errors: the CLI prints their message on one line and exits with code 2.

Values quoted in an error go through :func:`shown`: bounded in length and depth, built without
recursion over the value, so a hostile value (nested 1,000 deep, megabytes long) cannot turn an
error message into a RecursionError or a flood of text.
"""

from __future__ import annotations

import reprlib
from typing import Any

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 3, 60, 60, 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6


LIMIT = 1e9  # largest magnitude of a number in a user's file whose key states no range of its own


class MbstateError(Exception):
    """A problem with the user's input (files, arguments, configuration), not a bug."""


class MechanismFileError(MbstateError):
    """A mechanism YAML file that cannot be loaded: names the file, the entry and the problem."""

    def __init__(self, path: str, entry: str, problem: str) -> None:
        self.path, self.entry, self.problem = path, entry, problem
        where = f"{path}: {entry}" if entry else path
        super().__init__(f"{where}: {problem}")


def shown(value: Any, limit: int = 120) -> str:
    """A one-line repr of ``value`` for an error message: at most 3 levels and 6 items per level
    (reprlib: ``...`` for the rest), at most ``limit`` characters."""
    try:
        text = _SHORT.repr(value)
    except (ValueError, RecursionError):  # an int past Python's digit limit, a hostile __repr__
        text = f"<{type(value).__name__}>"
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def nesting_depth(value: Any, limit: int) -> int:
    """Levels of lists, tuples and maps in ``value`` (a scalar: 0; keys count as items), counted
    level by level without recursion and only up to ``limit + 1``."""
    depth, level = 0, [value]
    while depth <= limit:
        inner, found = [], False
        for item in level:
            if isinstance(item, dict):
                inner.extend(item)
                inner.extend(item.values())
                found = True
            elif isinstance(item, (list, tuple)):
                inner.extend(item)
                found = True
        if not found:
            return depth
        level = inner
        depth += 1
    return depth


def one_line(exc: Exception, limit: int = 200) -> str:
    """An exception's text on one line, shortened (GTSAM's run over a dozen lines)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
