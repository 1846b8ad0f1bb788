"""Every numba kernel of the project is cached on disk (``cache=True``): a kernel that is not is
compiled again by every process, and by every child of a staged first run (estimator.compile_stages)."""

from __future__ import annotations

import ast
from pathlib import Path

from estimator.compile_stages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
JIT = {"njit", "jit"}


def jit_decorators(path: Path) -> list[tuple[int, bool]]:
    """(line, cached) of each ``@njit``/``@jit`` decorator in ``path``, bare or called."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name in JIT:
                cached = call is not None and any(
                    keyword.arg == "cache" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
                    for keyword in call.keywords)
                found.append((node.lineno, cached))
    return found


def test_every_kernel_is_cached():
    kernels = {f"{path.relative_to(ROOT)}:{line}": cached for package in PACKAGES
               for path in sorted((ROOT / package).rglob("*.py")) for line, cached in jit_decorators(path)}
    assert len(kernels) > 50  # the scan finds them
    assert [where for where, cached in kernels.items() if not cached] == []
