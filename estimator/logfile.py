"""The append-only log of a run: ground truth, sensor readings and estimates, as checksummed msgpack.

Format version 3 (written). The file starts with the 8 bytes ``MAGIC`` (``\\x89MBSLOG\\n``: a
non-ASCII first byte and a newline, so that a text-mode transfer shows as corruption at byte 0),
then a sequence of frames, one per record::

    length  u32 little-endian   bytes of the payload
    check   u16 little-endian   low 16 bits of CRC-32 of the 4 length bytes
    crc     u32 little-endian   CRC-32 of the payload, started at the record's index in the file
    payload                     msgpack of the record [kind, body]

The length has its own check so that a damaged length is an error at once instead of a
record that seems to run past the end of the file (which is what a crash leaves); the payload's
CRC-32 is seeded with the record's index (0 for the header), so that a record lost or moved
between two intact ones fails the next check. CRC-32 detects every error of up to 3 bits and
every burst of up to 32 bits in a record, at 10 bytes per record and no buffering beyond one
record: the file stays appendable, readable while it is written and cut anywhere by a crash.
A per-block checksum (MCAP's CRC'd chunks) would cost less space but delay each record until its
block is written, and lose the whole block to one bad bit; per record is simpler and keeps the
flush timer's promise record by record.

Records, each a 2-element array ``[kind, body]``:

- ``["header", map]`` — first record, exactly once: ``format`` = "mbstate-log", ``version`` = 3,
  ``created`` (ISO 8601 UTC), and what the writer adds: what the log is recorded for
  (estimator.node.recorded_for: ``mechanism`` path, ``coordinates``, ``constraints``,
  ``actuators`` names, ``sensors`` (the parsed sensor configuration), ``parameters`` (the model's
  values by name; logs written before it lack this key)), …; a file of a rotated recording also
  has ``part`` (1, 2, …) and ``session`` (the ``created`` of part 1);
- ``["reading", map]`` — one sensor message, exactly the map of sensors.messages (``sensor``,
  ``t``, ``seq``, ``value``, optional ``cov``), appended before it is processed;
- ``["truth", map]`` — ground truth of a simulation: ``t`` [s], ``q``, ``qd``, ``qdd``, ``lam``
  and ``f`` (actuator forces in the header's ``actuators`` order), lists of floats;
- ``["estimate", map]`` — an estimate (same keys as truth, written by the estimator node);
- ``["raw", map]`` — a received message that is not a msgpack map (undecodable bytes, or another
  msgpack type): ``data``, its bytes verbatim, appended before it is processed;
- ``["control", map]`` — a command the node carried out that changes what it computes:
  ``command`` ("reset"), at its place among the readings; or a decision of its own: ``skip`` (with
  ``reason``, "behind" or "burst") and ``resume``, the readings between them recorded but not
  estimated (estimator.node.backlog);
- ``["end", map]`` — last record, written on close: ``records``, the number of records before it.

Readings, raw messages and control records are the node's input, in the order it took them
(``INPUTS``): replay and publish go through them in that order.

Versions 1 and 2 (a plain concatenation of msgpack records, no magic, no frames, no ``end``;
version 1 also without ``raw`` and ``control``) are still read, with a note that they cannot be
checked for integrity: a damaged byte there may go unnoticed.

Writing: records are written in the order they happen. The writer flushes every
``flush_records`` records, at a write when ``flush_seconds`` have passed since the last flush, at
``flush_if_due`` (the node calls it after every poll of its sockets, so an idle stream is flushed
too) and on close: a crash (kill -9) loses at most that interval (a power cut may lose what the
operating system had not written yet: no fsync). With ``rotate_bytes`` and/or ``rotate_seconds``
the writer starts a new file once the current one has reached that size or age: every file is
complete on its own (header, end record), named ``<stem>.<part:06d><suffix>`` after the
configured path, and the files in name order are one stream.

Reading streams, record by record in constant memory, whatever the file's size; a list of files
or folders (``log_files``: a folder's mbstate logs in name order) is read as one stream. Every
damaged record is an MbstateError naming the file and the byte offset of its frame, as is a
truncation that is not a crash's (a file before the last of a stream without its end record, a
part missing, an end record whose count disagrees). The one tolerated damage is a crash's: the
last file of the stream ending in a cut record or without its end record gives a warning.
"""

from __future__ import annotations

import datetime
import itertools
import struct
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgpack
import numpy as np

from estimator.errors import MbstateError, shown
from estimator.wire import pack

FORMAT, VERSION = "mbstate-log", 3
READABLE_VERSIONS = (1, 2, 3)
MAGIC = b"\x89MBSLOG\n"
FRAME = struct.Struct("<IHI")  # length, check of the length, CRC-32 of the payload
MAX_RECORD_BYTES = 1 << 28
KINDS = ("header", "reading", "truth", "estimate", "raw", "control", "end")
INPUTS = ("reading", "raw", "control")
READ_BYTES = 1 << 20  # a reader's chunk
UNPACK_ERRORS = (msgpack.UnpackException, ValueError, TypeError, RecursionError)

Record = tuple[str, dict[str, Any]]
Warn = Callable[[str], None]


def _length_check(length: int) -> int:
    return zlib.crc32(length.to_bytes(4, "little")) & 0xFFFF


def frame(index: int, payload: bytes) -> bytes:
    """The frame of the record number ``index`` of a file (module docstring)."""
    return FRAME.pack(len(payload), _length_check(len(payload)), zlib.crc32(payload, index)) + payload


def part_path(path: Path, part: int) -> Path:
    """The file of part ``part`` (1, 2, …) of a rotated recording configured as ``path``."""
    return path.with_name(f"{path.stem}.{part:06d}{path.suffix}")


class LogWriter:
    """Appends records to a new log (rotated when ``rotate_bytes`` / ``rotate_seconds`` are given);
    use as a context manager (flushes, writes the end record and closes). ``clock`` [s]: the wall
    time of the flush and rotation intervals."""

    def __init__(self, path: str | Path, header: dict[str, Any], flush_records: int = 100,
                 flush_seconds: float = 0.1, rotate_bytes: int | None = None,
                 rotate_seconds: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.configured, self.clock = Path(path), clock
        self.flush_records, self.flush_seconds = flush_records, flush_seconds
        self.rotate_bytes, self.rotate_seconds = rotate_bytes, rotate_seconds
        self.rotating = rotate_bytes is not None or rotate_seconds is not None
        created = _now()
        self._header = {"format": FORMAT, "version": VERSION, "created": created, **header}
        if self.rotating:
            self._header["session"] = created
        self.part, self._pending, self._flushed_at = 0, 0, self.clock()
        self.paths: list[Path] = []
        self._open_next()

    def _open_next(self) -> None:
        self.part += 1
        self.path = part_path(self.configured, self.part) if self.rotating else self.configured
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._stream: BinaryIO = open(self.path, "wb")
        except OSError as exc:
            raise MbstateError(f"{self.path}: cannot write ({exc.strerror})") from None
        self.paths.append(self.path)
        self._stream.write(MAGIC)
        self._index, self._bytes, self._opened = 0, len(MAGIC), self.clock()
        header = self._header if self.part == 1 else {**self._header, "created": _now()}
        self._append("header", {**header, "part": self.part} if self.rotating else header)
        self.flush()

    def _append(self, kind: str, body: dict[str, Any]) -> None:
        data = frame(self._index, pack([kind, body]))
        self._stream.write(data)
        self._index, self._bytes = self._index + 1, self._bytes + len(data)
        self._pending += 1

    def write(self, kind: str, body: dict[str, Any]) -> None:
        """Append one record ``[kind, body]`` (to a new file first when rotation is due)."""
        if kind not in KINDS[1:-1]:
            raise ValueError(f"unknown record kind {kind!r}")
        if self.rotating and self._index > 1 and (
                (self.rotate_bytes is not None and self._bytes >= self.rotate_bytes)
                or (self.rotate_seconds is not None and self.clock() - self._opened >= self.rotate_seconds)):
            self._close_file()
            self._open_next()
        self._append(kind, body)
        if self._pending >= self.flush_records or self.clock() - self._flushed_at >= self.flush_seconds:
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
        self._pending, self._flushed_at = 0, self.clock()

    def flush_if_due(self) -> None:
        """Flush when records are pending and ``flush_seconds`` have passed since the last flush (the
        timer of an idle stream)."""
        if self._pending and self.clock() - self._flushed_at >= self.flush_seconds:
            self.flush()

    def _close_file(self) -> None:
        self._append("end", {"records": self._index})
        self.flush()
        self._stream.close()

    def close(self) -> None:
        if not self._stream.closed:
            self._close_file()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class LogFollower:
    """Reads the complete records of one log file, which may still be growing: ``records()`` yields
    those appended since the last call, reading in chunks (a partial record waits); ``poll()`` is
    the same as a list. The header and the end record are checked and not yielded: the header is
    kept (``header``), the end record ends the file (``ended``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.version: int | None = None
        self.header: dict[str, Any] | None = None
        self.ended = False
        self.count = 0  # records read, the header included
        self.offset = 0  # bytes read
        self.position = 0  # where the last complete record ends
        self._buffer, self._base = b"", 0  # unparsed bytes and their offset in the file
        self._unpacker: msgpack.Unpacker | None = None

    @property
    def checked(self) -> bool:
        """Whether the records carry checksums (version 3)."""
        return self.version == 3

    @property
    def tail(self) -> int:
        """Bytes read after the last complete record (a record being written, or cut by a crash)."""
        if self._unpacker is not None:
            return self.offset - self._unpacker.tell()
        return len(self._buffer)

    def poll(self) -> list[Record]:
        return list(self.records())

    def records(self) -> Iterator[Record]:
        try:
            stream = open(self.path, "rb")
        except OSError as exc:
            raise MbstateError(f"{self.path}: cannot read ({exc.strerror})") from None
        with stream:
            stream.seek(self.offset)
            while data := stream.read(READ_BYTES):
                self.offset += len(data)
                yield from self._parse(data)

    def _parse(self, data: bytes) -> Iterator[Record]:
        if self.version is None and self._unpacker is None:
            self._buffer, data = self._buffer + data, b""
            if len(self._buffer) < len(MAGIC) and MAGIC.startswith(self._buffer):
                return
            if self._buffer.startswith(MAGIC):
                self.version, self._base, self._buffer = 3, len(MAGIC), self._buffer[len(MAGIC):]
            elif self._buffer[:1] == b"\x92":  # versions 1 and 2: a bare msgpack array [kind, body]
                self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
                data, self._buffer = self._buffer, b""
            else:
                raise MbstateError(f"{self.path}: not an mbstate log (no header record at byte 0)")
        if self._unpacker is not None:
            yield from self._unframed(data)
        else:
            yield from self._frames(data)

    def _frames(self, data: bytes) -> Iterator[Record]:
        buffer = self._buffer + data if self._buffer else data
        view, pos = memoryview(buffer), 0
        while len(buffer) - pos >= FRAME.size:
            length, check, crc = FRAME.unpack_from(buffer, pos)
            offset = self._base + pos
            if check != _length_check(length) or length > MAX_RECORD_BYTES:
                raise self._corrupt(offset, "damaged frame header")
            end = pos + FRAME.size + length
            if end > len(buffer):
                break
            payload = view[pos + FRAME.size:end]
            if zlib.crc32(payload, self.count) != crc:
                raise self._corrupt(offset, "checksum mismatch (damaged, or records missing before it)")
            try:
                record = msgpack.unpackb(payload, raw=False, strict_map_key=False)
            except UNPACK_ERRORS as exc:
                raise self._corrupt(offset, f"undecodable ({type(exc).__name__})") from None
            pos, self.position = end, self._base + end
            if (found := self._accept(record, offset)) is not None:
                yield found
        self._buffer, self._base = bytes(view[pos:]), self._base + pos

    def _unframed(self, data: bytes) -> Iterator[Record]:
        assert self._unpacker is not None
        for start in range(0, len(data), READ_BYTES):
            self._unpacker.feed(data[start:start + READ_BYTES])
            while True:
                offset = self._unpacker.tell()
                try:
                    record = next(self._unpacker)
                except StopIteration:
                    break
                except UNPACK_ERRORS as exc:
                    raise self._corrupt(offset, f"undecodable ({type(exc).__name__})") from None
                self.position = self._unpacker.tell()
                if (found := self._accept(record, offset)) is not None:
                    yield found

    def _corrupt(self, offset: int, what: str) -> MbstateError:
        return MbstateError(f"{self.path}: corrupt record at byte {offset}: {what}")

    def _accept(self, record: Any, offset: int) -> Record | None:
        """The record checked (None: the header or the end record)."""
        if self.ended:
            raise self._corrupt(offset, "a record after the end record")
        kind, body = _checked(self, record, offset)
        self.count += 1
        if self.header is None:
            if kind != "header" or body.get("format") != FORMAT:
                raise MbstateError(f"{self.path}: not an mbstate log (no header record at byte 0)")
            version = body.get("version")
            if version not in READABLE_VERSIONS or (version == 3) != self.checked:
                raise MbstateError(f"{self.path}: log format version {version!r}, this reader knows "
                                   f"{', '.join(map(str, READABLE_VERSIONS))}")
            self.header, self.version = body, version
            return None
        if kind == "header":
            raise self._corrupt(offset, "a second header record")
        elif kind == "end":
            if body.get("records") != self.count - 1:
                raise self._corrupt(offset, f"the end record counts {body.get('records')!r} records, the file "
                                            f"has {self.count - 1} (records missing)")
            self.ended = True
            return None
        return kind, body


def _checked(follower: LogFollower, record: Any, offset: int) -> Record:
    if (not isinstance(record, list) or len(record) != 2 or record[0] not in KINDS
            or not isinstance(record[1], dict)
            or (record[0] == "raw" and not isinstance(record[1].get("data"), bytes))
            or (record[0] == "control" and not isinstance(record[1].get("command"), str))
            or (record[0] == "end" and not follower.checked)):
        raise follower._corrupt(offset, f"not an mbstate log record: {shown(record, 80)}")
    return record[0], record[1]


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files of a stream: each path given, a folder replaced by its mbstate log files (by their
    first bytes) in name order."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".") and _is_log(p))
            if not found:
                raise MbstateError(f"{path}: a folder without mbstate logs")
            files += found
        else:
            files.append(path)
    if not files:
        raise MbstateError("no log given")
    return files


def _is_log(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            start = stream.read(len(MAGIC))
    except OSError:
        return False
    return start == MAGIC or start.startswith(b"\x92\xa6header")


@dataclass
class Integrity:
    """What a stream's reading found: files, records by kind, checks and a crash's damage."""

    files: list[Path] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    unchecked: list[Path] = field(default_factory=list)  # version 1/2 files: no checksums
    warnings: list[str] = field(default_factory=list)
    bytes: int = 0


class LogStream:
    """The records of one or more log files (``log_files``) as one stream: ``header`` is the first
    file's header, read on construction; iterating yields every other record (kind, body) in order,
    in constant memory; ``integrity`` fills in as it goes; ``warn`` gets each warning line
    (``warning: …``: a crash's damage, an old version's lack of checksums)."""

    def __init__(self, paths: str | Path | Sequence[str | Path], warn: Warn = lambda line: None) -> None:
        self.files = log_files([paths] if isinstance(paths, (str, Path)) else paths)
        self.warn = warn
        self.integrity = Integrity(files=self.files)
        self.total_bytes = sum(_size(p) for p in self.files)
        self._first = LogFollower(self.files[0])
        self._pending = self._first.records()
        self._head = next(self._pending, None)
        if self._head is None and self._first.header is None:
            raise MbstateError(f"{self.files[0]}: not an mbstate log (no header record at byte 0)")
        assert self._first.header is not None
        self.header = self._first.header

    @property
    def name(self) -> str:
        """The stream's name in messages: its first file (and how many more)."""
        more = len(self.files) - 1
        return f"{self.files[0]}" + (f" (+{more} more files)" if more else "")

    @property
    def done_bytes(self) -> int:
        """Bytes of the stream read up to the end of the last record yielded (the whole stream at its end)."""
        return self.integrity.bytes

    def __iter__(self) -> Iterator[Record]:
        previous: dict[str, Any] | None = None
        for number, path in enumerate(self.files):
            follower = self._first if number == 0 else LogFollower(path)
            pending = self._pending if number == 0 else follower.records()
            if number == 0 and self._head is not None:
                pending = itertools.chain([self._head], pending)
            done = self.integrity.bytes
            for kind, body in pending:
                self.integrity.counts[kind] = self.integrity.counts.get(kind, 0) + 1
                self.integrity.bytes = done + follower.position
                yield kind, body
            self.integrity.bytes = done + follower.offset
            if follower.header is None:
                raise MbstateError(f"{path}: not an mbstate log (no header record at byte 0)")
            self._file_done(follower, number == len(self.files) - 1, previous)
            previous = follower.header

    def _file_done(self, follower: LogFollower, last: bool, previous: dict[str, Any] | None) -> None:
        path, header = follower.path, follower.header
        assert header is not None
        self.integrity.versions.append(follower.version or 0)
        if previous is not None and "part" in header:
            if header.get("session") != previous.get("session"):
                raise MbstateError(f"{path}: from another recording (session {header.get('session')!r}, the "
                                   f"previous file's {previous.get('session')!r})")
            if header["part"] != previous.get("part", 0) + 1:
                raise MbstateError(f"{path}: part {header['part']!r} follows part {previous.get('part')!r} "
                                   f"(a file of the recording is missing)")
        if not follower.checked:
            self.integrity.unchecked.append(path)
            self._warning(f"{path}: log format version {follower.version}, without checksums: its integrity "
                          f"cannot be checked")
        damage = []
        if follower.tail:
            damage.append(f"ends in a cut record ({follower.tail} bytes at byte {follower.offset - follower.tail})")
        if follower.checked and not follower.ended:
            damage.append("has no end record")
        if damage and not last:
            raise MbstateError(f"{path}: truncated: {' and '.join(damage)}, and it is not the last file of "
                               f"the stream")
        if damage:
            self._warning(f"{path}: {' and '.join(damage)} (the writer crashed or is still writing); "
                          f"read {follower.count} complete records")

    def _warning(self, text: str) -> None:
        self.integrity.warnings.append(f"warning: {text}")
        self.warn(f"warning: {text}")

    def inputs(self) -> Iterator[Record]:
        """The node's input records (``INPUTS``) in order."""
        return ((kind, body) for kind, body in self if kind in INPUTS)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise MbstateError(f"{path}: cannot read ({exc.strerror})") from None


def records(path: str | Path | Sequence[str | Path], warn: Warn = lambda line: None) -> Iterator[Record]:
    """Every record of a log (or stream of logs) in order, the first header first."""
    stream = LogStream(path, warn)
    yield "header", stream.header
    yield from stream


@dataclass
class Log:
    """A small log read whole (tests, short tools; what streams uses LogStream): the header, the
    reading maps, truth and estimate records, and the node's input in order (``inputs``: (kind,
    body) of every reading, raw and control record)."""

    header: dict[str, Any]
    readings: list[dict[str, Any]] = field(default_factory=list)
    truth: list[dict[str, Any]] = field(default_factory=list)
    estimates: list[dict[str, Any]] = field(default_factory=list)
    inputs: list[Record] = field(default_factory=list)


def read_log(path: str | Path | Sequence[str | Path]) -> Log:
    """Read a whole log (tolerating a crash's damage at its end)."""
    stream = LogStream(path)
    log = Log(header=stream.header)
    lists = {"reading": log.readings, "truth": log.truth, "estimate": log.estimates}
    for kind, body in stream:
        if kind in lists:
            lists[kind].append(body)
        if kind in INPUTS:
            log.inputs.append((kind, body))
    return log
