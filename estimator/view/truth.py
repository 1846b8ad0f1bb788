"""A simulation's truth for the view: the pose and the series at an estimate's time (``mbstate demo --view``).

The demo knows the truth it simulated (estimator.demo.cases) and hands it to the view as a
msgpack file ``{t: [N], q: [N][n], f: [N][a], actuators: [a names]}``; the view shows the sample nearest
to each estimate's t beside the estimate. The node's stream carries no truth.
"""

from __future__ import annotations

from pathlib import Path

import msgpack
import numpy as np

from estimator.wire import pack


def write_truth(path: Path, t: np.ndarray, q: np.ndarray, f: np.ndarray, actuators: list[str]) -> None:
    """Write the file the view reads (module docstring)."""
    path.write_bytes(pack({"t": np.asarray(t, float).tolist(), "q": np.asarray(q, float).tolist(),
                           "f": np.asarray(f, float).reshape(len(t), -1).tolist(), "actuators": list(actuators)}))


class TruthTrack:
    """The truth file at ``path``, looked up by time."""

    def __init__(self, path: str | Path) -> None:
        data = msgpack.unpackb(Path(path).read_bytes(), raw=False)
        self.t, self.q = np.asarray(data["t"], float), np.asarray(data["q"], float)
        self.f, self.actuators = np.asarray(data["f"], float), list(data["actuators"])

    def at(self, t: float) -> tuple[np.ndarray, dict[str, float]] | None:
        """q and the actuators' forces {name: value} at the sample nearest ``t``; None outside the truth."""
        if not self.t[0] <= t <= self.t[-1]:
            return None
        i = int(np.clip(np.searchsorted(self.t, t), 1, len(self.t) - 1))
        i -= int(t - self.t[i - 1] < self.t[i] - t)
        return self.q[i], dict(zip(self.actuators, self.f[i].tolist()))
