"""The packages import one way (developers' guide, Layout): model and physics < sensors < factors <
online estimator < node < replay and demo < CLI and benchmarks.

Every import of the project's own modules is read with ``ast`` (at any depth: also the imports
inside functions) and must go to a unit of the same rank or below; units of the same rank must not
import each other in a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("estimator", "sensors", "replay")

# (rank, layer): the units of each layer, by module prefix; the longest matching prefix names a module's unit
LAYERS: dict[str, tuple[int, tuple[str, ...]]] = {
    "model and physics": (0, (
        "estimator.errors", "estimator.model", "estimator.mass", "estimator.lengths", "estimator.constraints",
        "estimator.kinematics",
        "estimator.forces", "estimator.linalg", "estimator.blocks", "estimator.expressions", "estimator.yaml_file", "estimator.section",
        "estimator.mechanism_file", "estimator.timeseries", "estimator.drive_trajectory", "estimator.assembly",
        "estimator.argument_types", "estimator.collector", "estimator.threads", "estimator.allocator",
        "estimator.compile_stages",
        "estimator.dynamics", "estimator.wire", "estimator.spatial", "estimator.model_protocol")),
    "sensors": (1, ("sensors",)),
    "factors": (2, ("estimator.factors", "estimator.smoother")),
    "online estimator": (3, ("estimator.online", "estimator.graph_dynamics", "estimator.spatial_graph")),
    "node": (4, ("estimator.node", "estimator.logfile")),
    "replay and demo": (5, ("replay", "estimator.demo", "estimator.view")),
    "CLI and benchmarks": (6, ("estimator.cli", "estimator.benchmarks", "estimator.__main__")),
}
PACKAGE_ROOTS = ("estimator", "replay")  # bare package modules (``__init__``) with no code of their own


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> tuple[str, int]:
    """(unit, rank): the unit is the longest layer prefix of ``module``."""
    best = max(((prefix, rank) for rank, prefixes in LAYERS.values() for prefix in prefixes
                if module == prefix or module.startswith(prefix + ".")), key=lambda item: len(item[0]),
               default=None)
    if best is None:
        raise LookupError(module)
    return best


def project_imports(path: Path) -> set[str]:
    """The project modules ``path`` imports (``from a.b import c`` counts as a.b, or a.b.c when that
    is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if MODULES.get(full) else node.module)
    return {name for name in found if name.split(".")[0] in PACKAGES}


MODULES = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
CODE = {name: path for name, path in MODULES.items() if name not in PACKAGE_ROOTS and name not in PACKAGES}
GRAPH = {name: project_imports(path) for name, path in CODE.items()}


def test_every_module_has_a_layer():
    assert [name for name in CODE if not _has_unit(name)] == []


def _has_unit(name: str) -> bool:
    try:
        unit_of(name)
    except LookupError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(CODE))
def test_imports_run_down(name):
    _, rank = unit_of(name)
    upward = sorted(f"{target} (rank {unit_of(target)[1]})" for target in GRAPH[name]
                    if target not in PACKAGES and unit_of(target)[1] > rank)
    assert upward == [], f"{name} (rank {rank}) imports upward"


def test_no_cycles_between_units():
    units: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        unit = unit_of(name)[0]
        units.setdefault(unit, set()).update(unit_of(t)[0] for t in targets if t not in PACKAGES)
    for unit in units:
        units[unit].discard(unit)
    cycles, state = [], {}

    def visit(unit: str, trail: list[str]) -> None:
        state[unit] = "open"
        for target in sorted(units.get(unit, ())):
            if state.get(target) == "open":
                cycles.append(trail[trail.index(target):] + [target] if target in trail else [unit, target])
            elif target not in state:
                visit(target, trail + [target])
        state[unit] = "done"

    for unit in sorted(units):
        if unit not in state:
            visit(unit, [unit])
    assert cycles == []


def test_the_rules_catch_an_upward_import():
    """The checker itself: a model-rank module importing the node is flagged."""
    assert unit_of("estimator.model")[1] < unit_of("estimator.node.intake")[1]
    assert unit_of("estimator.dynamics.forward") == ("estimator.dynamics", 0)
    assert unit_of("estimator.online.estimator") == ("estimator.online", 3)
