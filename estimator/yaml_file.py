"""Reading a YAML configuration file (mechanism, sensors, node) with one-line errors.

Bounded before anything is built: the file size (MAX_BYTES), and, over the parser's event stream
(which PyYAML produces without recursion), the nesting depth (MAX_DEPTH) and the number of nodes
the document stands for with every alias expanded (MAX_NODES) — so a nested or an alias "bomb"
is refused in one line instead of exhausting the stack or the memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from estimator.errors import MbstateError

MAX_BYTES = 1 << 20  # [bytes]: the repository's largest configuration is ~5 KB
MAX_DEPTH = 64  # levels of maps and lists
MAX_NODES = 100_000  # scalars, maps and lists, aliases expanded


def read_yaml(path: str | Path) -> Any:
    """The parsed document (``yaml.safe_load``: plain data, no object construction) of a file within
    the module's bounds; MbstateError naming the file, and the line and column of a syntax error."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_BYTES:
            raise MbstateError(f"{path}: {size} bytes, more than a configuration may have ({MAX_BYTES})")
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise MbstateError(f"{path}: not a text file") from None
    try:
        _check_bounds(path, text)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MbstateError(f"{path}: invalid YAML{where}: {problem}") from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise MbstateError(f"{path}: invalid YAML: {str(exc)[:120]}") from None


def _check_bounds(path: str | Path, text: str) -> None:
    """MbstateError when the document nests deeper than MAX_DEPTH or, aliases expanded, has more than
    MAX_NODES nodes (counted over the parser's events: an alias adds its anchor's expanded count)."""
    sizes: dict[str, int] = {}  # expanded node count of each anchor
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, total before it) of each open map and list
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            open_nodes.append((event.anchor, total))
            total += 1
            if len(open_nodes) > MAX_DEPTH:
                raise MbstateError(f"{path}: nested more than {MAX_DEPTH} levels deep "
                                   f"(at line {event.start_mark.line + 1})")
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            total += sizes.get(event.anchor, 0)
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, before = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = total - before
        if total > MAX_NODES:
            raise MbstateError(f"{path}: more than {MAX_NODES} values with its aliases expanded "
                               f"(near line {event.start_mark.line + 1})")
