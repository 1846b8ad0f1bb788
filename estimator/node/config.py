"""Configuration of the online estimator node (``mbstate run --config FILE``), validated on load.

Top-level keys: ``mechanism`` and ``sensors`` (files, relative to the configuration file),
``estimator`` (the estimator's section, read by ``EstimatorConfig.from_section``), ``node``
(sockets, queue, recording; :class:`NodeParams`) and ``description`` (free text).
``configs/estimator/README.md`` documents every key; ``configs/estimator/fourbar.yaml`` is the
fully commented example. Every error names the file and the key path and is an MbstateError.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from estimator.errors import shown
from estimator.model_protocol import Model, load_model
from estimator.node.access import CurveParams, key_pair
from estimator.section import Section
from estimator.yaml_file import read_yaml
from sensors.config import SensorSet, load_sensors

TOP_KEYS = ("mechanism", "sensors", "estimator", "node", "description")
TRANSPORTS = ("tcp://", "ipc://", "inproc://")
START_PLACEHOLDER = "{start}"
MAX_QUEUE = 10_000_000  # [messages]: queue and drain
MAX_MESSAGE_BYTES = 1 << 30  # [bytes]
DAY_S = 86_400.0  # [s]: the longest period or interval a setting may have

EstimatorConfigReader = Callable[[Section, Model], Any]


@dataclass(frozen=True)
class LogParams:
    """Recording. ``path``: the log file (relative to the working directory; ``{start}`` is replaced
    by the start time, UTC, ``20250101T120000Z``; None: no recording). ``flush_records`` /
    ``flush_seconds``: flush after that many records or that long [s], whichever comes first (what
    a crash can lose). ``record_estimates``: also record every estimate. ``rotate_mb`` /
    ``rotate_minutes``: start a new file once the current one has reached that size [MB, 10⁶
    bytes] or age [min] (None: never; estimator.logfile names the files)."""

    path: str | None = None
    flush_records: int = 100
    flush_seconds: float = 0.1
    record_estimates: bool = True
    rotate_mb: float | None = None
    rotate_minutes: float | None = None

    def resolved_path(self, now: datetime.datetime | None = None) -> Path | None:
        """The log path with ``{start}`` filled in (None when recording is off)."""
        if self.path is None:
            return None
        now = now or datetime.datetime.now(datetime.timezone.utc)
        return Path(self.path.replace(START_PLACEHOLDER, now.strftime("%Y%m%dT%H%M%SZ")))


@dataclass(frozen=True)
class NodeParams:
    """Runtime of the node.

    ``sub`` / ``pub`` / ``control``: endpoints the node binds for sensor input (SUB), estimates and
    status (PUB) and commands (REP); ``tcp://HOST:*`` picks a free port. ``plot``: an endpoint the node
    binds (PUB) for each estimate as a flat map of floats, for plotting tools such as PlotJuggler
    (estimator.node.plot_map; None: off). ``queue``: input high-water mark [messages] (ZMQ_RCVHWM:
    beyond it ZeroMQ drops, visible as sequence gaps); it bounds the backlog the input queue holds
    (configs/estimator/README.md); a sender's own queue beyond it is bounded in time by ``max_lag_s``.
    ``drain``: messages handled per loop iteration before control and status get their turn.
    ``max_lag_s``: when the readings the node takes fall this far behind its input stream [s], it records
    the backlog without estimating it until it is current again, then restarts the estimator from the
    newest readings (estimator.node.backlog; None: never, every reading is estimated in order).
    ``max_message_bytes``: ZMQ_MAXMSGSIZE (a peer sending more is disconnected by ZeroMQ; counted as
    a disconnect). ``max_future_s``: a reading stamped later than the newest accepted stamp plus
    this [s] is dropped, unless the sensors agree on that new time (a resync, estimator.node.intake):
    every sensor silent this long restarts the estimator; it must exceed the period of the slowest
    sensor that may report alone. ``status_period_s``: status message period [s, wall clock].
    ``log_interval_s``: at most one log line per problem kind per interval [s]. ``curve``: CURVE
    authentication and encryption of every socket (estimator.node.access; None: off).
    """

    sub: str = "tcp://127.0.0.1:5555"
    pub: str = "tcp://127.0.0.1:5556"
    control: str = "tcp://127.0.0.1:5557"
    plot: str | None = None
    queue: int = 1_000
    drain: int = 100
    max_message_bytes: int = 65_536
    max_lag_s: float | None = 0.25
    max_future_s: float = 0.25
    status_period_s: float = 1.0
    log_interval_s: float = 5.0
    log: LogParams = field(default_factory=LogParams)
    curve: CurveParams | None = None


@dataclass(frozen=True)
class NodeConfig:
    """Everything the node needs, loaded and validated: model, sensors, estimator and node settings."""

    source: str
    mechanism_path: Path
    sensors_path: Path
    mech: Model
    sensors: SensorSet
    estimator: Any  # estimator.online.config.EstimatorConfig
    node: NodeParams


def _endpoint(section: Section, key: str, default: str | None = None) -> str:
    value = section.text(key, default)
    if not value.startswith(TRANSPORTS):
        raise section.error(key, f"must be a ZeroMQ endpoint ({', '.join(TRANSPORTS)}...), got {shown(value)}")
    return value


def _optional(section: Section, key: str) -> float | None:
    """A positive number, or None when absent or null."""
    return None if section.raw(key) is None else section.number(key, positive=True)


def _log_params(section: Section) -> LogParams:
    default = LogParams()
    path = section.raw("path", default.path)
    if path is not None and (not isinstance(path, str) or not path.strip()):
        raise section.error("path", f"must be a file name or null (no recording), got {shown(path)}")
    params = LogParams(path=path,
                       flush_records=section.count("flush_records", default.flush_records, maximum=1_000_000),
                       flush_seconds=section.number("flush_seconds", default.flush_seconds, positive=True,
                                                    maximum=3600.0),
                       record_estimates=section.flag("record_estimates", default.record_estimates),
                       rotate_mb=_optional(section, "rotate_mb"), rotate_minutes=_optional(section, "rotate_minutes"))
    section.finish()
    return params


def _curve_params(section: Section, base: Path) -> CurveParams:
    """``node.curve``: the node's secret key file and the clients' key directory, both relative to the
    configuration file and checked here (a bad key is a load error, not a start-up surprise)."""
    secret_key, clients = base / section.text("secret_key"), base / section.text("clients")
    key_pair(secret_key)
    if not clients.is_dir() or not any(clients.glob("*.key")):
        raise section.error("clients", f"must be a directory holding the clients' public keys (*.key): {clients}")
    section.finish()
    return CurveParams(secret_key=secret_key, clients=clients)


def node_params(section: Section, base: Path = Path(".")) -> NodeParams:
    """The ``node:`` section (every key optional; defaults of :class:`NodeParams`); ``base``: the
    directory that key files are relative to."""
    default = NodeParams()
    params = NodeParams(
        sub=_endpoint(section, "sub", default.sub),
        pub=_endpoint(section, "pub", default.pub),
        control=_endpoint(section, "control", default.control),
        plot=_endpoint(section, "plot") if section.raw("plot") is not None else None,
        queue=section.count("queue", default.queue, maximum=MAX_QUEUE),
        drain=section.count("drain", default.drain, maximum=MAX_QUEUE),
        max_message_bytes=section.count("max_message_bytes", default.max_message_bytes, minimum=64,
                                        maximum=MAX_MESSAGE_BYTES),
        max_lag_s=(section.number("max_lag_s", default.max_lag_s, positive=True, maximum=DAY_S)
                   if section.raw("max_lag_s", default.max_lag_s) is not None else None),
        max_future_s=section.number("max_future_s", default.max_future_s, positive=True, maximum=DAY_S),
        status_period_s=section.number("status_period_s", default.status_period_s, positive=True, maximum=DAY_S),
        log_interval_s=section.number("log_interval_s", default.log_interval_s, minimum=0.0, maximum=DAY_S),
        log=_log_params(section.section("log", {})),
        curve=_curve_params(section.section("curve"), base) if section.raw("curve") is not None else None)
    bound: dict[str, str] = {}
    for key in ("sub", "pub", "control", "plot"):
        endpoint = getattr(params, key)
        if endpoint in bound:
            raise section.error(key, f"must differ from node.{bound[endpoint]} (both {endpoint})")
        if endpoint is not None and not endpoint.endswith(":*"):  # ``:*``: a free port each
            bound[endpoint] = key
    section.finish()
    return params


def _default_estimator_config() -> EstimatorConfigReader:
    from estimator.online.config import EstimatorConfig

    return EstimatorConfig.from_section


def _file(top: Section, key: str, base: Path, override: str | Path | None) -> Path:
    if override is not None:
        top.raw(key)
        return Path(override)
    path = base / top.text(key)
    if not path.is_file():
        raise top.error(key, f"file not found: {path}")
    return path


def load_node_config(path: str | Path, estimator_config: EstimatorConfigReader | None = None,
                     mechanism: str | Path | None = None, sensors: str | Path | None = None) -> NodeConfig:
    """Read and validate a node configuration.

    ``estimator_config`` reads the ``estimator:`` section (default: EstimatorConfig.from_section);
    ``mechanism`` / ``sensors`` replace the files the configuration names (the demo uses its
    packaged copies).
    """
    document = read_yaml(path)
    source, base = str(path), Path(path).parent
    top = Section(source, "(top)", document)
    mechanism_path = _file(top, "mechanism", base, mechanism)
    sensors_path = _file(top, "sensors", base, sensors)
    if top.has("description"):
        top.text("description")
    mech = load_model(mechanism_path)
    sensor_set = load_sensors(sensors_path, mech)
    reader = estimator_config or _default_estimator_config()
    estimator_section = Section(source, "estimator", top.raw("estimator", {}))
    estimator = reader(estimator_section, mech)
    estimator_section.finish()
    node = node_params(Section(source, "node", top.raw("node", {})), base)
    top.finish()
    return NodeConfig(source=source, mechanism_path=mechanism_path, sensors_path=sensors_path, mech=mech,
                      sensors=sensor_set, estimator=estimator, node=node)
