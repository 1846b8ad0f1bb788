"""``mbstate bench view`` (estimator.benchmarks.view) and its /proc proxies (estimator.benchmarks.proc_usage):
a busy child measured near one core, the processes told apart, the table's p99 against the run without
a view and the same node options, a short sitting of two demos, and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import cli_exit_code
from estimator.benchmarks.proc_usage import ProcessSampler, command_line, context_switches, cpu_ticks, descendants
from estimator.benchmarks.view import role, view_cost, view_table

BUSY = "import time\nend = time.perf_counter() + 30\nwhile time.perf_counter() < end: pass  # BUSY"


def test_a_busy_child_is_measured_near_one_core_and_its_switches_are_read() -> None:
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        sampler = ProcessSampler(os.getpid(), lambda pid, line: "busy" if "BUSY" in line else None, child.pid)
        sampler.open_window()
        subprocess.run([sys.executable, "-c", "import time; time.sleep(1.5)"], check=True)
        usage = sampler.stop()
        assert child.pid in descendants(os.getpid()) and "BUSY" in command_line(child.pid)
        assert cpu_ticks(child.pid) > 0 and len(context_switches(child.pid)) == 2
    finally:
        child.kill()
        child.wait()
    # one core when the machine has one to give; a shared machine gives it less, never more
    assert 0.2 < usage["busy"] < 1.1
    assert usage["voluntary/s"] >= 0 and usage["involuntary/s"] >= 0
    assert cpu_ticks(child.pid) is None and context_switches(child.pid) is None and command_line(child.pid) == ""


def test_the_processes_are_told_apart() -> None:
    assert role(7, "python -m estimator demo --json", 7) == "node"
    assert role(8, "/work/venv/bin/python -m estimator.view.run /tmp/p.json", 7) == "view"
    assert role(9, "/usr/lib/chromium/chromium --type=renderer --no-sandbox", 7) == "browser"
    assert role(10, "python -m estimator.demo.peer", 7) is None


def test_the_table_compares_each_p99_with_the_run_without_a_view_and_the_same_node_options() -> None:
    def figures(p99: float) -> dict[str, float]:
        return {"p50_ms": 0.2, "p99_ms": p99, "node": 0.7, "view": 0.05, "browser": 0.1, "voluntary/s": 300.0,
                "involuntary/s": 12.0}

    result = {"machine": "m", "duration_s": 10, "rounds": 5,
              "median": {"none": figures(0.4), "page": figures(0.6), "none --priority 50": figures(0.3),
                         "page --priority 50": figures(0.33)}}
    table = view_table(result).splitlines()
    assert table[2].startswith("  page: ") and table[2].endswith("p99 +50 %")
    assert table[4].startswith("  page --priority 50: ") and table[4].endswith("p99 +10 %")
    assert "browser 0.100" in table[2] and "involuntary 12.0" in table[2]


def test_a_short_sitting_measures_the_node_and_the_view() -> None:
    result = view_cost(rounds=1, duration=3.0, modes=("none", "view"))
    none, view = result["median"]["none"], result["median"]["view"]
    assert 0 < none["p50_ms"] <= none["p99_ms"] and 0 < view["p50_ms"] <= view["p99_ms"]
    assert none["node"] > 0.05 and view["node"] > 0.05 and view["view"] > 0.0 and "view" not in none
    assert "voluntary/s" in none and len(result["runs"]["view"]) == 1


@pytest.mark.parametrize("argv, message", [
    (["bench", "view", "--mechanism", "x"], "--mechanism: only for the accuracy"),
    (["bench", "view", "node"], "view runs alone"),
    (["bench", "node", "--priority", "5"], "--priority, --cpu: only for the view")])
def test_wrong_combinations_are_one_line_and_exit_2(argv, message, capsys) -> None:
    assert cli_exit_code(argv) == 2
    assert message in capsys.readouterr().err
