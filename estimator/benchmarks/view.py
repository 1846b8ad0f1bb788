"""The live view's cost to the node (issue 41): ``mbstate demo --json`` run after run in one sitting, in
three modes per round: no view, ``--view`` with no page open, and ``--view`` with the page open in Debian's
chromium, headless, driven by Playwright (the ``test`` extra).

Reported per mode, the median over the rounds of the node's step latency p50 and p99 (the demo's summary:
the acceptance's figure, fair only on an otherwise idle machine) and of the proxies that hold on a shared
one (estimator.benchmarks.proc_usage), read from WINDOW_DELAY_S after the demo says it runs until it ends:
the cores used by the node's process, the view's process and the browser's processes (summed), and the
node loop's context switches per second (involuntary ones: the loop preempted while it could run).
The browser is started before each demo, as a user's browser is open before they load the page: its
start-up is not the view's cost. Node options (``--priority``, ``--cpu``: estimator.node.realtime) add the
same three modes with them to each round, so that both are measured in one sitting.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from estimator.benchmarks import machine
from estimator.benchmarks.proc_usage import ProcessSampler
from estimator.errors import MbstateError

MODES = ("none", "view", "page")
WINDOW_DELAY_S = 2.0  # [s] after "running:": the view process and the page have started
URL_WAIT_S = 120.0  # [s] for the demo's URL line (a first run compiles the kernels)
VIEWPORT = {"width": 1100, "height": 760}  # the browser test's
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def role(pid: int, command: str, node: int) -> str | None:
    """What process ``pid`` is to the benchmark: the node (the demo's), the view, the browser or nothing."""
    if pid == node:
        return "node"
    if "estimator.view.run" in command:
        return "view"
    return "browser" if "chrom" in command.split(" ", 1)[0] else None


@contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium (Playwright's ``Browser``), or MbstateError when it or Playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise MbstateError("the page mode needs Playwright (pip install -e '.[test]')") from None
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise MbstateError("the page mode needs chromium (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def one_demo(mode: str, duration: float, node_options: Sequence[str], chromium: Any = None) -> dict[str, float]:
    """One demo in ``mode``: its latency p50 / p99 [ms] and the proxies (module docstring)."""
    command = [sys.executable, "-m", "estimator", "demo", "--json", "--duration", f"{duration:g}", *node_options]
    demo = subprocess.Popen(command + ["--view"] * (mode != "none"), cwd=PACKAGE_ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = ProcessSampler(os.getpid(), lambda pid, line: role(pid, line, demo.pid), demo.pid)
    window = threading.Timer(WINDOW_DELAY_S, sampler.open_window)
    url, running, announced = [], threading.Event(), threading.Event()
    threading.Thread(target=_read_progress, args=(demo.stderr, url, running, announced), daemon=True).start()
    page = None
    try:
        if not running.wait(URL_WAIT_S):
            raise MbstateError(f"the demo did not start running within {URL_WAIT_S:g} s")
        window.start()
        if mode == "page":
            if not announced.wait(URL_WAIT_S) or not url:
                raise MbstateError("the demo printed no URL")
            page = chromium.new_page(viewport=VIEWPORT)
            page.goto(url[0])
        out = demo.stdout.read()
        demo.wait()
    finally:
        window.cancel()
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        usage = sampler.stop()
        if page is not None:
            page.close()
    if demo.returncode != 0:
        raise MbstateError(f"{' '.join(command)} failed (exit {demo.returncode})")
    latency = json.loads(out)["latency_ms"]
    return {"p50_ms": latency["p50"], "p99_ms": latency["p99"], **usage}


def _read_progress(stream: Any, url: list[str], running: threading.Event, announced: threading.Event) -> None:
    """Read the demo's stderr to its end: set ``running`` at its "running:" line, and ``announced`` once the
    view's URL is in ``url`` (both at the end, whatever was seen)."""
    for line in stream:
        if "running:" in line:
            running.set()
        elif not url and (found := re.search(r"http://127\.0\.0\.1:\d+/", line)):
            url.append(found.group(0))
            announced.set()
    running.set()
    announced.set()


def view_cost(rounds: int = 5, duration: float = 10.0, node_options: Sequence[str] = (),
              modes: Sequence[str] = MODES) -> dict[str, Any]:
    """``rounds`` rounds of the ``modes``, one demo of ``duration`` [s] each, and with ``node_options`` the
    same modes again with them in each round: every run, and per case the median of each figure."""
    cases = [(mode, mode, ()) for mode in modes]
    if node_options:
        cases += [(f"{mode} {' '.join(node_options)}", mode, node_options) for mode in modes]
    runs: dict[str, list[dict[str, float]]] = {case: [] for case, _, _ in cases}
    with browser() if "page" in modes else _nothing() as chromium:
        for _ in range(rounds):
            for case, mode, options in cases:
                runs[case].append(one_demo(mode, duration, options, chromium))
                print(f"  {case}: {_line(runs[case][-1])}", file=sys.stderr, flush=True)
    medians = {case: {key: statistics.median(run.get(key, 0.0) for run in rows) for key in rows[0]}
               for case, rows in runs.items()}
    return {"machine": machine(), "duration_s": duration, "rounds": rounds, "median": medians, "runs": runs}


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def _line(figures: dict[str, float]) -> str:
    """One case's figures on one line (a proxy missing: 0, as when its process never ran in the window)."""
    cores = ", ".join(f"{name} {figures.get(name, 0):.3f}" for name in ("node", "view", "browser"))
    return (f"p50 {figures['p50_ms']:.3f} ms, p99 {figures['p99_ms']:.3f} ms; cores: {cores}; node loop switches/s: "
            f"voluntary {figures.get('voluntary/s', 0):.0f}, involuntary {figures.get('involuntary/s', 0):.1f}")


def view_table(result: dict[str, Any]) -> str:
    """The medians per case, each p99 against the run without a view and with the same node options."""
    medians = result["median"]
    lines = [f"{result['machine']}; mbstate demo --duration {result['duration_s']:g}, median of {result['rounds']} "
             "rounds (cores: CPU seconds per wall second)"]
    for case, figures in medians.items():
        base = medians[case.replace("page", "none", 1).replace("view", "none", 1)]["p99_ms"]
        change = f", p99 {100 * (figures['p99_ms'] / base - 1):+.0f} %" if not case.startswith("none") else ""
        lines.append(f"  {case}: {_line(figures)}{change}")
    return "\n".join(lines)
