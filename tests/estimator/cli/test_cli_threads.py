"""Every ``mbstate`` command runs BLAS on one thread (estimator.threads), whatever the process started with."""

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
print(before, blas_threads(), code, file=sys.stderr)  # the started count, the limited one, the exit code
"""


def test_a_command_limits_blas_to_one_thread() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    result = subprocess.run([sys.executable, "-c", PROBE, str(MECHANISMS / "pendulum.yaml")], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[2] [1] 0"  # every BLAS library (numpy's, SciPy's)
