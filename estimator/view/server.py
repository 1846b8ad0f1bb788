"""The view's web server: the page, its layout and a stream of frames (Server-Sent Events), on loopback.

Python's standard library only (http.server, one thread per connection): ``/`` is the page (page.html,
a canvas drawn by its own script, nothing fetched from elsewhere), ``/layout`` the static part as JSON
(the mechanism's bodies, the series, the window), ``/events`` one ``data: {frame}`` event per display tick.
A single ticker thread makes the frames (estimator.view.feed.Feed.frame) at ``rate`` Hz whether or not
a page is open, so what the node sees does not depend on the browsers; each page gets the newest frame
(a slow page skips frames, never queues them). Why not Bokeh or Rerun: docs/view.md.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from estimator.errors import MbstateError
from estimator.view.feed import Feed

KEEPALIVE_S = 1.0  # [s] between checks that the server is still serving, while a page waits for a frame


def finite(value: Any) -> Any:
    """``value`` with non-finite floats as None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


class ViewServer:
    """The page and its frames for ``feed`` at ``host``:``port`` (0: a free port), ``rate`` frames per
    second [Hz] over a sliding ``window_s`` [s of sensor time]."""

    def __init__(self, feed: Feed, host: str, port: int, rate: float, window_s: float) -> None:
        self.feed, self.period = feed, 1.0 / rate
        self.page = (importlib.resources.files("estimator") / "view" / "page.html").read_bytes()
        self.layout = json.dumps(finite({**feed.scene.layout(), "series": feed.series, "window_s": window_s,
                                         "rate": rate, "truth": feed.truth is not None})).encode()
        self.latest, self.serial = b"", 0
        self.ticked = threading.Condition()
        self.stopped = threading.Event()
        try:
            self.http = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as exc:
            raise MbstateError(f"cannot serve the view on {host}:{port} ({exc.strerror or exc})") from None
        self.http.daemon_threads = True
        bound_host, bound_port = self.http.server_address[:2]
        self.url = f"http://{'[' + bound_host + ']' if ':' in bound_host else bound_host}:{bound_port}/"

    def run(self) -> None:
        """Serve and tick until :meth:`stop` (thread-safe)."""
        serving = threading.Thread(target=self.http.serve_forever, name="view-http", daemon=True)
        serving.start()
        try:
            while not self.stopped.wait(self.period):
                data = json.dumps(finite(self.feed.frame()), separators=(",", ":")).encode()
                with self.ticked:
                    self.latest, self.serial = data, self.serial + 1
                    self.ticked.notify_all()
        finally:
            with self.ticked:
                self.ticked.notify_all()
            self.http.shutdown()
            self.http.server_close()
            serving.join()

    def stop(self) -> None:
        self.stopped.set()

    def next_frame(self, seen: int) -> tuple[int, bytes] | None:
        """The newest frame after serial ``seen``; None once stopped."""
        with self.ticked:
            while self.serial == seen and not self.stopped.is_set():
                self.ticked.wait(KEEPALIVE_S)
            return None if self.stopped.is_set() else (self.serial, self.latest)


def _handler(view: ViewServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/":
                self._send(view.page, "text/html; charset=utf-8")
            elif self.path == "/layout":
                self._send(view.layout, "application/json")
            elif self.path == "/events":
                self._stream()
            else:
                self.send_error(404)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            seen = 0
            try:
                while (latest := view.next_frame(seen)) is not None:
                    seen, data = latest
                    self.wfile.write(b"data: " + data + b"\n\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the page was closed

        def log_message(self, *args: Any) -> None:
            """Quiet: no line per request."""

    return Handler
