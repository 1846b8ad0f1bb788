"""Every numba kernel of the project is cached on disk (``cache=True``): a kernel that is not is
compiled again by every process, and by every child of a staged first run (estimator.compile_stages).
No kernel assigns an array into a slice (estimator.blocks: numba compiles such an assignment with its
shape check's message, which it does not cache, in every process); a subprocess with an empty cache shows
that the loops of estimator.blocks compile none of it where a slice assignment does."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from estimator.compile_stages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
JIT = {"njit", "jit"}


def jit_functions(path: Path) -> list[tuple[ast.FunctionDef, bool]]:
    """(function, cached) of each function in ``path`` under an ``@njit``/``@jit`` decorator, bare or called."""
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
                found.append((node, cached))
    return found


def kernels() -> dict[str, tuple[ast.FunctionDef, bool]]:
    return {f"{path.relative_to(ROOT)}:{node.lineno}": (node, cached) for package in PACKAGES
            for path in sorted((ROOT / package).rglob("*.py")) for node, cached in jit_functions(path)}


def test_every_kernel_is_cached():
    found = kernels()
    assert len(found) > 50  # the scan finds them
    assert [where for where, (_, cached) in found.items() if not cached] == []


def slice_assignments(function: ast.FunctionDef) -> list[str]:
    """The assignments in ``function`` of anything but a constant into a subscript holding a slice."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            sliced = [t for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])
                      if isinstance(t, ast.Subscript) and any(isinstance(x, ast.Slice) for x in ast.walk(t.slice))]
            if sliced and not isinstance(node.value, ast.Constant):
                found.append(ast.unparse(node))
    return found


def test_no_kernel_assigns_an_array_into_a_slice():
    assert {where: lines for where, (node, _) in kernels().items() if (lines := slice_assignments(node))} == {}


PROBE = """
import sys
import numpy as np
from numba import njit
from numba.core import event
from estimator.blocks import put_matrix, put_vector
compiled = []
class Names(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Names())
def by_loops(a, b, m):
    put_vector(a[1:4], b)
    put_matrix(m[1:, :2], m[:2, 1:])
def by_slices(a, b, m):
    a[1:4] = b
by_loops_kernel, by_slices_kernel = njit(by_loops), njit(by_slices)
by_loops_kernel(np.zeros(5), np.ones(3), np.ones((3, 3)))
loops = any("shape_context" in name for name in compiled)
by_slices_kernel(np.zeros(5), np.ones(3), np.ones((3, 3)))
print(loops, any("shape_context" in name for name in compiled))
"""


def test_the_loops_compile_no_shape_message(tmp_path):
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]  # the loops: none; a slice assignment: the message's code
