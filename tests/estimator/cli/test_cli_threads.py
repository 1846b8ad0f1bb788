"""Every ``mbstate`` command runs BLAS on one thread (estimator.threads), whatever the process started with."""

import ast
import os
import subprocess
import sys

from conftest import MECHANISMS, REPO

PROBE = """
import sys
import numpy  # loads its OpenBLAS with the thread count of its environment (SciPy's comes with the command)
from threadpoolctl import threadpool_info
from estimator.cli import main

def blas_threads():
    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})

before = blas_threads()
code = main(["check", sys.argv[1]])
print(repr((before, blas_threads(), code)), file=sys.stderr)  # the started counts, the limited ones, the exit code
"""


def test_a_command_limits_blas_to_one_thread() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    result = subprocess.run([sys.executable, "-c", PROBE, str(MECHANISMS / "pendulum.yaml")], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    before, after, code = ast.literal_eval(result.stderr.strip().splitlines()[-1])
    assert (after, code) == ([1], 0)  # every BLAS library (numpy's, SciPy's) on one thread
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert before == [2] or cores < 2  # OpenBLAS starts no more threads than the cores it may use
