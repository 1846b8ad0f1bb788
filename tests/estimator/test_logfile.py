"""The append-only log: round trip, streaming, reading while written, crash damage, corruption with
its offset, rotation into a stream of files, version 1 and 2 logs."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from estimator import logfile as log_module
from estimator.errors import MbstateError
from estimator.logfile import FORMAT, MAGIC, LogFollower, LogStream, LogWriter, log_files, read_log, records


def write_sample(path, flush_records: int = 100) -> LogWriter:
    log = LogWriter(path, {"mechanism": "m.yaml"}, flush_records=flush_records, flush_seconds=3600.0)
    log.state("truth", 0.0, q=np.array([1.0, 2.0]), lam=np.array([0.5]))
    log.reading({"sensor": "gyro", "t": 0.001, "seq": 0, "value": 0.25})
    log.reading({"sensor": "acc", "t": 0.002, "seq": 0, "value": [1.0, -9.81]})
    return log


def test_round_trip(tmp_path) -> None:
    path = tmp_path / "run.log"
    with write_sample(path):
        pass
    assert path.read_bytes().startswith(MAGIC)
    log = read_log(path)
    assert log.header["format"] == FORMAT and log.header["version"] == 3 and log.header["mechanism"] == "m.yaml"
    assert log.truth == [{"t": 0.0, "q": [1.0, 2.0], "lam": [0.5]}]
    assert log.readings[1] == {"sensor": "acc", "t": 0.002, "seq": 0, "value": [1.0, -9.81]}
    assert [kind for kind, _ in records(path)] == ["header", "truth", "reading", "reading"]


def test_read_in_small_chunks(tmp_path, monkeypatch) -> None:
    path = tmp_path / "run.log"
    with write_sample(path):
        pass
    monkeypatch.setattr(log_module, "READ_BYTES", 7)  # frames and the magic split across reads
    stream = LogStream(path)
    assert [kind for kind, _ in stream] == ["truth", "reading", "reading"]
    assert stream.integrity.warnings == [] and stream.integrity.counts == {"truth": 1, "reading": 2}


def test_readable_while_written_and_flushed_every_n_records(tmp_path) -> None:
    path = tmp_path / "run.log"
    log = write_sample(path, flush_records=2)
    follower = LogFollower(path)
    # header flushed on open; truth + first reading reached the flush count of 2; the third waits
    assert [kind for kind, _ in follower.poll()] == ["truth", "reading"] and follower.header["mechanism"] == "m.yaml"
    assert follower.poll() == []
    log.close()
    assert [body["sensor"] for _, body in follower.poll()] == ["acc"] and follower.ended


def test_flush_timer_of_an_idle_stream(tmp_path) -> None:
    path = tmp_path / "run.log"
    now = [0.0]
    log = LogWriter(path, {}, flush_records=1000, flush_seconds=0.05, clock=lambda: now[0])
    for k in range(99):
        log.reading({"sensor": "gyro", "t": 0.001 * k, "seq": k, "value": 0.0})
    log.flush_if_due()  # not due yet: nothing more is written
    follower = LogFollower(path)
    assert len(follower.poll()) < 99
    now[0] += 0.05  # the interval has passed without a record arriving
    log.flush_if_due()
    follower.poll()
    assert follower.count == 100  # the header and all 99 readings
    log.close()


def test_time_based_flush_at_a_write(tmp_path) -> None:
    path = tmp_path / "run.log"
    log = LogWriter(path, {}, flush_records=1000, flush_seconds=0.0)
    log.reading({"sensor": "gyro", "t": 0.0, "seq": 0, "value": 0.0})
    assert len(LogFollower(path).poll()) == 1
    log.close()


def test_a_record_cut_by_a_crash_is_a_warning(tmp_path) -> None:
    path = tmp_path / "run.log"
    log = write_sample(path)
    log.flush()  # kill -9 now: no end record, and a cut last record
    data = path.read_bytes()
    path.write_bytes(data[:-5])
    warnings = []
    assert len(read_log(path).readings) == 1
    assert [kind for kind, _ in LogStream(path, warnings.append)] == ["truth", "reading"]
    assert len(warnings) == 1 and "ends in a cut record" in warnings[0] and "no end record" in warnings[0]
    follower = LogFollower(path)
    assert len(follower.poll()) == 2
    with open(path, "ab") as stream:  # the writer goes on
        stream.write(data[-5:])
    assert follower.poll()[0][1]["sensor"] == "acc"


def flip(data: bytes, bit: int) -> bytes:
    damaged = bytearray(data)
    damaged[bit // 8] ^= 1 << bit % 8
    return bytes(damaged)


def sample_bytes(tmp_path) -> bytes:
    path = tmp_path / "sample.log"
    with LogWriter(path, {"mechanism": "m.yaml"}) as log:
        for k in range(200):
            log.reading({"sensor": "gyro", "t": 0.001 * k, "seq": k, "value": 0.25 * k})
            log.state("estimate", 0.001 * k, q=np.full(3, 0.1 * k))
    return path.read_bytes()


def test_every_single_bit_flip_is_reported_with_its_offset(tmp_path) -> None:
    data = sample_bytes(tmp_path)
    rng = np.random.default_rng(12)
    path = tmp_path / "damaged.log"
    detected = 0
    for bit in rng.choice(8 * len(data), size=50, replace=False):
        path.write_bytes(flip(data, int(bit)))
        with pytest.raises(MbstateError) as error:
            list(LogStream(path))
        message = str(error.value)
        assert "\n" not in message and str(path) in message
        detected += "corrupt record at byte" in message or "not an mbstate log" in message
    assert detected == 50


def test_damage_in_the_middle_is_an_error_not_a_crash(tmp_path) -> None:
    data = sample_bytes(tmp_path)
    path = tmp_path / "damaged.log"
    path.write_bytes(data[:5000] + data[5300:])  # bytes missing in the middle
    with pytest.raises(MbstateError, match="corrupt record at byte"):
        list(LogStream(path))
    # whole records missing in the middle: the next record's checksum (seeded with its index) fails
    starts = frame_offsets(data)
    path.write_bytes(data[:starts[10]] + data[starts[12]:])
    with pytest.raises(MbstateError, match=f"byte {starts[10]}: checksum mismatch"):
        list(LogStream(path))


def frame_offsets(data: bytes) -> list[int]:
    offsets, pos = [], len(MAGIC)
    while pos < len(data):
        offsets.append(pos)
        pos += log_module.FRAME.size + log_module.FRAME.unpack_from(data, pos)[0]
    return offsets


def test_rotation_by_size_and_the_files_as_one_stream(tmp_path) -> None:
    path = tmp_path / "rec" / "run.mbslog"
    with LogWriter(path, {"mechanism": "m.yaml"}, rotate_bytes=2000) as log:
        for k in range(100):
            log.reading({"sensor": "gyro", "t": 0.001 * k, "seq": k, "value": 0.0})
        paths = list(log.paths)
    assert len(paths) > 2 and paths[0].name == "run.000001.mbslog"
    assert all(p.stat().st_size < 2200 for p in paths)
    for number, part in enumerate(paths, start=1):
        assert LogStream(part).header["part"] == number and [k for k, _ in LogStream(part)]
    (tmp_path / "rec" / "notes.txt").write_text("not a log")
    assert log_files([tmp_path / "rec"]) == paths
    stream = LogStream(tmp_path / "rec")
    assert [body["seq"] for _, body in stream] == list(range(100)) and stream.integrity.warnings == []
    with pytest.raises(MbstateError, match="a file of the recording is missing"):
        list(LogStream([paths[0], paths[2]]))
    paths[1].write_bytes(paths[1].read_bytes()[:-3])  # a file before the last one cut
    with pytest.raises(MbstateError, match="truncated: ends in a cut record .* not the last file"):
        list(LogStream(paths))


def test_rotation_by_time(tmp_path) -> None:
    now = [0.0]
    with LogWriter(tmp_path / "run.mbslog", {}, rotate_seconds=3600.0, clock=lambda: now[0]) as log:
        log.reading({"sensor": "gyro", "t": 0.0, "seq": 0, "value": 0.0})
        now[0] += 3600.0
        log.reading({"sensor": "gyro", "t": 0.001, "seq": 1, "value": 0.0})
        assert log.part == 2
    assert [len(list(LogStream(p))) for p in log.paths] == [1, 1]


HEADER = msgpack.packb(["header", {"format": FORMAT, "version": 1}])


def test_a_version_1_log_is_read_with_a_note(tmp_path) -> None:
    path = tmp_path / "v1.log"
    path.write_bytes(HEADER + msgpack.packb(["reading", {"sensor": "g", "t": 0.0, "seq": 0, "value": 1.0}]))
    log = read_log(path)
    assert log.readings == [{"sensor": "g", "t": 0.0, "seq": 0, "value": 1.0}] and log.inputs[0][0] == "reading"
    warnings = []
    list(LogStream(path, warnings.append))
    assert warnings == [f"warning: {path}: log format version 1, without checksums: its integrity cannot be checked"]


def test_a_version_2_log_is_streamed(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v2.log"
    body = {"sensor": "g", "t": 0.0, "seq": 0, "value": list(range(50))}
    path.write_bytes(msgpack.packb(["header", {"format": FORMAT, "version": 2}])
                     + b"".join(msgpack.packb(["reading", {**body, "seq": k}]) for k in range(30)))
    monkeypatch.setattr(log_module, "READ_BYTES", 100)  # records split across reads
    assert [b["seq"] for _, b in LogStream(path)] == list(range(30))


FRAMED_HEADER = MAGIC + log_module.frame(0, msgpack.packb(["header", {"format": FORMAT, "version": 3}]))


@pytest.mark.parametrize("content,match", [
    (b"", "no header record"),
    (b"hello world", "no header record"),
    (msgpack.packb(["reading", {"sensor": "g"}]), "no header record"),
    (msgpack.packb(["header", {"format": FORMAT, "version": 99}]), "version 99"),
    (msgpack.packb(["header", {"format": FORMAT, "version": 3}]), "version 3"),
    (HEADER + msgpack.packb({"a": 1}), "not an mbstate log record"),
    (HEADER + b"\xc1", f"corrupt record at byte {len(HEADER)}"),
    (HEADER * 2, "a second header"),
    (FRAMED_HEADER + log_module.frame(1, msgpack.packb({"a": 1})), "not an mbstate log record"),
    (FRAMED_HEADER + log_module.frame(1, b"\xc1"), "undecodable"),
    (FRAMED_HEADER + log_module.frame(1, msgpack.packb(["end", {"records": 5}])), "records missing"),
    (FRAMED_HEADER + log_module.frame(1, msgpack.packb(["end", {"records": 1}]))
     + log_module.frame(2, msgpack.packb(["reading", {}])), "after the end record"),
    (FRAMED_HEADER + b"\xff\xff\xff\x7f" + bytes(6), "damaged frame header"),
])
def test_bad_logs_are_rejected(tmp_path, content: bytes, match: str) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    with pytest.raises(MbstateError, match=match):
        read_log(path)


def test_unreadable_paths(tmp_path) -> None:
    with pytest.raises(MbstateError, match="cannot read"):
        read_log(tmp_path / "missing.log")
    (tmp_path / "dir").mkdir()
    with pytest.raises(MbstateError, match="a folder without mbstate logs"):
        read_log(tmp_path / "dir")
    with pytest.raises(MbstateError, match="cannot write"):
        LogWriter(tmp_path / "dir", {})

