"""``mbstate demo``: virtual sensors of a machine in one process, the node in this one, and a summary.

1. Ground truth: the machine of ``--mechanism`` (estimator.demo.cases: the four-bar with a driven crank,
   the Panda arm or the Delta robot) along a motion of its own, by classical inverse dynamics at 1 ms
   (the Delta: hybrid dynamics, its motors driven, its rods' spins free), so the drive torques vary; the sensors of its packaged sensor file sample it (sensors.virtual, seeded).
2. Warm-up: a throwaway estimator takes the first WARM_UP_S of readings, so that compiling (first
   run) or loading (later runs) the numeric kernels does not count in the node's latency.
3. The node (estimator.node.runtime) binds free loopback ports and runs in this process's main
   thread, alone, as in production; a second process (estimator.demo.peer) publishes the readings at
   real time to its input, collects what it publishes and asks for ``shutdown`` once the node has
   taken in every reading. With ``curve`` the node and the peer use CURVE (a key pair each, made
   for the run in a temporary directory and removed after it). A watchdog thread stops the node if
   that process ends first or the run outlasts its deadline; the process is always reaped.
   With ``view`` the live view (estimator.view) runs in a third process: it subscribes to the node's
   output, takes the readings from the sensor process on an endpoint of its own and shows the truth
   beside the estimates (a truth file); the node does no work for it beyond one more subscriber.
4. Summary: the node's counters and step latency, and the RMSE of the estimates the subscriber
   received against the truth at their step times: ``q`` over the point coordinates [m], ``qd`` [m/s],
   ``angle`` and ``rate`` over the other coordinates (the crank angle, the joints of the arm or of the
   Delta's spanning tree) [rad, rad/s],
   ``force`` over the estimated actuator forces [N or N·m].
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.resources
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from estimator.demo.cases import CASES, DemoCase
from estimator.demo.peer import Peer
from estimator.model_protocol import Model, actuators, point_coordinates
from estimator.node.access import CurveParams, make_key_pair
from estimator.node.config import NodeConfig, load_node_config
from estimator.node.intake import EstimatorFactory, intake_for, online_estimator
from estimator.node.realtime import LoopScheduling
from estimator.node.runtime import Node
from estimator.view.process import ViewProcess
from estimator.view.run import ViewParams
from estimator.view.truth import write_truth
from sensors.virtual import Truth, simulate_readings

LOOPBACK = "tcp://127.0.0.1:*"
WARM_UP_S = 0.1  # [s] of readings: past the estimator's start-up into steady steps
DEADLINE_MARGIN_S = 30.0  # [s] beyond twice the duration before the watchdog stops the node


@contextlib.contextmanager
def demo_keys(curve: bool) -> Iterator[tuple[CurveParams | None, tuple[str, ...]]]:
    """With ``curve``: the node's ``node.curve`` and the peer's key files (CLIENT.key_secret,
    NODE.key), made in a temporary directory that is removed on exit; otherwise (None, ())."""
    if not curve:
        yield None, ()
        return
    with tempfile.TemporaryDirectory(prefix="mbstate-demo-keys-") as name:
        directory = Path(name)
        node_public, node_secret = make_key_pair(directory, "node")
        client_secret = make_key_pair(directory / "clients", "demo")[1]
        yield CurveParams(node_secret, directory / "clients"), (str(client_secret), str(node_public))


@contextlib.contextmanager
def demo_config(estimator_config: Any = None, curve: CurveParams | None = None, sigmas: bool = False,
                case: DemoCase = CASES["fourbar"]) -> Iterator[NodeConfig]:
    """The packaged configuration of ``case`` with free loopback ports, no recording, ``curve`` as
    ``node.curve`` and ``sigmas`` as the estimator's ``publish_sigmas`` (``estimator_config``: reader of the
    estimator section, for tests)."""
    data = importlib.resources.files("estimator") / "data"
    with contextlib.ExitStack() as stack:
        paths = {key: stack.enter_context(importlib.resources.as_file(data / name)) for key, name in case.files.items()}
        config = load_node_config(paths["estimator"], estimator_config, mechanism=paths["mechanism"],
                                  sensors=paths["sensors"])
        node = dataclasses.replace(config.node, sub=LOOPBACK, pub=LOOPBACK, control=LOOPBACK, curve=curve,
                                   log=dataclasses.replace(config.node.log, path=None))
        estimator = dataclasses.replace(config.estimator, publish_sigmas=True) if sigmas else config.estimator
        yield dataclasses.replace(config, node=node, estimator=estimator)


def warm_up(config: NodeConfig, estimator_factory: EstimatorFactory, readings: list[dict]) -> None:
    """Feed the first WARM_UP_S of ``readings`` to a throwaway estimator (the node's own path)."""
    intake = intake_for(config, estimator_factory(config, time.perf_counter))
    end = readings[0]["t"] + WARM_UP_S
    for message in readings:
        if message["t"] > end:
            return
        intake.handle(message)


@contextlib.contextmanager
def live_view(config: NodeConfig, node: Node, truth: Truth, key_files: tuple[str, ...],
              announce: Callable[[str], None] | None) -> Iterator[str | None]:
    """With ``announce``: the view in its own process, on the node's output with the truth; ``announce``
    hears its URL; yields the endpoint the sensor process sends the readings to as well (None: no view)."""
    if announce is None:
        yield None
        return
    with ViewProcess() as view:
        write_truth(view.truth, truth.t, truth.q, truth.f, [name for name, _ in actuators(config.mech)])
        curve_key, server_key = key_files or (None, None)
        announce(view.start(ViewParams(mechanism=str(config.mechanism_path), endpoint=node.endpoints["pub"],
                                       readings=view.readings, truth=str(view.truth), curve_key=curve_key,
                                       server_key=server_key)))
        yield view.readings


def _stop_when_peer_ends(node: Node, peer: Peer, deadline_s: float) -> None:
    """The watchdog: stop the node once the peer process has ended or after ``deadline_s``."""
    peer.wait(deadline_s)
    node.stop()


def rmse(estimates: list[dict], truth: Truth, mech: Model, drives: list[str]) -> dict[str, float | None]:
    """RMSE of q and q̇ over the point coordinates, of q and q̇ over the other coordinates (angles) and of
    the estimated actuator forces ``drives`` (None: no data)."""
    if not estimates:
        return {"q": None, "qd": None, "angle": None, "rate": None, "force": None}
    t = np.array([e["t"] for e in estimates])
    inside = (t >= truth.t[0]) & (t <= truth.t[-1])
    points = list(point_coordinates(mech))
    angles = [i for i in range(truth.q.shape[1]) if i not in points]

    def error(estimated: np.ndarray, reference: np.ndarray) -> float | None:
        true = np.column_stack([np.interp(t[inside], truth.t, column) for column in reference.T])
        diff = estimated[inside] - true
        diff = diff[np.all(np.isfinite(diff), axis=1)]
        return float(np.sqrt(np.mean(diff**2))) if diff.size else None

    q, qd = np.array([e["q"] for e in estimates]), np.array([e["qd"] for e in estimates])
    named = [name for name in drives if name in estimates[0]["forces"]]
    forces = np.array([[e["forces"].get(name, np.nan) for name in named] for e in estimates]).reshape(len(t), -1)
    columns = [drives.index(name) for name in named]
    return {"q": error(q[:, points], truth.q[:, points]) if points else None,
            "qd": error(qd[:, points], truth.qd[:, points]) if points else None,
            "angle": error(q[:, angles], truth.q[:, angles]) if angles else None,
            "rate": error(qd[:, angles], truth.qd[:, angles]) if angles else None,
            "force": error(forces, truth.f[:, columns]) if named else None}


def run_demo(duration: float = 5.0, seed: int = 0, estimator_factory: EstimatorFactory = online_estimator,
             estimator_config: Any = None, progress: Callable[[str], None] = lambda text: None,
             curve: bool = False, sigmas: bool = False, view: Callable[[str], None] | None = None,
             mechanism: str = "fourbar", scheduling: LoopScheduling = LoopScheduling()) -> dict[str, Any]:
    """Run the demo on the machine ``mechanism`` (a key of estimator.demo.cases.CASES; see the module
    docstring); the summary as a map (``interrupted``: SIGINT / SIGTERM stopped the node before every
    reading was sent). ``progress`` hears what it is doing; ``curve``: the node and its peer use CURVE;
    ``sigmas``: the estimates carry σ; ``view``: run the live view, which hears its URL; ``scheduling``: the
    node loop's priority and cores (estimator.node.realtime)."""
    case = CASES[mechanism]
    with (demo_keys(curve) as (curve_params, key_files),
          demo_config(estimator_config, curve_params, sigmas, case) as config):
        progress(f"starting: simulating the {case.title} and warming up the estimator "
                 "(the first run compiles the numeric kernels: up to a minute)...")
        truth = case.truth(config.mech, duration)
        readings = [r.to_map() for r in simulate_readings(config.sensors.sensors, truth, seed)]
        warm_up(config, estimator_factory, readings)
        progress(f"running: {duration:g} s of sensor readings from a second process to the node...")
        started = time.monotonic()
        with (Node(config, estimator_factory) as node, live_view(config, node, truth, key_files, view) as tap,
              Peer(readings, node.endpoints, key_files, tap) as peer):
            deadline_s = 2 * duration + DEADLINE_MARGIN_S
            watchdog = threading.Thread(target=_stop_when_peer_ends, args=(node, peer, deadline_s),
                                        name="demo-watchdog", daemon=True)
            watchdog.start()
            node.run(scheduling)
            status = node.status()
            node.close()  # publishes the last status, which ends the peer's subscriber
            report = peer.report()
        watchdog.join()
        drives = [name for name, _ in actuators(config.mech)]
        return {"mechanism": mechanism, "duration_s": duration, "wall_s": time.monotonic() - started, "readings_sent": report["sent"],
                "interrupted": report["sent"] < len(readings),
                "steps": status["steps"], "estimates_received": len(report["estimates"]),
                "latency_ms": status["latency_ms"], "latency_budget_ms": config.estimator.latency_budget_ms,
                "rmse": rmse(report["estimates"], truth, config.mech, drives),
                **{key: status[key] for key in ("received", "accepted", "skipped", "dropped", "late", "malformed",
                                                "overruns", "recoveries")}}


def summary_text(summary: dict[str, Any]) -> str:
    """The summary for people."""
    latency, errors = summary["latency_ms"], summary["rmse"]

    def value(x: float | None, unit: str) -> str:
        return "n/a" if x is None else f"{x:.3g} {unit}"

    return "\n".join([
        f"{CASES[summary['mechanism']].title} demo: {summary['readings_sent']} sensor messages "
        + (f"before the interruption ({summary['duration_s']:g} s planned)" if summary["interrupted"] else
           f"over {summary['duration_s']:g} s") + f", {summary['wall_s']:.1f} s of wall time",
        f"  node: {summary['steps']} steps, latency p50 {latency['p50']:.3f} ms, p99 {latency['p99']:.3f} ms, "
        f"max {latency['max']:.3f} ms; {summary['overruns']} overruns of the {summary['latency_budget_ms']:g} ms "
        f"budget, {summary['recoveries']} recoveries",
        "  RMSE against the simulation: " + ", ".join(
            f"{label} {value(errors[key], unit)}" for key, label, unit in (
                ("angle", "angles", "rad"), ("rate", "rates", "rad/s"), ("q", "positions", "m"),
                ("qd", "velocities", "m/s"), ("force", "drive torques", "N·m")) if errors[key] is not None),
        f"  messages: received {summary['received']}, accepted {summary['accepted']}, skipped {summary['skipped']} "
        f"(the node behind its input), dropped {summary['dropped']}, "
        f"late {summary['late']}, malformed {summary['malformed']}; estimates at the subscriber "
        f"{summary['estimates_received']}"])
