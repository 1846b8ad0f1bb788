"""deploy/: the systemd unit runs ``mbstate run`` as a dedicated user, restarts it on failure and gives
it its log directory; ``systemd-analyze verify`` accepts it where the tool exists (with ExecStart
pointed at this environment's ``mbstate``, since /opt/mbstate is not installed here). The container
image runs the node with its configuration mounted (not built here: its keys are read)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

DEPLOY = REPO / "deploy"
UNIT = DEPLOY / "mbstate.service"


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, comment_prefixes=("#", ";"))
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text())
    return parser


def test_the_unit_runs_the_node_as_its_user_restarting_on_failure() -> None:
    service = unit()["Service"]
    command = service["ExecStart"].split()
    assert command[0].endswith("/mbstate") and command[1:3] == ["run", "--config"]
    assert service["Restart"] == "on-failure"
    assert service["User"] == "mbstate" and service["Group"] == "mbstate"
    assert service["LogsDirectory"] == "mbstate" and service["WorkingDirectory"] == "/var/log/mbstate"
    assert service["KillSignal"] == "SIGTERM"  # the node's clean stop (estimator/node/runtime.py)
    assert unit()["Install"]["WantedBy"] == "multi-user.target"
    user = [line.split() for line in (DEPLOY / "mbstate.sysusers").read_text().splitlines()
            if line and not line.startswith("#")]
    assert [fields[:2] for fields in user] == [["u", "mbstate"]]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    mbstate = Path(sys.executable).with_name("mbstate")
    if not mbstate.is_file():
        pytest.skip(f"no mbstate script beside {sys.executable}")
    executable = unit()["Service"]["ExecStart"].split()[0]
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace(executable, str(mbstate)))
    result = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "mbstate.service" not in result.stderr  # no warning about the unit itself


def test_the_container_runs_the_node_with_its_configs_mounted() -> None:
    lines = [line.strip() for line in (DEPLOY / "Containerfile").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    keys = {line.split()[0]: line.split(None, 1)[1] for line in lines}
    assert keys["FROM"].endswith("python:3.11-slim")
    assert keys["ENTRYPOINT"] == '["mbstate", "run"]' and keys["CMD"] == '["--config", "/config/node.yaml"]'
    assert '"/config"' in keys["VOLUME"] and '"/logs"' in keys["VOLUME"]
    assert keys["USER"] == "mbstate" and keys["WORKDIR"] == "/logs"
