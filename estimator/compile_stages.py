"""A first run compiles the kernels in stages, one process after another, so that no process holds
every compilation (issue 36, memory).

numba keeps what compiling a kernel took — LLVM's modules and its JIT's memory — until the process
ends (numba issues #5976, #6707): a ``simulate`` that compiled its kernels held about twice the
resident set of one that loaded them from numba's on-disk cache. So the ``mbstate simulate`` and
``mbstate replay`` commands (console script or ``python -m estimator``) run as a light parent, which
imports neither numpy nor numba, and one child at a time running the same command line. A child that
has compiled (and so cached) one of this project's kernels and is over ``BUDGET_MB`` resident ends
with ``RESTART`` at numba's next step; the parent starts it again, and the new child loads from the
cache what the last one compiled (a kernel numba did not cache, compiled again, does not count). A run
that finds every kernel cached never restarts. A child that sends live (``--publish``, ``--realtime``)
never restarts: it would send again.

The children's output reaches the terminal through the parent, which leaves out the lines an earlier
attempt already wrote, so a restart does not show.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from typing import BinaryIO

STAGED_COMMANDS = ("simulate", "replay")
LIVE_OPTIONS = ("publish", "realtime")  # a child with one of these set never restarts
ENV = "MBSTATE_COMPILE_STAGE"  # in the children: "restart" (may restart) or "stay"
ENV_FINISHED = "MBSTATE_COMPILE_FINISHED"  # in the children: the file of the kernels compiled so far
RESTART = 75  # the child's exit code asking for a fresh process
BUDGET_MB = 240.0  # a child over this resident set [MB] restarts at numba's next step
MAX_ATTEMPTS = 100  # then the last child compiles the rest itself (e.g. numba cannot write its cache)
PACKAGES = ("estimator", "sensors", "replay")  # the kernels' packages (all cached: tests/test_kernels_cached.py)
NOTE = "mbstate: compiling the numeric kernels, once (a first run after an install or a change: a minute or two)"
ECHO_LINES = 10_000  # lines of a stream compared against a restarted child's
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|[\r\n])")


def staged(argv: list[str]) -> bool:
    """Whether the command line ``argv`` (without the program name) runs in staged children, from this
    process."""
    return bool(argv) and argv[0] in STAGED_COMMANDS and ENV not in os.environ


def supervise(argv: list[str], command: list[str] | None = None) -> int:
    """Run ``command`` (default ``python -m estimator``) with ``argv`` in children until one ends
    other than with ``RESTART``; its exit code."""
    command = [sys.executable, "-m", "estimator"] if command is None else command
    streams = [Echo(sys.stdout.buffer), Echo(sys.stderr.buffer)]
    with tempfile.TemporaryDirectory(prefix="mbstate-compile-") as folder:
        finished = os.path.join(folder, "finished")
        for attempt in range(1, MAX_ATTEMPTS + 1):
            env = dict(os.environ, PYTHONUNBUFFERED="1",  # its lines as it prints them, as on a terminal
                       **{ENV: "restart" if attempt < MAX_ATTEMPTS else "stay", ENV_FINISHED: finished})
            code = _attempt([*command, *argv], env, streams)
            if code != RESTART:
                return code
            if attempt == 1:
                sys.stderr.write(f"{NOTE}\n")
                sys.stderr.flush()
            for echo in streams:
                echo.rewind()
    return RESTART


def _attempt(command: list[str], env: dict[str, str], streams: list[Echo]) -> int:
    """Run one child, its output through ``streams``; its exit code."""
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pumps = [threading.Thread(target=echo.pump, args=(pipe,), daemon=True)
             for echo, pipe in zip(streams, (child.stdout, child.stderr))]
    for pump in pumps:
        pump.start()
    code = _wait(child)
    for pump in pumps:
        pump.join()
    return code


def _wait(child: subprocess.Popen) -> int:
    """The child's exit code (128 + N for a child ended by signal N, as a shell reports it). A
    SIGTERM to this process goes to the child; a Ctrl-C reaches the child from the terminal, and this
    process waits for it to end."""
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: child.send_signal(signum))
    try:
        while True:
            try:
                code = child.wait()
                return code if code >= 0 else 128 - code
            except KeyboardInterrupt:
                continue
    finally:
        signal.signal(signal.SIGTERM, previous)


class Echo:
    """A child's stream to ``out`` line by line (a line ends with ``\\n`` or ``\\r``), leaving out
    the lines an earlier attempt wrote at the same place; from its first new line on, everything."""

    def __init__(self, out: BinaryIO) -> None:
        self.out: BinaryIO | None = out
        self.lines: list[bytes] = []  # written so far, up to ECHO_LINES
        self.position = 0  # the current attempt's line count
        self.pending = b""

    def rewind(self) -> None:
        """A new attempt starts: its lines are compared from the first."""
        self.position, self.pending = 0, b""

    def pump(self, pipe: BinaryIO) -> None:
        """Copy ``pipe`` to the end, then close it."""
        while chunk := os.read(pipe.fileno(), 65536):
            self.feed(chunk)
        self.feed(b"", final=True)
        pipe.close()

    def feed(self, chunk: bytes, final: bool = False) -> None:
        """Write the new complete lines of ``chunk`` (and, if ``final``, an unfinished last one)."""
        data = self.pending + chunk
        lines = _LINE.findall(data)
        end = sum(map(len, lines))
        self.pending = data[end:]
        if final and self.pending:
            lines.append(self.pending)
            self.pending = b""
        fresh = [line for line in lines if not self._seen(line)]
        if fresh and self.out is not None:
            try:
                self.out.write(b"".join(fresh))
                self.out.flush()
            except BrokenPipeError:  # e.g. `mbstate replay ... | head`: the child's output is drained
                self.out = None

    def _seen(self, line: bytes) -> bool:
        """Whether an earlier attempt wrote ``line`` here; records it otherwise."""
        index, self.position = self.position, self.position + 1
        if index < len(self.lines) and self.lines[index] == line:
            return True
        del self.lines[index:]
        if index < ECHO_LINES:
            self.lines.append(line)
        return False


def restart_when_full(live: bool, packages: tuple[str, ...] = PACKAGES, budget_mb: float = BUDGET_MB) -> None:
    """In a staged child (``ENV``), end with ``RESTART`` as soon as this process has compiled a
    kernel of ``packages`` and is over ``budget_mb``; nothing otherwise.

    numba announces each compilation and each of its compiler passes (numba.core.event). A kernel's
    compilation ends, then numba caches it, then the next pass or compilation starts: so at any start,
    every kernel finished so far is on disk, and that is where the child ends."""
    if os.environ.get(ENV) != "restart" or live:
        return
    from numba.core import event

    record = os.environ.get(ENV_FINISHED)
    earlier = _lines(record)
    finished = 0

    class RestartWhenFull(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            if finished and resident_mb() > budget_mb:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(RESTART)

        def on_end(self, ev: event.Event) -> None:
            nonlocal finished
            if ev.kind != "numba:compile":
                return
            dispatcher = ev.data["dispatcher"]
            module = getattr(dispatcher.py_func, "__module__", None) or ""
            args = tuple(ev.data["args"])
            if module.split(".")[0] not in packages or args not in dispatcher.overloads:
                return  # not ours, or failed
            key = f"{module}.{dispatcher.py_func.__qualname__}{args}"
            if key in earlier:
                return  # compiled by an earlier attempt too: numba did not cache it
            if record:
                with open(record, "a", encoding="utf-8") as out:
                    out.write(key.replace("\n", " ") + "\n")
            finished += 1

    listener = RestartWhenFull()
    for kind in ("numba:compile", "numba:run_pass"):
        event.register(kind, listener)


def _lines(path: str | None) -> set[str]:
    """The lines of ``path``; none if there is no such file."""
    try:
        with open(path or "", encoding="utf-8") as lines:
            return set(lines.read().splitlines())
    except OSError:
        return set()


def resident_mb(pid: int | str = "self") -> float:
    """The resident set [MB] of process ``pid``, by default this one (/proc/PID/statm); 0 where there
    is no such process or no /proc."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0
