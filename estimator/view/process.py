"""The view in a process of its own, started by ``mbstate demo --view``: the node's process keeps its
loop (and its GIL) to itself, as with the demo's sensor process (estimator.demo.peer).

:class:`ViewProcess` owns a private temporary directory: the truth file and the ``ipc://`` endpoint the
view binds for readings live there; :meth:`ViewProcess.start` runs ``python -m estimator.view.run`` and
returns the page's URL once it serves. Leaving the ``with`` block stops the process (SIGTERM, then kill)
and removes the directory.
"""

from __future__ import annotations

import dataclasses
import json
import select
import subprocess
import sys
import tempfile
from pathlib import Path

from estimator.errors import MbstateError
from estimator.view.run import ViewParams

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where ``estimator`` is importable from
START_WAIT_S = 30.0  # [s] for the view to serve
EXIT_WAIT_S = 5.0  # [s] for it to stop after SIGTERM


class ViewProcess:
    """The view's process and its directory (module docstring)."""

    def __init__(self) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="mbstate-view-")
        self.directory = Path(self._directory.name)
        self.readings = f"ipc://{self.directory / 'readings'}"
        self.truth = self.directory / "truth.msgpack"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ViewProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, params: ViewParams) -> str:
        """Start the view with ``params``; its URL once it serves (MbstateError if it does not within START_WAIT_S)."""
        path = self.directory / "params.json"
        path.write_text(json.dumps(dataclasses.asdict(params)))
        self.process = subprocess.Popen([sys.executable, "-m", "estimator.view.run", str(path)], cwd=PACKAGE_ROOT,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], START_WAIT_S)
        url = self.process.stdout.readline().strip() if ready else ""
        if not url.startswith("http://"):
            self.close()
            raise MbstateError(f"the view did not start within {START_WAIT_S:g} s")
        return url

    def close(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
            try:
                self.process.wait(EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()
        self._directory.cleanup()
