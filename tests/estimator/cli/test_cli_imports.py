"""What a command line loads: the named command's module alone, so that ``mbstate simulate`` holds no
GTSAM and no other command's modules (memory, start-up time); help and an unknown name load all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO

from estimator.cli import COMMAND_MODULES

WATCHED = ("gtsam", *(f"estimator.cli.{name}" for name in COMMAND_MODULES))


def loaded_by(argv: list[str]) -> list[str]:
    """The WATCHED modules a fresh interpreter has loaded once it has built the parser for ``argv``."""
    script = ("import json, sys\n"
              "from estimator.cli import build_parser\n"
              f"build_parser({argv!r})\n"
              f"print(json.dumps([name for name in {WATCHED!r} if name in sys.modules]))\n")
    child = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(child.stdout)


def test_simulate_loads_its_own_module_and_no_gtsam() -> None:
    assert loaded_by(["simulate", "MECH.yaml"]) == ["estimator.cli.simulate"]


def test_replay_loads_its_own_module_and_run_for_its_summary_line() -> None:
    assert loaded_by(["replay", "LOG"]) == ["estimator.cli.run", "estimator.cli.replay"]


@pytest.mark.parametrize("argv", [[], ["--help"], ["simulat"]])
def test_help_and_unknown_names_load_every_command(argv: list[str]) -> None:
    assert set(loaded_by(argv)) == set(WATCHED)
