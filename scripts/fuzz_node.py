"""Fuzz the running node: the four-bar's simulated readings with hostile messages (sensors.hostile)
interleaved, over real sockets on loopback, then a replay of the node's log; prints sent, counted
by reason, recorded and survived.

    python scripts/fuzz_node.py [--messages 50000] [--seconds 5] [--seed 1] [--flips]

Messages of a known kind (undecodable, too_deep, unknown_sensor, invalid) must be counted under
exactly that reason; with ``--flips`` valid messages with random bytes changed are sent as well
(reason unknown: they only have to be counted once). The product's estimator runs
(configs/estimator/fourbar.yaml) on ``--seconds`` of simulated readings; the log goes to a
temporary directory.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import msgpack
import numpy as np
import zmq

from estimator.demo.cases import crank_truth
from estimator.logfile import read_log
from estimator.node.config import load_node_config
from estimator.node.runtime import Node, with_log_path
from estimator.wire import pack
from replay.publish import connect_publisher
from replay.replay import replay
from sensors.hostile import KINDS, hostile_messages
from sensors.virtual import simulate_readings

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "estimator" / "fourbar.yaml"


def status(control: zmq.Socket) -> dict:
    control.send(pack({"command": "status"}))
    if not control.poll(10_000):
        raise SystemExit("the node did not answer within 10 s")
    return msgpack.unpackb(control.recv(), strict_map_key=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000, help="hostile messages (default 50000)")
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated sensor time (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flips", action="store_true", help="also valid messages with random bytes changed")
    args = parser.parse_args()
    kinds = KINDS if args.flips else tuple(k for k in KINDS if k != "flip")
    with tempfile.TemporaryDirectory() as directory:
        log_path = Path(directory) / "fuzz.log"
        config = with_log_path(load_node_config(CONFIG), str(log_path))
        node_section = config.node.__class__(**{**config.node.__dict__, "sub": "tcp://127.0.0.1:*",
                                                "pub": "tcp://127.0.0.1:*", "control": "tcp://127.0.0.1:*",
                                                "max_message_bytes": 1 << 20, "queue": 1_000_000})
        config = config.__class__(**{**config.__dict__, "node": node_section})
        readings = [pack(r.to_map()) for r in
                    simulate_readings(config.sensors.sensors, crank_truth(config.mech, args.seconds), args.seed)]
        hostile = hostile_messages(config.sensors.dimensions(), args.messages, args.seed, valid_share=0.0,
                                   kinds=kinds)
        rng = np.random.default_rng(args.seed)
        slots = np.sort(rng.integers(0, len(readings) + 1, len(hostile)))  # hostile messages among the readings
        stream, h = [], 0
        for index, reading in enumerate(readings + [None]):
            while h < len(hostile) and slots[h] == index:
                stream.append(hostile[h][0])
                h += 1
            if reading is not None:
                stream.append(reading)
        node = Node(config)
        thread = threading.Thread(target=node.run, daemon=True)
        thread.start()
        context = zmq.Context()
        control = context.socket(zmq.REQ)
        control.connect(node.endpoints["control"])
        publisher = connect_publisher(context, node.endpoints["sub"])
        started = time.monotonic()
        for k in range(0, len(stream), 200):
            for data in stream[k:k + 200]:
                publisher.send(data)
            time.sleep(0.002)
        live = status(control)
        while live["received"] < len(stream) and thread.is_alive() and time.monotonic() - started < 600:
            time.sleep(0.2)
            live = status(control)
        survived = thread.is_alive()
        node.stop()
        thread.join(30)
        node.close()
        context.destroy()
        log = read_log(log_path)
        replayed = replay(log_path, config).status
    sent = Counter(kind or "flip" for _, kind in hostile)
    print(f"sent: {len(readings)} readings, {len(hostile)} hostile ({', '.join(f'{k} {sent[k]}' for k in kinds)})")
    print(f"node: received {live['received']}, accepted {live['accepted']}, dropped {live['dropped_by_reason']}, "
          f"malformed {live['malformed_by_reason']}, steps {live['steps']}, survived {survived}")
    print(f"log: {len(log.inputs)} input records; replay: received {replayed['received']}, "
          f"malformed {replayed['malformed_by_reason']}, steps {replayed['steps']}")
    known = {k: sent[k] for k in kinds if k != "flip"}
    exact = all(live["malformed_by_reason"].get(k, 0) == n for k, n in known.items()) if not args.flips else None
    print(f"counted by reason as sent: {exact if exact is not None else 'n/a (flips)'}; every message recorded: "
          f"{len(log.inputs) == len(stream)}; replay counted the same: "
          f"{replayed['malformed_by_reason'] == live['malformed_by_reason']}")


if __name__ == "__main__":
    main()
