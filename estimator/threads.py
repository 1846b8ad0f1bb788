"""BLAS on one thread for the process (every ``mbstate`` command, benchmark and lab cell runs it first).

The estimator's matrices are small (a step's rows are at most a few hundred entries wide), where
OpenBLAS's threads gain nothing and, after each call, keep a second core spinning: on a small
machine the estimator's own thread then waits whenever anything else wants that core (docs/performance.md,
BLAS on one thread).
"""

from __future__ import annotations

import importlib


def one_blas_thread() -> None:
    """Limit the BLAS libraries of numpy and SciPy (each brings its own OpenBLAS) to one thread; both
    are loaded first, as the limit reaches only the libraries loaded. (threadpoolctl is imported here:
    the parent of staged commands, estimator.compile_stages, stays light.)"""
    from threadpoolctl import threadpool_limits

    for module in ("numpy", "scipy.linalg"):
        importlib.import_module(module)
    threadpool_limits(1, user_api="blas")
