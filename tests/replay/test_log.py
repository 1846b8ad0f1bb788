"""The append-only msgpack log: round trip, reading while written, truncation, corruption."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from estimator.errors import MbstateError
from replay.log import FORMAT, LogFollower, LogWriter, read_log, records


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
    log = read_log(path)
    assert log.header["format"] == FORMAT and log.header["version"] == 2 and log.header["mechanism"] == "m.yaml"
    assert log.truth == [{"t": 0.0, "q": [1.0, 2.0], "lam": [0.5]}]
    assert log.readings[1] == {"sensor": "acc", "t": 0.002, "seq": 0, "value": [1.0, -9.81]}
    assert [kind for kind, _ in records(path)] == ["header", "truth", "reading", "reading"]


def test_readable_while_written_and_flushed_every_n_records(tmp_path) -> None:
    path = tmp_path / "run.log"
    log = write_sample(path, flush_records=2)
    follower = LogFollower(path)
    # header flushed on open; truth + first reading reached the flush count of 2; the third waits
    assert [kind for kind, _ in follower.poll()] == ["header", "truth", "reading"]
    assert follower.poll() == []
    log.close()
    assert [body["sensor"] for _, body in follower.poll()] == ["acc"]


def test_truncated_last_record_is_ignored_and_completed_later(tmp_path) -> None:
    path = tmp_path / "run.log"
    with write_sample(path):
        pass
    data = path.read_bytes()
    path.write_bytes(data[:-5])  # a crash in the middle of the last record
    assert len(read_log(path).readings) == 1
    follower = LogFollower(path)
    assert len(follower.poll()) == 3
    with open(path, "ab") as stream:  # the writer goes on
        stream.write(data[-5:])
    assert follower.poll()[0][1]["sensor"] == "acc"


def test_time_based_flush(tmp_path) -> None:
    path = tmp_path / "run.log"
    log = LogWriter(path, {}, flush_records=1000, flush_seconds=0.0)
    log.reading({"sensor": "gyro", "t": 0.0, "seq": 0, "value": 0.0})
    assert len(LogFollower(path).poll()) == 2
    log.close()


HEADER = msgpack.packb(["header", {"format": FORMAT, "version": 1}])


def test_a_version_1_log_is_read(tmp_path) -> None:
    path = tmp_path / "v1.log"
    path.write_bytes(HEADER + msgpack.packb(["reading", {"sensor": "g", "t": 0.0, "seq": 0, "value": 1.0}]))
    log = read_log(path)
    assert log.readings == [{"sensor": "g", "t": 0.0, "seq": 0, "value": 1.0}] and log.inputs[0][0] == "reading"


@pytest.mark.parametrize("content,match", [
    (b"", "no header record"),
    (msgpack.packb(["reading", {"sensor": "g"}]), "no header record"),
    (msgpack.packb(["header", {"format": FORMAT, "version": 99}]), "version 99"),
    (HEADER + msgpack.packb({"a": 1}), "not an mbstate log record"),
    (HEADER + b"\xc1", "corrupt record"),
    (HEADER * 2, "a second header"),
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
    with pytest.raises(MbstateError, match="cannot write"):
        LogWriter(tmp_path / "dir", {})
