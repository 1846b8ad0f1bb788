"""``mbstate demo``: virtual four-bar sensors, the node and a subscriber on loopback, and a summary.

1. Ground truth: the four-bar with a driven crank (fourbar_crank.yaml) following
   θ(t) = 1.2 (1 − cos 2t) rad, by classical inverse dynamics at 1 ms, so the motor torque varies
   (66 N·m at t = 0); the sensors of the packaged sensor file sample it (sensors.virtual, seeded).
2. The node (estimator.node.runtime) binds free loopback ports and runs in the calling thread; a
   publisher thread sends the readings at real time to its input; a subscriber thread collects what
   it publishes; when the node has taken in every reading (``status`` on the control socket), the
   publisher asks for ``shutdown``.
3. Summary: the node's counters and step latency, and the RMSE of the estimates the subscriber
   received against the truth at their step times: ``q`` over the point coordinates [m], ``qd`` [m/s],
   ``force`` over the estimated actuator forces [N or N·m].

The three configuration files are package data (estimator/data: ``fourbar_crank.yaml``,
``fourbar_sensors.yaml``, ``fourbar_estimator.yaml``), copies of configs/mechanisms/fourbar_crank.yaml,
configs/sensors/fourbar.yaml and configs/estimator/fourbar.yaml (a test keeps them identical), so
the demo runs from an installed wheel as from the repository.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.resources
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import zmq

from estimator.dynamics.inverse import inverse_dynamics
from estimator.model import Mechanism
from estimator.node.config import NodeConfig, load_node_config
from estimator.node.intake import EstimatorFactory, online_estimator
from estimator.node.publishing import pack, unpack
from estimator.node.runtime import Node
from replay.publish import publish
from sensors.virtual import Truth, simulate_readings

DATA_FILES = {"mechanism": "fourbar_crank.yaml", "sensors": "fourbar_sensors.yaml",
              "estimator": "fourbar_estimator.yaml"}
LOOPBACK = "tcp://127.0.0.1:*"
TRUTH_STEP = 1e-3  # [s], divides every sensor period of the packaged sensor file


@contextlib.contextmanager
def demo_config(estimator_config: Any = None) -> Iterator[NodeConfig]:
    """The packaged configuration with free loopback ports and no recording (``estimator_config``:
    reader of the estimator section, for tests)."""
    data = importlib.resources.files("estimator") / "data"
    with contextlib.ExitStack() as stack:
        paths = {key: stack.enter_context(importlib.resources.as_file(data / name)) for key, name in DATA_FILES.items()}
        config = load_node_config(paths["estimator"], estimator_config, mechanism=paths["mechanism"],
                                  sensors=paths["sensors"])
        node = dataclasses.replace(config.node, sub=LOOPBACK, pub=LOOPBACK, control=LOOPBACK,
                                   log=dataclasses.replace(config.node.log, path=None))
        yield dataclasses.replace(config, node=node)


def crank_truth(mech: Mechanism, duration: float) -> Truth:
    """Inverse dynamics along θ(t) = 1.2 (1 − cos 2t) (the upstream four-bar's crank motion)."""
    t = TRUTH_STEP * np.arange(int(round(duration / TRUTH_STEP)) + 1)
    theta, rate, acceleration = 1.2 * (1.0 - np.cos(2.0 * t)), 2.4 * np.sin(2.0 * t), 4.8 * np.cos(2.0 * t)
    result = inverse_dynamics(mech, ["theta0"], t, theta, rate, acceleration)
    return Truth.from_trajectory(mech, result.trajectory)


class Collector(threading.Thread):
    """Subscribes to the node's output and keeps every message until the node's last status."""

    def __init__(self, context: zmq.Context, endpoint: str) -> None:
        super().__init__(name="demo-subscriber", daemon=True)
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.subscribe(b"")
        self.socket.connect(endpoint)
        self.estimates: list[dict] = []
        self.final_status: dict | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.is_set():
                if not self.socket.poll(50):
                    continue
                message = unpack(self.socket.recv())
                if message.get("type") == "estimate":
                    self.estimates.append(message)
                elif message.get("state") == "stopped":
                    self.final_status = message
                    return
        finally:
            self.socket.close()


def _request(control: zmq.Socket, command: str) -> dict | None:
    control.send(pack({"command": command}))
    return unpack(control.recv()) if control.poll(2000) else None


def _feed(readings: list[dict], node: Node, context: zmq.Context, stop: threading.Event) -> None:
    """Publish at real time; once the node has taken every message in (or stopped making progress for
    a second), ask it to shut down."""
    control = context.socket(zmq.REQ)
    control.setsockopt(zmq.LINGER, 0)
    control.connect(node.endpoints["control"])
    try:
        sent = publish(readings, node.endpoints["sub"], speed=1.0, stop=stop)
        received, progress_at = -1, time.monotonic()
        while not stop.is_set() and time.monotonic() - progress_at < 1.0:
            status = _request(control, "status")
            if status is None or status["received"] >= sent:
                break
            if status["received"] > received:
                received, progress_at = status["received"], time.monotonic()
            stop.wait(0.05)
    finally:
        if stop.is_set() or _request(control, "shutdown") is None:
            node.stop()
        control.close()


def rmse(estimates: list[dict], truth: Truth, mech: Mechanism, actuators: list[str]) -> dict[str, float | None]:
    """RMSE of q and q̇ over the point coordinates and of the estimated actuator forces (None: no data)."""
    if not estimates:
        return {"q": None, "qd": None, "force": None}
    t = np.array([e["t"] for e in estimates])
    inside = (t >= truth.t[0]) & (t <= truth.t[-1])
    points = sorted({int(i) for i in np.ravel(mech.point_z) if i < mech.n})

    def error(estimated: np.ndarray, reference: np.ndarray) -> float | None:
        true = np.column_stack([np.interp(t[inside], truth.t, column) for column in reference.T])
        diff = estimated[inside] - true
        diff = diff[np.all(np.isfinite(diff), axis=1)]
        return float(np.sqrt(np.mean(diff**2))) if diff.size else None

    named = [name for name in actuators if name in estimates[0]["forces"]]
    forces = np.array([[e["forces"].get(name, np.nan) for name in named] for e in estimates]).reshape(len(t), -1)
    columns = [actuators.index(name) for name in named]
    return {"q": error(np.array([e["q"] for e in estimates])[:, points], truth.q[:, points]),
            "qd": error(np.array([e["qd"] for e in estimates])[:, points], truth.qd[:, points]),
            "force": error(forces, truth.f[:, columns]) if named else None}


def run_demo(duration: float = 5.0, seed: int = 0, estimator_factory: EstimatorFactory = online_estimator,
             estimator_config: Any = None) -> dict[str, Any]:
    """Run the demo (see the module docstring); the summary as a map."""
    with demo_config(estimator_config) as config:
        truth = crank_truth(config.mech, duration)
        readings = [r.to_map() for r in simulate_readings(config.sensors.sensors, truth, seed)]
        context = zmq.Context()
        stop = threading.Event()
        started = time.monotonic()
        try:
            with Node(config, estimator_factory) as node:
                collector = Collector(context, node.endpoints["pub"])
                collector.start()
                time.sleep(0.2)  # the subscription reaches the node's PUB (loopback: well under that)
                feeder = threading.Thread(target=_feed, args=(readings, node, context, stop), name="demo-publisher",
                                          daemon=True)
                feeder.start()
                try:
                    node.run()
                finally:
                    stop.set()
                    feeder.join(5.0)
                status = node.status()
            collector.join(2.0)
            collector.done.set()
        finally:
            context.destroy()
        status = collector.final_status or status
        actuators = [a.name for a in config.mech.actuators]
        return {"duration_s": duration, "wall_s": time.monotonic() - started, "readings_sent": len(readings),
                "steps": status["steps"], "estimates_received": len(collector.estimates),
                "latency_ms": status["latency_ms"], "rmse": rmse(collector.estimates, truth, config.mech, actuators),
                **{key: status[key] for key in ("received", "accepted", "dropped", "late", "malformed", "overruns",
                                                "recoveries")}}


def summary_text(summary: dict[str, Any]) -> str:
    """The summary for people."""
    latency, errors = summary["latency_ms"], summary["rmse"]

    def value(x: float | None, unit: str) -> str:
        return "n/a" if x is None else f"{x:.3g} {unit}"

    return "\n".join([
        f"four-bar demo: {summary['duration_s']:g} s of readings ({summary['readings_sent']} messages) "
        f"in {summary['wall_s']:.1f} s",
        f"  steps {summary['steps']} (received by the subscriber: {summary['estimates_received']})",
        f"  latency p50 {latency['p50']:.3f} ms, p99 {latency['p99']:.3f} ms, max {latency['max']:.3f} ms, "
        f"overruns {summary['overruns']}, recoveries {summary['recoveries']}",
        f"  RMSE vs truth: q {value(errors['q'], 'm')}, qd {value(errors['qd'], 'm/s')}, "
        f"force {value(errors['force'], 'N·m')}",
        f"  messages: received {summary['received']}, accepted {summary['accepted']}, dropped {summary['dropped']}, "
        f"late {summary['late']}, malformed {summary['malformed']}"])
