"""Staged compilation (estimator.compile_stages): children restart after compiling, make progress
through numba's cache, and their output reaches the terminal once."""

from __future__ import annotations

import io
import os
import sys
import textwrap
from pathlib import Path

import pytest

from estimator import compile_stages
from estimator.compile_stages import Echo, resident_mb, staged, supervise

KERNELS = '''
from numba import njit


@njit(cache=True)
def inner(x):
    return x + 1.0


@njit(cache=True)
def middle(x):
    return inner(x) * 2.0


@njit(cache=True)
def outer(x):
    return middle(x) - 3.0


@njit(cache=False)
def uncached(x):
    return x * 10.0
'''

CHILD = '''
import os, sys
from estimator.compile_stages import restart_when_full
restart_when_full(False, packages=("stagekernels",), budget_mb=0.0)  # every compiled kernel restarts
with open(os.environ["ATTEMPTS"], "a") as attempts:
    attempts.write("x")
import stagekernels
print("computing", flush=True)
print(stagekernels.uncached(1.0), stagekernels.outer(1.0))
print("warning line", file=sys.stderr)
sys.exit(3)
'''


@pytest.fixture
def child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A child script compiling three nested cached kernels and an uncached one, its own numba cache."""
    (tmp_path / "stagekernels.py").write_text(KERNELS)
    (tmp_path / "child.py").write_text(textwrap.dedent(CHILD))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ATTEMPTS", str(tmp_path / "attempts"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(Path(__file__).resolve().parents[2])]))
    monkeypatch.delenv(compile_stages.ENV, raising=False)
    return [sys.executable, str(tmp_path / "child.py")]


def test_restarts_until_every_kernel_is_cached_and_prints_once(child, tmp_path, capfdbinary):
    assert supervise([], command=child) == 3  # the last child's exit code
    out, err = capfdbinary.readouterr()
    assert out == b"computing\n10.0 1.0\n"
    assert err.count(b"warning line") == 1 and err.count(compile_stages.NOTE.encode()) == 1
    # 1: uncached, restarts at outer's start; 2: uncached again (which no longer counts, or this would
    # never end), then inner; 3: middle; 4: outer, then to the end
    assert (tmp_path / "attempts").read_text() == "x" * 4
    assert supervise([], command=child) == 3  # all cached now but the uncached kernel: no restart
    assert (tmp_path / "attempts").read_text() == "x" * 5


def test_a_child_that_stays_compiles_everything_itself(child, tmp_path, monkeypatch, capfdbinary):
    monkeypatch.setattr(compile_stages, "MAX_ATTEMPTS", 1)
    assert supervise([], command=child) == 3
    assert capfdbinary.readouterr().out == b"computing\n10.0 1.0\n"
    assert (tmp_path / "attempts").read_text() == "x"


def test_echo_leaves_out_what_an_earlier_attempt_wrote():
    out = io.BytesIO()
    echo = Echo(out)
    echo.feed(b"first\nsec")
    echo.feed(b"ond\n\r[##..] 50%\r[###.")
    echo.rewind()  # the attempt ended; its unfinished line is dropped with it
    echo.feed(b"first\nsecond\n\r[##..] 50%\r[####] 100%\ndone", final=True)
    assert out.getvalue() == b"first\nsecond\n\r[##..] 50%\r[####] 100%\ndone"


def test_echo_writes_everything_after_a_first_difference():
    out = io.BytesIO()
    echo = Echo(out)
    echo.feed(b"a\nb\n")
    echo.rewind()
    echo.feed(b"a\nX\nb\n")
    assert out.getvalue() == b"a\nb\nX\nb\n"


def test_echo_survives_a_closed_reader():
    class Closed(io.BytesIO):
        def write(self, data: bytes) -> int:
            raise BrokenPipeError

    echo = Echo(Closed())
    echo.feed(b"line\n")
    echo.feed(b"more\n")
    assert echo.out is None


def test_only_simulate_and_replay_are_staged(monkeypatch):
    monkeypatch.delenv(compile_stages.ENV, raising=False)
    assert staged(["simulate", "m.yaml"]) and staged(["replay", "LOG"])
    assert not staged(["run", "node.yaml"]) and not staged(["check", "m.yaml"]) and not staged([])
    monkeypatch.setenv(compile_stages.ENV, "restart")  # a child runs its command itself
    assert not staged(["simulate", "m.yaml"])


def test_resident_set_is_measured():
    assert resident_mb() > 1.0


REPO = Path(__file__).resolve().parents[2]


def test_the_command_line_runs_simulate_through_a_child(tmp_path):
    """``python -m estimator simulate``: the parent runs it in a child; one summary, exit 0; a user
    error is still one line and exit 2."""
    import subprocess

    env = {key: value for key, value in os.environ.items() if key != compile_stages.ENV}
    command = [sys.executable, "-m", "estimator", "simulate", str(REPO / "configs/mechanisms/fourbar_crank.yaml"),
               "--sensors", str(REPO / "configs/sensors/fourbar.yaml"), "--t-end", "0.05"]
    done = subprocess.run([*command, "--out", str(tmp_path / "a.mbslog")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("written:") == 1 and (tmp_path / "a.mbslog").stat().st_size > 0
    bad = subprocess.run([*command, "--out", str(tmp_path / "b.mbslog"), "--dt", "-1"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_a_child_ended_by_a_signal_reports_as_a_shell_does(tmp_path, monkeypatch):
    script = tmp_path / "killed.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    monkeypatch.delenv(compile_stages.ENV, raising=False)
    assert supervise([], command=[sys.executable, str(script)]) == 128 + 9


def test_a_sigterm_to_the_parent_ends_the_child(tmp_path):
    import signal
    import subprocess

    (tmp_path / "sleeper.py").write_text("import time\nprint('ready', flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys; from estimator.compile_stages import supervise; "
                               f"sys.exit(supervise([], command=[sys.executable, {str(tmp_path / 'sleeper.py')!r}]))"],
        cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline() == "ready\n"
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=20) == 128 + signal.SIGTERM
