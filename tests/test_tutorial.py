"""docs/tutorial.md runs as written: every ```sh block, in page order, in a temporary directory.

The convention is the HTML comment at the top of docs/tutorial.md: only ``sh`` blocks run, each by
``bash -euo pipefail`` and each must exit 0; ``<!-- background: N, ready: TEXT -->`` before a block
starts it in the background and waits at most N s for TEXT in its output; ``<!-- stop -->`` stops
the background commands with SIGINT (the last started first), each must exit 0 or 130 (128 +
SIGINT). The temporary directory stands for the repository root: it holds a link to the
repository's ``configs/`` and the files the tutorial writes. ``mbstate`` on PATH is a shim that runs
``python -m estimator`` of this checkout. The node's ports 5555-5557 become free ports, so the test
does not meet another node.
"""

from __future__ import annotations

import csv
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO

TUTORIAL = REPO / "docs" / "tutorial.md"
PORTS = ("5555", "5556", "5557")
STEP = re.compile(r"^(<!--\s*(background|stop)\b(.*?)-->)|^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
BACKGROUND = re.compile(r":\s*(\d+(?:\.\d+)?)\s*(?:,\s*ready:\s*(.*?))?\s*$", re.S)
FOREGROUND_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0


@dataclass
class Step:
    kind: str  # "run", "background" or "stop"
    script: str = ""
    bound_s: float = 0.0
    ready: str = ""


def steps(text: str) -> list[Step]:
    """The page's ``sh`` blocks and markers, in order."""
    found: list[Step] = []
    pending: Step | None = None
    for match in STEP.finditer(text):
        if match.group(2) == "stop":
            found.append(Step("stop"))
        elif match.group(2) == "background":
            spec = BACKGROUND.match(match.group(3))
            assert spec, f"bad background marker: {match.group(1)}"
            pending = Step("background", bound_s=float(spec.group(1)), ready=(spec.group(2) or "").strip())
        elif match.group(4) == "sh":
            if pending is not None:
                pending.script = match.group(5)
                found.append(pending)
                pending = None
            else:
                found.append(Step("run", script=match.group(5)))
        else:
            assert pending is None, "a background marker must come just before an sh block"
    assert pending is None
    return found


def free_ports(count: int) -> list[str]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [str(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports


def read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    started = time.monotonic()
    plan = steps(TUTORIAL.read_text())
    assert sum(step.kind == "background" for step in plan) >= 5  # run, echo, view; run, echo
    work = tmp_path / "repo"
    work.mkdir()
    (work / "configs").symlink_to(REPO / "configs")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "mbstate"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m estimator "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    ports = dict(zip(PORTS, free_ports(len(PORTS))))

    def localize(script: str) -> str:
        return re.sub(r"\b(5555|5556|5557)\b", lambda m: ports[m.group(1)], script)

    running: list[tuple[subprocess.Popen, Path, str]] = []
    outputs: dict[str, list[str]] = {"run": [], "echo": [], "view": []}
    printed = []  # what the foreground blocks printed
    try:
        for number, step in enumerate(plan):
            if step.kind == "run":
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", localize(step.script)], cwd=work, env=env,
                                      capture_output=True, text=True, timeout=FOREGROUND_TIMEOUT_S)
                assert done.returncode == 0, f"block {number} failed:\n{step.script}\n{done.stdout}\n{done.stderr}"
                printed.append(done.stdout + done.stderr)
            elif step.kind == "background":
                out = tmp_path / f"background_{number}.txt"
                with out.open("w") as sink:
                    command = ["bash", "-c", "exec " + localize(step.script).strip()]
                    process = subprocess.Popen(command, cwd=work, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                               start_new_session=True)
                running.append((process, out, step.script))
                deadline = time.monotonic() + step.bound_s
                while step.ready not in read(out):
                    assert process.poll() is None, f"background block {number} ended:\n{step.script}\n{read(out)}"
                    assert time.monotonic() < deadline, f"no {step.ready!r} in {step.bound_s} s:\n{read(out)}"
                    time.sleep(0.2)
            else:
                assert running, "a stop marker without a background command"
                for process, out, script in reversed(running):
                    process.send_signal(signal.SIGINT)
                    code = process.wait(timeout=STOP_TIMEOUT_S)
                    assert code in (0, 130), f"exit {code} after Ctrl-C:\n{script}\n{read(out)}"
                    outputs[script.split()[1]].append(read(out))
                running.clear()
    finally:
        for process, _, _ in running:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    # a few key outputs
    everything = "\n".join(printed)
    assert re.search(r"^  observable$", everything, re.M)  # the encoder and the gyroscope
    assert "NOT observable: 1 direction(s)" in everything and "q.crank_angle (position)" in everything
    assert re.search(r"crank_angle: \d+ estimates, RMS error", everything)
    assert "robot ur5" in everything and "written: my_arm/sim.mbslog" in everything
    for echoed in outputs["echo"]:
        assert re.search(r"^t=\d+\.\d+ q=\[", echoed, re.M), echoed  # estimates came through
    assert any(re.search(r"http://127\.0\.0\.1:\d+/", viewed) for viewed in outputs["view"])
    for ran in outputs["run"]:
        assert re.search(r"^stopped: [1-9]\d* steps", ran, re.M), ran
    for estimates, coordinate in [("my_robot/sim_estimates.csv", "crank_angle"),
                                  ("my_robot/live_estimates.csv", "crank_angle"),
                                  ("my_arm/live_estimates.csv", "elbow_joint")]:
        with (work / estimates).open() as file:
            rows = list(csv.reader(file))
        assert f"q.{coordinate}" in rows[0] and len(rows) > 100, estimates
    assert (work / "my_robot" / "lab" / "index.html").exists()
    assert time.monotonic() - started < 180.0
