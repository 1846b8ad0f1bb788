"""Run the view: :class:`ViewParams`, :func:`serve` (``mbstate view``, in its own process) and :func:`main`
(``python -m estimator.view.run PARAMS.json``: the process ``mbstate demo --view`` starts, estimator.view.process)."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from estimator.errors import MbstateError
from estimator.model_protocol import load_model
from estimator.node.access import beyond_loopback
from estimator.node.client import ClientKeys
from estimator.view.feed import Feed, default_series
from estimator.view.server import ViewServer

LOGGER = logging.getLogger("mbstate.view")
ORPHAN_CHECK_S = 0.5  # [s] between checks that the demo's process is still there (main)
NICE = 10  # added to the nice value before the view's threads start (Linux: per thread; ZeroMQ's I/O thread,
# which receives the 1 kHz stream, inherits it): on a shared machine the node's loop comes first


@dataclass(frozen=True)
class ViewParams:
    """What to show and where. ``mechanism``: its file; ``endpoint``: the node's output (``node.pub``);
    ``host`` / ``port``: where the page is served (port 0: a free one); ``rate``: frames per second [Hz];
    ``window_s``: the series' sliding window [s]; ``series``: coordinate or actuator names (empty: the
    angles and the actuators); ``readings``: an endpoint bound for sensor messages (None: no readings);
    ``truth``: a truth file (estimator.view.truth); ``curve_key`` / ``server_key``: CURVE client keys."""

    mechanism: str
    endpoint: str
    host: str = "127.0.0.1"
    port: int = 0
    rate: float = 10.0
    window_s: float = 10.0
    series: tuple[str, ...] = ()
    readings: str | None = None
    truth: str | None = None
    curve_key: str | None = None
    server_key: str | None = None


def serve(params: ViewParams, announce: Callable[[str], None], stop: threading.Event | None = None) -> None:
    """Serve the view until SIGINT / SIGTERM (main thread) or ``stop``, at a lower CPU priority (NICE);
    ``announce`` hears the page's URL."""
    os.nice(NICE)
    mech = load_model(params.mechanism)
    keys = ClientKeys.load(params.curve_key, params.server_key) if params.curve_key else None
    feed = Feed(mech, params.endpoint, params.series or default_series(mech), params.readings, params.truth, keys)
    try:
        server = ViewServer(feed, params.host, params.port, params.rate, params.window_s)
        if beyond_loopback(f"tcp://{params.host}:{params.port}"):
            LOGGER.warning("view: served on %s, beyond loopback: any host that reaches it can watch", params.host)
        restore = _stop_on_signals(server.stop)
        if stop is not None:
            threading.Thread(target=_stop_when_set, args=(stop, server), daemon=True).start()
        announce(server.url)
        try:
            server.run()
        finally:
            restore()
    finally:
        feed.close()


def _stop_when_set(stop: threading.Event, server: ViewServer) -> None:
    stop.wait()
    server.stop()


def _stop_on_signals(stop: Callable[[], None]) -> Callable[[], None]:
    """SIGINT / SIGTERM call ``stop`` (main thread only); returns what puts the handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, lambda *_: stop()) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def _watch_parent(parent: int, stop: threading.Event) -> None:
    """Set ``stop`` once the process that started this one has gone."""
    while not stop.wait(ORPHAN_CHECK_S):
        if os.getppid() != parent:
            stop.set()


def main(argv: list[str] | None = None) -> int:
    """``python -m estimator.view.run PARAMS.json`` (the fields of ViewParams): serve, printing the URL
    on stdout; stop on SIGTERM or when the parent process goes away."""
    (path,) = argv if argv is not None else sys.argv[1:]
    fields = json.loads(Path(path).read_text())
    params = ViewParams(**{**fields, "series": tuple(fields.get("series", ()))})
    stop = threading.Event()
    threading.Thread(target=_watch_parent, args=(os.getppid(), stop), daemon=True).start()
    try:
        serve(params, lambda url: print(url, flush=True), stop)
    except MbstateError as exc:
        print(f"mbstate view: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
