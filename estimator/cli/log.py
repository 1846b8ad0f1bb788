"""``mbstate log info|export``: a recording as a user's data (estimator.logfile), read as a stream.

``info`` prints the header, the records by kind, each sensor's readings and rate, the time span
and the integrity found (checksums, a crash's damage); a damaged record is an error (exit 2).
``export`` writes one kind of record as CSV by the time-series convention of docs/formats.md: ``truth``
and ``estimates`` as ``t, q.<coord>, qd.<coord>, qdd.<coord>, Q.<coord>, lambda.<k>`` (the
actuators' forces on their coordinates; a log without ``actuator_coordinates`` names the
actuators) and, for estimates with external wrenches, ``W.<frame>.<axis>``, ``readings`` of one
sensor as ``t, seq, value.<axis>`` (t: the reading's stamp; readings that are not valid numbers of
the sensor's size are skipped and counted); with ``--format
mcap`` every record of the kinds given (all by default) as an MCAP file (estimator.cli.log_mcap).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from estimator.cli.log_mcap import export_mcap
from estimator.errors import MbstateError
from estimator.logfile import LogStream
from estimator.timeseries import CsvWriter, Trajectory

ROWS = 1000  # rows per CSV write
EXPORTS = {"truth": "truth", "estimates": "estimate", "readings": "reading", "control": "control", "raw": "raw"}
CSV_EXPORTS = ("truth", "estimates", "readings")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``log`` subcommand and its ``info`` and ``export`` commands."""
    parser = subparsers.add_parser(
        "log", help="what a log holds, or its records as CSV",
        description="Look into a log recorded by mbstate run or mbstate simulate (several files or a folder: a "
                    "rotated recording, read in order as one stream), in constant memory.")
    commands = parser.add_subparsers(dest="log_command", metavar="COMMAND", parser_class=type(parser))
    commands.required = True
    info = commands.add_parser(
        "info", help="header, records by kind, sensors and rates, time span, integrity",
        description="Read every record (checking each one's checksum) and print the header, the records by "
                    "kind, each sensor's readings and rate, the time span and the integrity found. A damaged "
                    "record is one error line with its byte offset, exit code 2.")
    info.add_argument("log", nargs="+", metavar="LOG", help="log file(s) or folder")
    info.set_defaults(run=run_info)
    export = commands.add_parser(
        "export", help="one kind of record as CSV, or every record as MCAP",
        description="Write the truth, estimate or (one sensor's) reading records as CSV: t, q.<coord>, "
                    "qd.<coord>, qdd.<coord>, Q.<coord>, lambda.<k> (and W.<frame>.<axis>) for states; t, seq, "
                    "value.<axis> for "
                    "readings. With --format mcap: every record (or those of --records) as an MCAP file of "
                    "JSON channels with their JSON Schemas, the header as metadata (needs the export extra).")
    export.add_argument("log", nargs="+", metavar="LOG", help="log file(s) or folder")
    export.add_argument("--format", choices=("csv", "mcap"), default="csv", help="csv (default) or mcap")
    export.add_argument("--records", nargs="+", choices=tuple(EXPORTS), metavar="KIND",
                        help=f"which records: one of {', '.join(CSV_EXPORTS)} for CSV (required); for MCAP any of "
                             f"{', '.join(EXPORTS)} (default: all)")
    export.add_argument("--sensor", metavar="ID", help="the sensor whose readings to write (CSV: with --records "
                                                       "readings; MCAP: its readings only)")
    export.add_argument("--out", required=True, metavar="FILE", help="CSV or MCAP file")
    export.set_defaults(run=run_export)


@dataclass
class SensorSpan:
    """Readings of one sensor: how many, first and last stamp."""

    count: int = 0
    first: float = math.inf
    last: float = -math.inf

    def add(self, t: Any) -> None:
        self.count += 1
        if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t):
            self.first, self.last = min(self.first, t), max(self.last, t)

    def describe(self) -> str:
        if self.last <= self.first:
            return f"{self.count} readings"
        return (f"{self.count} readings, t = {self.first:.6g} .. {self.last:.6g} s, "
                f"{(self.count - 1) / (self.last - self.first):.6g} Hz")


def run_info(args: argparse.Namespace) -> int:
    stream = LogStream(args.log)
    sensors: dict[str, SensorSpan] = {}
    span = SensorSpan()
    for kind, body in stream:
        if kind == "reading":
            name = body.get("sensor")
            sensors.setdefault(name if isinstance(name, str) else "(not a name)", SensorSpan()).add(body.get("t"))
        if kind in ("reading", "truth", "estimate"):
            span.add(body.get("t"))
    header, integrity = stream.header, stream.integrity
    versions = sorted(set(integrity.versions))
    print(f"{stream.name}: {len(stream.files)} file(s), {stream.total_bytes / 1e6:.3f} MB, format version "
          f"{', '.join(map(str, versions))}")
    print(f"created {header.get('created', '?')}; recorded for mechanism {header.get('mechanism', '?')}, "
          f"sensors {header.get('sensors_file', '?')}")
    if "simulation" in header:
        print(f"simulation: {header['simulation']}")
    print("records: " + (", ".join(f"{kind} {count}" for kind, count in sorted(integrity.counts.items()))
                         or "none"))
    for name, sensor in sorted(sensors.items()):
        print(f"  {name}: {sensor.describe()}")
    print(f"time span: t = {span.first:.6g} .. {span.last:.6g} s" if span.last >= span.first
          else "time span: no stamped record")
    if integrity.unchecked:
        print(f"integrity: {len(integrity.unchecked)} file(s) of version 1 or 2 have no checksums: not checked")
    damage = [w for w in integrity.warnings if "without checksums" not in w]
    if len(integrity.unchecked) < len(stream.files):
        print("integrity: every record's checksum verified" + ("" if damage else "; every file closed"))
    for line in damage:
        print(line)
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.format == "mcap":
        return _run_mcap_export(args)
    if args.records is None or len(args.records) != 1 or args.records[0] not in CSV_EXPORTS:
        raise MbstateError(f"a CSV takes --records with one of {', '.join(CSV_EXPORTS)}")
    records = args.records[0]
    if (records == "readings") != (args.sensor is not None):
        raise MbstateError("--sensor ID goes with --records readings (one sensor's readings per CSV), and only there")
    stream = LogStream(args.log, lambda line: print(line, file=sys.stderr))
    kind = EXPORTS[records]
    selected = (body for k, body in stream if k == kind and (args.sensor is None or body.get("sensor") == args.sensor))
    with CsvWriter(args.out) as writer:
        if kind == "reading":
            written, skipped = _write_readings(writer, selected)
        else:
            written, skipped = _write_states(writer, stream.header, selected), 0
    print(f"written: {args.out}, {written} rows" + (f" ({skipped} invalid readings skipped)" if skipped else ""))
    return 0


def _run_mcap_export(args: argparse.Namespace) -> int:
    records = set(args.records or EXPORTS)
    if args.sensor is not None and "readings" not in records:
        raise MbstateError("--sensor ID narrows the readings: it needs them among --records")
    stream = LogStream(args.log, lambda line: print(line, file=sys.stderr))
    counts = export_mcap(stream, args.out, {EXPORTS[name] for name in records}, args.sensor)
    print(f"written: {args.out}, {sum(counts.values())} messages on {len(counts)} channels ("
          + ", ".join(f"{topic} {count}" for topic, count in sorted(counts.items())) + ")")
    return 0


def _chunks(items: Iterable[Any], size: int = ROWS) -> Iterable[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_states(writer: CsvWriter, header: dict[str, Any], records: Iterable[dict[str, Any]]) -> int:
    """Truth or estimate records as state rows; the number written."""
    coordinates = tuple(header.get("coordinates") or ())
    forces = header.get("actuator_coordinates") or header.get("actuators") or []
    written = 0
    for chunk in _chunks(records):
        n = len(chunk[0].get("q", ())) if chunk else 0
        names = coordinates if len(coordinates) == n else tuple(str(k) for k in range(n))
        try:
            f = np.array([r.get("f", []) for r in chunk], float).reshape(len(chunk), -1)
            writer.write(Trajectory(
                t=np.array([r["t"] for r in chunk], float), coordinate_names=names,
                q=np.array([r["q"] for r in chunk], float).reshape(len(chunk), n),
                qd=np.array([r["qd"] for r in chunk], float).reshape(len(chunk), n),
                qdd=np.array([r["qdd"] for r in chunk], float).reshape(len(chunk), n),
                forces={str(forces[j]) if j < len(forces) else str(j): f[:, j] for j in range(f.shape[1])},
                lam=np.array([r["lam"] for r in chunk], float).reshape(len(chunk), -1),
                wrenches={str(frame): np.array([_wrenches(r).get(frame, [np.nan] * 6) for r in chunk],
                                               float).reshape(len(chunk), 6)
                          for frame in _wrenches(chunk[0])}))
        except (KeyError, TypeError, ValueError) as exc:
            raise MbstateError(f"{writer.path}: a state record of the log without the keys t, q, qd, qdd, lam of "
                               f"consistent sizes ({exc})") from None
        written += len(chunk)
    if not written:
        writer.write_rows(["t"], np.zeros((0, 1)))
    return written


def _wrenches(record: dict[str, Any]) -> dict[str, Any]:
    """An estimate record's external wrenches by frame ({} without); TypeError for a record whose
    ``wrenches`` is not a map."""
    wrenches = record.get("wrenches") or {}
    if not isinstance(wrenches, dict):
        raise TypeError("wrenches is not a map of frame names to wrenches")
    return wrenches


def _reading_row(body: dict[str, Any]) -> list[float] | None:
    values = body.get("value")
    values = values if isinstance(values, list) else [values]
    row = [body.get("t"), body.get("seq"), *values]
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in row):
        return [float(x) for x in row]
    return None


def _write_readings(writer: CsvWriter, readings: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """One sensor's readings as rows t, seq, value.<axis>; (written, skipped)."""
    written = skipped = 0
    size: int | None = None
    for chunk in _chunks(readings):
        valid = [row for row in map(_reading_row, chunk) if row is not None]
        size = size or (len(valid[0]) if valid else None)
        rows = [row for row in valid if len(row) == size]
        skipped += len(chunk) - len(rows)
        if rows and size is not None:
            writer.write_rows(["t", "seq", *(f"value.{k}" for k in range(size - 2))], np.array(rows))
            written += len(rows)
    if not written:
        writer.write_rows(["t", "seq"], np.zeros((0, 2)))
    return written, skipped
