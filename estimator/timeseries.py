"""Time series of a mechanism's state as CSV: ``t``, ``q.<coord>``, ``qd.<coord>``, ``qdd.<coord>``,
``Q.<coord>`` (generalized force applied on a coordinate), ``lambda.<k>`` (Lagrange multipliers),
``W.<frame>.<axis>`` (an external wrench on a named frame, in its axes about its origin: ``mx``, ``my``,
``mz`` [N·m], ``fx``, ``fy``, ``fz`` [N]), ``model.<name>`` (an estimator's model-error states, e.g.
``model.gravity_error``, ``model.mass_error.<body>``, ``model.length_error.<body>``,
``model.friction.<coordinate>``).

Only the groups present are written; SI units throughout (see DEVELOPERS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from estimator.errors import MbstateError

WRENCH_AXES = ("mx", "my", "mz", "fx", "fy", "fz")  # the components of an external wrench w = (t; f)


def wrench_columns(frame: str) -> list[str]:
    """The columns (and plot keys) of the external wrench on ``frame``: ``W.<frame>.<axis>``."""
    return [f"W.{frame}.{axis}" for axis in WRENCH_AXES]


@dataclass
class Trajectory:
    """States at times ``t`` [s]; arrays are (len(t), n) for q, qd, qdd and (len(t), m) for lam.

    ``forces`` maps a coordinate name to the generalized force applied on it at each time; ``wrenches`` a
    frame name to the external wrench on it at each time (len(t), 6); ``model`` a model-error state's name
    to its estimate at each time.
    """

    t: np.ndarray
    coordinate_names: tuple[str, ...]
    q: np.ndarray | None = None
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    forces: dict[str, np.ndarray] = field(default_factory=dict)
    lam: np.ndarray | None = None
    model: dict[str, np.ndarray] = field(default_factory=dict)
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)

    def columns(self) -> tuple[list[str], np.ndarray]:
        """CSV header and the data matrix."""
        header, blocks = ["t"], [self.t[:, None]]
        for prefix, values in (("q", self.q), ("qd", self.qd), ("qdd", self.qdd)):
            if values is not None:
                header += [f"{prefix}.{name}" for name in self.coordinate_names]
                blocks.append(values)
        for name, values in self.forces.items():
            header.append(f"Q.{name}")
            blocks.append(np.asarray(values)[:, None])
        if self.lam is not None:
            header += [f"lambda.{k}" for k in range(self.lam.shape[1])]
            blocks.append(self.lam)
        for frame, values in self.wrenches.items():
            header += wrench_columns(frame)
            blocks.append(np.asarray(values).reshape(-1, 6))
        for name, values in self.model.items():
            header.append(f"model.{name}")
            blocks.append(np.asarray(values)[:, None])
        return header, np.hstack(blocks)


class CsvWriter:
    """A CSV written in parts, for runs too long to hold whole: the first part's columns make the
    header line, every later part must have the same columns (full double precision). Use as a
    context manager."""

    def __init__(self, path: str | Path) -> None:
        self.path, self.header = path, None
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._stream = open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise MbstateError(f"{path}: cannot write ({exc.strerror})") from None

    def write(self, trajectory: Trajectory) -> None:
        """Append the rows of ``trajectory`` (the header first, with the first part)."""
        self.write_rows(*trajectory.columns())

    def write_rows(self, header: list[str], data: np.ndarray) -> None:
        """Append the rows of ``data`` under the columns ``header`` (other series than states: a
        sensor's readings)."""
        if self.header is None:
            self.header = header
            self._stream.write(",".join(header) + "\n")
        elif header != self.header:
            raise MbstateError(f"{self.path}: columns changed from {','.join(self.header)} to {','.join(header)}")
        try:
            np.savetxt(self._stream, data, delimiter=",", fmt="%.17g")
        except OSError as exc:
            raise MbstateError(f"{self.path}: cannot write ({exc.strerror})") from None

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> CsvWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_csv(path: str | Path, trajectory: Trajectory) -> None:
    """Write a trajectory as CSV with a header line (full double precision)."""
    with CsvWriter(path) as writer:
        writer.write(trajectory)
