"""``mbstate log export --format mcap`` (estimator.cli.log_mcap): the file reads back with the ``mcap``
reader validating every CRC, holds every record of the log on a channel of its kind, and every channel
has a JSON Schema that its messages meet (PlotJuggler refuses a channel without one)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from conftest import REPO, cli_exit_code
from mcap.reader import make_reader
from mcap.records import Channel, Message, Metadata, Schema
from mcap.stream_reader import CRCValidationError, StreamReader

from estimator.logfile import LogWriter, read_log, records
from estimator.node.plot_map import PlotMap
from estimator.node.publishing import estimate_fields
from estimator.online.interface import StepEstimate

MECHANISM = REPO / "configs/mechanisms/fourbar_crank.yaml"
SENSORS = REPO / "configs/sensors/fourbar.yaml"
COORDINATES = ("x1", "y1", "x2", "y2", "theta0")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("sim") / "sim.mbslog"
    assert cli_exit_code(["simulate", str(MECHANISM), "--sensors", str(SENSORS), "--t-end", "0.1",
                          "--forces", "motor=20", "--out", str(log)]) == 0
    return log


def estimate(k: int) -> dict:
    """An estimate record as the node writes it (estimator.node.intake): its message map and ``f``."""
    rng = np.random.default_rng(k)
    fields = estimate_fields(StepEstimate(
        step=k, t=0.1 + 1e-3 * k, q=rng.normal(size=5), qd=rng.normal(size=5), qdd=rng.normal(size=5),
        forces={"motor": 20.0 + k}, lam=rng.normal(size=4),
        sigma={"q": rng.random(5), "qd": rng.random(5), "forces": rng.random(1)} if k % 2 else None,
        latency=2e-4, update_steps=1, flags=("startup",) if k == 0 else (), model={"gravity_error": 0.01 * k}))
    return {**fields, "f": [fields["forces"]["motor"]]}


@pytest.fixture(scope="module")
def every_kind(simulated, tmp_path_factory) -> Path:
    """The simulated log with the node's records added: estimates (with and without σ), raw bytes, control
    records, and reading records that do not validate (a text value; an unknown sensor with a NaN stamp
    and bytes)."""
    path = tmp_path_factory.mktemp("node") / "node.mbslog"
    stream = records(simulated)
    _, header = next(stream)
    with LogWriter(path, {k: v for k, v in header.items() if k not in ("format", "version", "created")}) as log:
        for kind, body in stream:
            log.write(kind, body)
        for k in range(4):
            log.write("estimate", estimate(k))
        log.raw(b"\xc1 not msgpack")
        log.write("control", {"command": "skip", "reason": "burst"})
        log.write("reading", {"sensor": "crank_encoder", "t": 0.2, "seq": 1, "value": "high"})
        log.write("reading", {"sensor": "nobody", "t": math.nan, "seq": 2, "value": b"\x00\x01"})
        log.write("control", {"command": "resume"})
        log.write("control", {"command": "reset"})
    return path


def export(log: Path, out: Path, *options: str) -> Path:
    assert cli_exit_code(["log", "export", str(log), "--format", "mcap", "--out", str(out), *options]) == 0
    return out


def read_back(path: Path) -> tuple[dict, dict, list]:
    """(metadata by name, channel topic → its schema, messages as (topic, sequence, log time, JSON)), every
    record read with the chunks' and the data section's CRCs validated."""
    schemas, channels, metadata, messages = {}, {}, {}, []
    for record in StreamReader(str(path), validate_crcs=True).records:
        if isinstance(record, Schema):
            schemas[record.id] = record
        elif isinstance(record, Channel):
            assert record.message_encoding == "json" and record.schema_id in schemas  # no channel without schema
            channels[record.id] = record
        elif isinstance(record, Metadata):
            metadata[record.name] = record.metadata
        elif isinstance(record, Message):
            messages.append((channels[record.channel_id].topic, record.sequence, record.log_time,
                             json.loads(record.data)))
            assert record.publish_time == record.log_time
    by_topic = {}
    for channel in channels.values():
        schema = schemas[channel.schema_id]
        assert schema.encoding == "jsonschema"
        by_topic[channel.topic] = json.loads(schema.data)
    with open(path, "rb") as stream:
        summary = make_reader(stream, validate_crcs=True).get_summary()
    assert summary.statistics.message_count == len(messages) and len(summary.schemas) == len(by_topic)
    return metadata, by_topic, messages


def assert_meet_their_schemas(channels: dict, messages: list) -> None:
    for topic, schema in channels.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        mine = [message for name, _, _, message in messages if name == topic]
        assert mine, f"channel {topic} without messages"
        for message in mine:
            validator.validate(message)
            assert set(schema["required"]) <= set(message)


def test_a_simulated_log_reads_back_whole_with_every_crc_validated(simulated, tmp_path) -> None:
    metadata, channels, messages = read_back(export(simulated, tmp_path / "sim.mcap"))
    log = read_log(simulated)
    header = {key: value if isinstance(log.header[key], str) else json.loads(value)
              for key, value in metadata["mbstate-log header"].items()}
    assert header == log.header
    assert json.loads(metadata["mbstate-log records"]["records"]) == {"reading": 264, "truth": 101}
    assert [sequence for _, sequence, _, _ in messages] == list(range(1, 366))  # every record, in order
    assert set(channels) == {"truth", *(f"readings/{s}" for s in ("coupler_gyro", "crank_encoder",
                                                                  "coupler_accelerometer", "rocker_load_cell"))}
    readings = [(topic, time, message) for topic, _, time, message in messages if topic.startswith("readings/")]
    assert [message for _, _, message in readings] == log.readings  # as simulated: validated maps already
    assert all(topic == f"readings/{m['sensor']}" and time == max(0, round(m["t"] * 1e9))  # a stamp < 0: 0 ns
               for topic, time, m in readings)
    truth = [message for topic, _, _, message in messages if topic == "truth"]
    assert len(truth) == len(log.truth)
    for flat, record in zip(truth, log.truth):
        assert flat["timestamp"] == record["t"] and [flat[f"q.{c}"] for c in COORDINATES] == record["q"]
        assert flat["Q.theta0"] == record["f"][0] == 20.0 and [flat[f"lambda.{k}"] for k in range(4)] == record["lam"]
    assert_meet_their_schemas(channels, messages)


def test_every_kind_of_record_is_on_a_channel_whose_schema_its_messages_meet(every_kind, tmp_path) -> None:
    _, channels, messages = read_back(export(every_kind, tmp_path / "all.mcap"))
    log = read_log(every_kind)
    assert {"truth", "estimate", "malformed", "control", "raw"} <= set(channels)
    assert [sequence for _, sequence, _, _ in messages] == list(range(1, 365 + 4 + 6 + 1))
    assert_meet_their_schemas(channels, messages)
    plot = PlotMap(COORDINATES, 4, [("motor", "theta0")])
    estimates = [message for topic, _, _, message in messages if topic == "estimate"]
    assert estimates == [{**plot(record), **{"flags": record["flags"]}} for record in log.estimates]
    assert "q.theta0+2sigma" in estimates[1] and "q.theta0+2sigma" not in estimates[0]
    malformed = [message for topic, _, _, message in messages if topic == "malformed"]
    assert [(m["reason"], m["message"]) for m in malformed] == [
        ("invalid", {"sensor": "crank_encoder", "t": 0.2, "seq": 1, "value": "high"}),
        ("unknown_sensor", {"sensor": "nobody", "t": None, "seq": 2, "value": "AAE="})]
    assert [m for topic, _, _, m in messages if topic == "control"] == [
        {"command": "skip", "reason": "burst"}, {"command": "resume"}, {"command": "reset"}]
    assert [m for topic, _, _, m in messages if topic == "raw"] == [{"data": "wSBub3QgbXNncGFjaw=="}]
    times = [time for _, _, time, _ in messages]
    assert times[-6:] == [times[-7]] * 6  # records without a stamp take the one before


def test_records_and_sensor_narrow_the_export(every_kind, tmp_path) -> None:
    _, channels, _ = read_back(export(every_kind, tmp_path / "states.mcap", "--records", "truth", "estimates"))
    assert set(channels) == {"truth", "estimate"}
    _, channels, messages = read_back(export(every_kind, tmp_path / "crank.mcap", "--records", "readings",
                                             "--sensor", "crank_encoder"))
    assert set(channels) == {"readings/crank_encoder"} and len(messages) == 101


def test_the_crcs_catch_a_damaged_chunk(simulated, tmp_path) -> None:
    data = bytearray(export(simulated, tmp_path / "sim.mcap").read_bytes())
    data[len(data) // 3] ^= 0x10  # inside the one compressed chunk
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(bytes(data))
    with pytest.raises(CRCValidationError, match="crc validation failed in Chunk"):
        list(StreamReader(str(damaged), validate_crcs=True).records)


def test_bad_arguments_a_damaged_log_and_no_mcap_package_are_one_line_and_exit_2(simulated, tmp_path, capsys,
                                                                                monkeypatch) -> None:
    def one_error(argv: list[str], text: str) -> None:
        capsys.readouterr()
        assert cli_exit_code(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("mbstate log: error: ") and text in err

    one_error(["log", "export", str(simulated), "--out", str(tmp_path / "x.csv")], "a CSV takes --records with one of")
    one_error(["log", "export", str(simulated), "--records", "control", "--out", str(tmp_path / "x.csv")],
              "a CSV takes --records with one of")
    one_error(["log", "export", str(simulated), "--format", "mcap", "--records", "truth", "--sensor", "crank_encoder",
               "--out", str(tmp_path / "x.mcap")], "--sensor ID narrows the readings")
    data = bytearray(simulated.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged = tmp_path / "damaged.mbslog"
    damaged.write_bytes(bytes(data))
    one_error(["log", "export", str(damaged), "--format", "mcap", "--out", str(tmp_path / "d.mcap")], "at byte")
    assert not (tmp_path / "d.mcap").exists()
    monkeypatch.setitem(sys.modules, "mcap.writer", None)  # the export extra not installed
    one_error(["log", "export", str(simulated), "--format", "mcap", "--out", str(tmp_path / "e.mcap")],
              "--format mcap needs the mcap package: pip install -e '.[export]'")
