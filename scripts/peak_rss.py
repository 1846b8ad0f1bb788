"""Peak resident set of a command with all its child processes (issue 36: memory).

    python scripts/peak_rss.py [--interval S] [--cold] -- COMMAND [ARG...]

Runs COMMAND and, every ``--interval`` seconds (default 0.02), sums the resident sets (/proc,
estimator.compile_stages.resident_mb) of it and every process descended from it; prints the peak of
that sum, the largest single process's peak (the kernel's maximum, os.wait4: exact, but per
process), the wall time and the exit code as one JSON line. ``--cold`` first deletes numba's cache
of the repository's packages (their ``__pycache__/*.nbi, *.nbc``), so that the command compiles its
kernels as on a first run. Sampling can miss a peak shorter than the interval. Linux only.

    python scripts/peak_rss.py --cold -- python -m estimator simulate \\
        configs/mechanisms/fourbar_crank.yaml --sensors configs/sensors/fourbar.yaml \\
        --forces motor=0 --t-end 600 --out /tmp/fourbar.mbslog
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from estimator.compile_stages import PACKAGES, resident_mb  # noqa: E402  (the packages whose kernels numba caches)


def parents() -> dict[int, int]:
    """{pid: parent pid} of every process (/proc/PID/stat)."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                table[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    return table


def tree_rss_mb(root: int) -> float:
    """The summed resident set [MB] of ``root`` and its descendants."""
    table = parents()
    tree, grown = {root}, True
    while grown:
        more = {pid for pid, parent in table.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(resident_mb(pid) for pid in tree)


def clear_cache() -> int:
    """Delete numba's cache files of the packages; how many."""
    files = [path for package in PACKAGES for pattern in ("**/__pycache__/*.nbi", "**/__pycache__/*.nbc")
             for path in (ROOT / package).glob(pattern)]
    for path in files:
        path.unlink()
    return len(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.02, help="sampling interval [s]")
    parser.add_argument("--cold", action="store_true", help="delete numba's cache first (a first run)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    cleared = clear_cache() if args.cold else 0
    started = time.monotonic()
    process = subprocess.Popen(command)
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mb(process.pid))
            done.wait(args.interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    print(json.dumps({"peak_tree_mb": round(peak[0], 1), "peak_process_mb": round(usage.ru_maxrss / 1024, 1),
                      "wall_s": round(time.monotonic() - started, 1), "exit": os.waitstatus_to_exitcode(status),
                      "cache_files_cleared": cleared, "command": " ".join(command)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
