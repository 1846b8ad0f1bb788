"""The append-only log of a run: ground truth, sensor readings and estimates, as msgpack.

Format (version 2; version 1, without ``raw`` and ``control`` records, is read too). The file is a
plain concatenation of msgpack records, no framing and no index, so it can be appended to, read
while it is being written and cut anywhere: every record is a 2-element array ``[kind, body]``:

- ``["header", map]`` — first record, exactly once: ``format`` = "mbstate-log", ``version`` = 2,
  ``created`` (ISO 8601 UTC), and what the writer adds: what the log is recorded for
  (estimator.node.recorded_for: ``mechanism`` path, ``coordinates``, ``constraints``,
  ``actuators`` names, ``sensors`` (the parsed sensor configuration), ``parameters`` (the model's
  values by name; logs written before it lack this key)), …;
- ``["reading", map]`` — one sensor message, exactly the map of sensors.messages (``sensor``,
  ``t``, ``seq``, ``value``, optional ``cov``), appended before it is processed;
- ``["truth", map]`` — ground truth of a simulation: ``t`` [s], ``q``, ``qd``, ``qdd``, ``lam``
  and ``f`` (actuator forces in the header's ``actuators`` order), lists of floats;
- ``["estimate", map]`` — an estimate (same keys as truth, written by the estimator node);
- ``["raw", map]`` — a received message that is not a msgpack map (undecodable bytes, or another
  msgpack type): ``data``, its bytes verbatim, appended before it is processed;
- ``["control", map]`` — a command the node carried out that changes what it computes:
  ``command`` ("reset"), at its place among the readings.

Readings, raw messages and control records are the node's input, in the order it took them
(``Log.inputs``): replay and publish go through them in that order.

Records are written in the order they happen. The writer flushes every ``flush_records`` records
and whenever ``flush_seconds`` have passed since the last flush (checked at each write), and on
close: a crash loses at most that interval. A reader stops quietly at a truncated last record
(the file is being written, or the writer crashed) and raises MbstateError on corrupt data.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgpack
import numpy as np

from estimator.errors import MbstateError, shown

FORMAT, VERSION = "mbstate-log", 2
READABLE_VERSIONS = (1, 2)
KINDS = ("header", "reading", "truth", "estimate", "raw", "control")
INPUTS = ("reading", "raw", "control")


class LogWriter:
    """Appends records to a new log file; use as a context manager (closes and flushes)."""

    def __init__(self, path: str | Path, header: dict[str, Any], flush_records: int = 100,
                 flush_seconds: float = 0.1) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._stream: BinaryIO = open(self.path, "wb")
        except OSError as exc:
            raise MbstateError(f"{path}: cannot write ({exc.strerror})") from None
        self.flush_records, self.flush_seconds = flush_records, flush_seconds
        self._pending, self._flushed_at = 0, time.monotonic()
        created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.write("header", {"format": FORMAT, "version": VERSION, "created": created, **header})
        self.flush()

    def write(self, kind: str, body: dict[str, Any]) -> None:
        """Append one record ``[kind, body]``."""
        if kind not in KINDS:
            raise ValueError(f"unknown record kind {kind!r}")
        self._stream.write(msgpack.packb([kind, body], use_bin_type=True))
        self._pending += 1
        if self._pending >= self.flush_records or time.monotonic() - self._flushed_at >= self.flush_seconds:
            self.flush()

    def reading(self, message: dict[str, Any]) -> None:
        """Append a sensor message map (sensors.messages.Reading.to_map())."""
        self.write("reading", message)

    def raw(self, data: bytes) -> None:
        """Append a received message that is not a msgpack map, verbatim."""
        self.write("raw", {"data": data})

    def state(self, kind: str, t: float, **blocks: np.ndarray) -> None:
        """Append a ``truth`` or ``estimate`` record: t and named vectors (q, qd, qdd, lam, f)."""
        self.write(kind, {"t": float(t), **{k: [float(x) for x in np.ravel(v)] for k, v in blocks.items()}})

    def flush(self) -> None:
        self._stream.flush()
        self._pending, self._flushed_at = 0, time.monotonic()

    def close(self) -> None:
        if not self._stream.closed:
            self.flush()
            self._stream.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LogFollower:
    """Reads the complete records of a log that may still be growing: each ``poll()`` returns the
    records appended since the last call (a partial record waits for the next poll)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)

    def poll(self) -> list[tuple[str, dict[str, Any]]]:
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self._offset)
                data = stream.read()
        except OSError as exc:
            raise MbstateError(f"{self.path}: cannot read ({exc.strerror})") from None
        self._offset += len(data)
        self._unpacker.feed(data)
        records = []
        try:
            for record in self._unpacker:
                records.append(_checked(self.path, record))
        except (ValueError, TypeError) as exc:  # msgpack's errors; TypeError: a map key that is an array or map
            raise MbstateError(f"{self.path}: corrupt record near byte {self._unpacker.tell()} ({exc})") from None
        return records


def _checked(path: Path, record: Any) -> tuple[str, dict[str, Any]]:
    if (not isinstance(record, list) or len(record) != 2 or record[0] not in KINDS
            or not isinstance(record[1], dict)
            or (record[0] == "raw" and not isinstance(record[1].get("data"), bytes))
            or (record[0] == "control" and not isinstance(record[1].get("command"), str))):
        raise MbstateError(f"{path}: not an mbstate log record: {shown(record, 80)}")
    return record[0], record[1]


def records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every complete record of a log in file order, the header checked first."""
    follower = LogFollower(path)
    found = follower.poll()
    if not found or found[0][0] != "header" or found[0][1].get("format") != FORMAT:
        raise MbstateError(f"{path}: not an mbstate log (no header record)")
    if found[0][1].get("version") not in READABLE_VERSIONS:
        raise MbstateError(f"{path}: log format version {shown(found[0][1].get('version'))}, this reader knows "
                           f"{', '.join(map(str, READABLE_VERSIONS))}")
    yield from found


@dataclass
class Log:
    """A log read whole: the header, the reading maps, truth and estimate records, and the node's input
    in order (``inputs``: (kind, body) of every reading, raw and control record)."""

    header: dict[str, Any]
    readings: list[dict[str, Any]] = field(default_factory=list)
    truth: list[dict[str, Any]] = field(default_factory=list)
    estimates: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def read_log(path: str | Path) -> Log:
    """Read a whole log (tolerating a truncated last record)."""
    iterator = records(path)
    log = Log(header=next(iterator)[1])
    lists = {"reading": log.readings, "truth": log.truth, "estimate": log.estimates}
    for kind, body in iterator:
        if kind == "header":
            raise MbstateError(f"{path}: a second header record")
        if kind in lists:
            lists[kind].append(body)
        if kind in INPUTS:
            log.inputs.append((kind, body))
    return log
