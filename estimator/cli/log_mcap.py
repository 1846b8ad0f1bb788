"""``mbstate log export --format mcap``: a recording as an MCAP file, for the viewers of the field
(PlotJuggler, Foxglove, the ``mcap`` tools), read as a stream in constant memory.

MCAP (mcap.dev, format version 0) written with the ``mcap`` package (the ``export`` extra):

- metadata ``mbstate-log header``: the log's header (estimator.logfile), one entry per key, text as it
  is and any other value as JSON; metadata ``mbstate-log records``, written last: ``records``, the
  log's records by kind (the header and end records not counted), and ``warnings`` (a crash's damage),
  as JSON;
- one channel per kind of record, JSON messages (``json``) with a JSON Schema each (``jsonschema``,
  draft 2020-12; PlotJuggler refuses a channel without a schema): ``readings/<sensor>`` the readings of
  each sensor of the header, as validated (sensors.messages: ``sensor``, ``t``, ``seq``, ``value`` and
  ``cov``: a number for a one-axis sensor, else a list); ``malformed`` the reading records that do not
  validate (``reason`` and ``error`` as the node counts and logs them, ``message`` the map);
  ``truth`` and ``estimate`` the state records as the node's plot stream maps them
  (estimator.node.plot_map: ``timestamp``, ``q.<coord>``, …, ``Q.<coord>``, ``lambda.<k>``; an
  estimate also ``step``, ``latency_ms``, ``update_steps``, its 2σ bands, ``model.<name>`` and
  ``flags``; its ``f`` repeats its forces and is left out), so a recording plots with the same
  series names as the live stream; ``control`` the record as it is; ``raw`` ``data``, the bytes in
  base64;
- each message's log and publish time: its record's stamp ``t`` in ns (clamped to 0 … 2⁶⁴ − 1 ns);
  a record without a stamp (raw, control, malformed) takes the time of the record before it; its
  sequence number is its record's number in the log (1: the first after the header; modulo 2³²);
- zstd-compressed chunks, CRC-32 of every chunk and of the data section.

In JSON a number that is not finite is null, bytes are base64 text and map keys are text.
"""

from __future__ import annotations

import base64
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from estimator.errors import MbstateError
from estimator.logfile import LogStream
from estimator.node.plot_map import COUNTS, PlotMap
from sensors.config import KINDS as SENSOR_KINDS
from sensors.messages import MessageError, validate

HEADER_METADATA, RECORDS_METADATA = "mbstate-log header", "mbstate-log records"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
LIBRARY = "mbstate"
NUMBER = {"type": "number"}
MAYBE_NUMBER = {"type": ["number", "null"], "description": "null: not finite in the log"}
TEXTS = {"type": "array", "items": {"type": "string"}}
LAST_NS, SEQUENCES = 2**64 - 1, 2**32


def to_json(value: Any) -> Any:
    """``value`` with what JSON cannot hold replaced (module docstring): non-finite floats, bytes, keys."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def encoded(value: Any) -> bytes:
    """JSON bytes of a message (compact; the common case, plain finite data, without a second walk)."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()
    except (ValueError, TypeError):
        return json.dumps(to_json(value), separators=(",", ":")).encode()


def nanoseconds(t: Any, previous: int) -> int:
    """A record's stamp [s] as an MCAP time [ns]; ``previous`` when it has none."""
    if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t):
        return min(max(round(t * 1e9), 0), LAST_NS)
    return previous


def _object(title: str, properties: dict[str, Any], required: list[str], **more: Any) -> dict[str, Any]:
    return {"$schema": SCHEMA_DIALECT, "title": title, "type": "object", "properties": properties,
            "required": required, **more}


def _numbers(size: int) -> dict[str, Any]:
    return NUMBER if size == 1 else {"type": "array", "items": NUMBER, "minItems": size, "maxItems": size}


def reading_schema(sensor: str, kind: str, size: int) -> dict[str, Any]:
    """A validated reading of ``sensor`` (sensors.messages), whose value has ``size`` axes."""
    properties = {"sensor": {"const": sensor}, "t": {**NUMBER, "description": "stamp, sensor clock [s]"},
                  "seq": {"type": "integer", "minimum": 0}, "value": _numbers(size), "cov": _numbers(size * size)}
    return _object(f"mbstate reading of {sensor} ({kind})", properties, ["sensor", "t", "seq", "value"],
                   additionalProperties=False)


def state_schema(plot: PlotMap, kind: str) -> dict[str, Any]:
    """A truth or estimate record as its plot map (estimator.node.plot_map); an estimate has its forces
    (the estimated ones), counts, bands, model states and flags as they come."""
    required = ["timestamp", *plot.q, *plot.qd, *plot.qdd, *plot.lam] + (plot.f if kind == "truth" else [])
    properties = dict.fromkeys([*required, *plot.f], MAYBE_NUMBER)
    more: dict[str, Any] = {}
    if kind == "estimate":
        bands = [key for pair in [*plot.bands["q"], *plot.bands["qd"], *plot.force_bands.values()] for key in pair]
        properties |= dict.fromkeys([*COUNTS, *bands], MAYBE_NUMBER) | {"flags": TEXTS}
        more["patternProperties"] = {r"^model\.": MAYBE_NUMBER}
    return _object(f"mbstate {kind} (plot map)", properties, required, additionalProperties=False, **more)


SCHEMAS: dict[str, dict[str, Any]] = {
    "malformed": _object("mbstate reading record that does not validate",
                         {"reason": {"type": "string"}, "error": {"type": "string"}, "message": {"type": "object"}},
                         ["reason", "error", "message"], additionalProperties=False),
    "control": _object("mbstate control record", {"command": {"type": "string"}, "reason": {"type": "string"}},
                       ["command"]),
    "raw": _object("mbstate raw record: a received message that is not a msgpack map",
                   {"data": {"type": "string", "contentEncoding": "base64"}}, ["data"], additionalProperties=False),
}


def header_metadata(header: Mapping[str, Any]) -> dict[str, str]:
    """The header as MCAP metadata (text to text)."""
    return {str(k): v if isinstance(v, str) else json.dumps(to_json(v)) for k, v in header.items()}


def sensor_sizes(header: Mapping[str, Any]) -> dict[str, tuple[str, int]]:
    """Sensor id → (kind, value size) of the sensors the header records (its ``sensors`` document)."""
    document = header.get("sensors")
    entries = document.get("sensors") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {name: (entry["kind"], SENSOR_KINDS[entry["kind"]].dimension) for name, entry in entries.items()
            if isinstance(name, str) and isinstance(entry, dict) and entry.get("kind") in SENSOR_KINDS}


class McapExport:
    """Writes the records of a log stream to an MCAP ``writer`` (module docstring): ``kinds``, the record
    kinds to write; ``sensor``, the one sensor whose readings to write (None: all)."""

    def __init__(self, writer: Any, stream: LogStream, kinds: set[str], sensor: str | None) -> None:
        self.writer, self.stream, self.kinds, self.sensor = writer, stream, kinds, sensor
        self.sensors = sensor_sizes(stream.header)
        self.dimensions = {name: size for name, (_, size) in self.sensors.items()}
        self.channels: dict[str, int] = {}
        self.counts: Counter[str] = Counter()
        self.plot: PlotMap | None = None
        self.time = 0  # [ns] of the last message
        self.kind, self.number = "", 0  # the record being written and its number in the log

    def run(self) -> Counter[str]:
        """Every record of the stream written; messages per topic."""
        self.writer.start(library=LIBRARY)
        self.writer.add_metadata(HEADER_METADATA, header_metadata(self.stream.header))
        handlers: dict[str, Callable[[dict[str, Any]], tuple[str, Any, Any] | None]] = {
            "reading": self._reading, "truth": self._state, "estimate": self._state,
            "control": lambda body: ("control", to_json(body), None),
            "raw": lambda body: ("raw", {"data": base64.b64encode(body["data"]).decode("ascii")}, None)}
        for number, (kind, body) in enumerate(self.stream, 1):
            if kind not in self.kinds:
                continue
            self.kind, self.number = kind, number
            message = handlers[kind](body)
            if message is not None:
                self._write(*message)
        integrity = self.stream.integrity
        self.writer.add_metadata(RECORDS_METADATA, {"records": json.dumps(integrity.counts),
                                                    "warnings": json.dumps(integrity.warnings)})
        self.writer.finish()
        return self.counts

    def _write(self, topic: str, message: Any, t: Any) -> None:
        channel = self.channels.get(topic)
        if channel is None:
            channel = self.channels[topic] = self._register(topic)
        self.time = nanoseconds(t, self.time)
        self.writer.add_message(channel, log_time=self.time, data=encoded(message), publish_time=self.time,
                                sequence=self.number % SEQUENCES)
        self.counts[topic] += 1

    def _register(self, topic: str) -> int:
        if topic.startswith("readings/"):
            name = topic.removeprefix("readings/")
            kind, size = self.sensors[name]
            schema = reading_schema(name, kind, size)
        elif topic in ("truth", "estimate"):
            assert self.plot is not None
            schema = state_schema(self.plot, topic)
        else:
            schema = SCHEMAS[topic]
        schema_id = self.writer.register_schema(name=schema["title"], encoding="jsonschema",
                                                data=json.dumps(schema).encode())
        return self.writer.register_channel(topic=topic, message_encoding="json", schema_id=schema_id)

    def _reading(self, body: dict[str, Any]) -> tuple[str, Any, Any] | None:
        try:
            reading = validate(body, self.dimensions)
        except MessageError as exc:
            if self.sensor is not None:
                return None
            return "malformed", {"reason": exc.reason, "error": str(exc), "message": to_json(body)}, None
        if self.sensor is not None and reading.sensor != self.sensor:
            return None
        return f"readings/{reading.sensor}", reading.to_map(), reading.t

    def _state(self, body: dict[str, Any]) -> tuple[str, Any, Any]:
        plot = self.plot = self.plot or self._plot_map(body)
        n, m = len(plot.q), len(plot.lam)
        forces = body.get("forces", {}) if self.kind == "estimate" else {}
        sizes = {"q": n, "qd": n, "qdd": n, "lam": m, **({} if "forces" in body else {"f": len(plot.f)})}
        if (any(not isinstance(body.get(key), list) or len(body[key]) != size for key, size in sizes.items())
                or not isinstance(forces, dict) or not set(forces) <= set(plot.forces)):
            raise MbstateError(f"{self.stream.name}: {self.kind} record {self.number} does not fit the log's {n} "
                               f"coordinates, {m} constraint rows and actuators {', '.join(plot.forces) or '(none)'}")
        message: dict[str, Any] = plot(body)
        if self.kind == "estimate" and "flags" in body:
            message["flags"] = body["flags"]
        return self.kind, message, body.get("t")

    def _plot_map(self, body: dict[str, Any]) -> PlotMap:
        """The plot map of the header's coordinates (by number when the header does not name those of
        the first state record), constraint rows (the first record's) and actuators."""
        header, n = self.stream.header, len(body.get("q") or ())
        names = header.get("coordinates")
        names = names if isinstance(names, list) and len(names) == n else [str(k) for k in range(n)]
        actuators = [str(a) for a in header.get("actuators") or ()]
        on = header.get("actuator_coordinates")
        on = [str(c) for c in on] if isinstance(on, list) and len(on) == len(actuators) else actuators
        return PlotMap(names, len(body.get("lam") or ()), list(zip(actuators, on)))


def export_mcap(stream: LogStream, out: str, kinds: set[str], sensor: str | None) -> Counter[str]:
    """Write ``stream``'s records of ``kinds`` (``sensor``: its readings only) to ``out`` (module
    docstring); messages per topic. The file is removed when the log turns out damaged."""
    try:
        from mcap.writer import CompressionType, Writer
    except ImportError:
        raise MbstateError("--format mcap needs the mcap package: pip install -e '.[export]'") from None
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        output = open(path, "wb")
    except OSError as exc:
        raise MbstateError(f"{out}: cannot write ({exc.strerror})") from None
    try:
        with output:
            writer = Writer(output, compression=CompressionType.ZSTD, enable_crcs=True, enable_data_crcs=True)
            return McapExport(writer, stream, kinds, sensor).run()
    except BaseException:
        path.unlink(missing_ok=True)
        raise
