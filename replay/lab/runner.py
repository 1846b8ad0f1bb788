"""The lab's cells on Dask distributed: a LocalCluster of worker processes (one thread each: the
estimators hold the GIL) or a running scheduler at ``scheduler``; a progress bar on the terminal (tqdm)
as the cells finish, in whatever order the workers finish them. Each worker loads the suite and
simulates each truth once (replay.lab.cells), so a cell travels as its file path and names only.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from dask.distributed import Client, LocalCluster, as_completed
from tqdm import tqdm

from estimator.errors import MbstateError, one_line
from replay.lab.cells import CellResult, run_cell
from replay.lab.suite import Cell

SCHEDULER_TIMEOUT_S = 10.0  # [s] for a running scheduler (--scheduler) to answer


def _client(scheduler: str | None, cluster: LocalCluster | None) -> Client:
    """A client of ``cluster``, or of the running scheduler at ``scheduler`` (MbstateError, one line, when
    the address is malformed or nothing answers within SCHEDULER_TIMEOUT_S)."""
    if scheduler is None:
        return Client(cluster)
    try:
        return Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        raise MbstateError(f"--scheduler {scheduler}: cannot connect ({one_line(exc)})") from None


def run_cells(suite_path: Path, cells: Sequence[Cell], duration: float | None = None, workers: int = 2,
              scheduler: str | None = None, progress: bool = True) -> list[CellResult]:
    """Every cell's result, in the order of ``cells``; the series are kept for the first seed only."""
    first_seed = min(c.seed for c in cells)
    # the workers' own logs silenced up to CRITICAL: a cell's error comes back in its result, and at the
    # cluster's close a worker's heartbeat can race the scheduler's shutdown and log a traceback
    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  dashboard_address=None, silence_logs=logging.CRITICAL)
    with _client(scheduler, cluster) as client:
        futures = {client.submit(run_cell, Path(suite_path).resolve(), cell, duration, cell.seed == first_seed,
                                 pure=False): i for i, cell in enumerate(cells)}
        results: list[CellResult | None] = [None] * len(cells)
        with tqdm(total=len(cells), unit="cell", file=sys.stderr, disable=not progress) as bar:
            for future in as_completed(futures):
                result = future.result()
                results[futures[future]] = result
                bar.set_postfix_str(result.cell.label(), refresh=False)
                bar.update()
    if cluster is not None:
        cluster.close()
    return results
