"""The YAML reader's bounds, checked before anything is built: size, nesting, aliases expanded."""

from __future__ import annotations

import pytest

from estimator.errors import MbstateError
from estimator.yaml_file import MAX_BYTES, MAX_DEPTH, MAX_NODES, read_yaml


def alias_bomb(levels: int = 9) -> str:
    """Each level a list of 9 aliases of the one before: 9**levels values expanded, ~1 KB written."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, match", [
    (alias_bomb(), rf"more than {MAX_NODES} values with its aliases expanded \(near line \d+\)$"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", rf"nested more than {MAX_DEPTH} levels deep \(at line 1\)$"),
    ("".join("  " * i + f"k{i}:\n" for i in range(200)), rf"nested more than {MAX_DEPTH} levels deep \(at line 65\)$"),
    ("a: " + "9" * 5000 + "\n", r"invalid YAML: Exceeds the limit"),
])
def test_a_hostile_document_is_one_line(write_yaml, text: str, match: str) -> None:
    with pytest.raises(MbstateError, match=match) as error:
        read_yaml(write_yaml(text))
    assert "\n" not in str(error.value) and len(str(error.value)) < 300


def test_a_file_over_the_size_bound_is_not_read(write_yaml) -> None:
    with pytest.raises(MbstateError, match=rf"{MAX_BYTES + 1} bytes, more than a configuration may have"):
        read_yaml(write_yaml("a: " + "x" * (MAX_BYTES - 2)))


def test_aliases_and_nesting_within_the_bounds_load(write_yaml) -> None:
    assert read_yaml(write_yaml(alias_bomb(4))) is not None  # 9**4 = 6561 values expanded
    nested = "a: " + "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1) + "\n"
    value = read_yaml(write_yaml(nested))["a"]
    for _ in range(MAX_DEPTH - 2):
        value = value[0]
    assert value == [1]
