"""Hostile bytes on the node's sockets (real ZeroMQ on loopback): nothing a peer sends can stop the
node or a replay of its log, every message is counted under the reason it was built for
(sensors.hostile), sequence numbers cannot inflate the gaps, and control requests are bounded.
"""

from __future__ import annotations

from collections import Counter

import msgpack
import pytest
import zmq
from fake_estimator import FakeConfig, fake_factory
from node_harness import RunningNode, encoder, write_config

from estimator.logfile import read_log
from estimator.node.config import load_node_config
from replay.replay import replay
from sensors.hostile import VALID, hostile_messages

KNOWN_KINDS = ("undecodable", "too_deep", "unknown_sensor", "invalid")


def fake_config(tmp_path, node: str = ""):
    return load_node_config(write_config(tmp_path, "{rate: 100, lag: 5}", node), FakeConfig.from_section)


def nested(depth: int, leaf: object = 1) -> object:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


CRAFTED = [(bytes.fromhex("81910101"), "undecodable"),  # a map keyed by an array
           (b"\x81\x81\x01\x01\x01", "undecodable"),  # a map keyed by a map
           (msgpack.packb({"a": nested(1023)}), "too_deep"),
           (msgpack.packb({**encoder(0.5, 0), "value": nested(1000)}), "too_deep"),
           (msgpack.packb({**encoder(0.5, 0), "sensor": "nobody", "extra": 1}), "invalid")]  # the key is found first


def test_fuzzed_input_is_counted_by_reason_and_the_log_replays(tmp_path) -> None:
    config = fake_config(tmp_path, "max_message_bytes: 1048576")
    sent = CRAFTED + hostile_messages(config.sensors.dimensions(), 3000, seed=12, kinds=KNOWN_KINDS)
    expected = Counter(outcome for _, outcome in sent)
    with RunningNode(config, fake_factory) as running:
        running.send(*[data for data, _ in sent])
        status = running.wait_received(len(sent), timeout=60.0)
        running.send(encoder(status["t"] + 0.1, 0))  # still serving (within max_future_s)
        after = running.wait_received(len(sent) + 1)
    assert status["received"] == len(sent) and status["accepted"] == expected[VALID]
    assert status["malformed_by_reason"] == {kind: expected[kind] for kind in KNOWN_KINDS}
    assert status["dropped"] == 0 and after["accepted"] == expected[VALID] + 1
    assert all(track["gaps"] == 0 and track["restarts"] == 0 for track in status["sensors"].values())  # seq wrapped
    log = read_log(tmp_path / "run.log")
    assert len(log.inputs) == len(sent) + 1  # every message recorded, the hostile ones too
    result = replay(tmp_path / "run.log", config, fake_factory)
    for key in ("received", "accepted", "malformed_by_reason", "dropped_by_reason"):
        assert result.status[key] == after[key]


def test_flipped_bytes_are_survived_and_every_message_is_counted_once(tmp_path) -> None:
    config = fake_config(tmp_path)
    sent = hostile_messages(config.sensors.dimensions(), 2000, seed=7, kinds=("flip",))
    with RunningNode(config, fake_factory) as running:
        running.send(*[data for data, _ in sent])
        status = running.wait_received(len(sent), timeout=60.0)
    assert status["received"] == len(sent) == status["accepted"] + status["dropped"] + status["malformed"]
    result = replay(tmp_path / "run.log", config, fake_factory)
    assert result.status["malformed_by_reason"] == status["malformed_by_reason"]


def test_hostile_control_requests_are_answered_and_counted(tmp_path) -> None:
    with RunningNode(fake_config(tmp_path, "max_message_bytes: 4096"), fake_factory) as running:
        for request in (bytes.fromhex("81910101"), b"\x81\x81\x01\x01\x01", msgpack.packb({"command": nested(1000)}),
                        msgpack.packb({"command": nested(20)}), msgpack.packb([1, 2])):
            running.control.send(request)
            assert running.control.poll(5000)
            reply = msgpack.unpackb(running.control.recv())
            assert reply["ok"] is False and "expected a msgpack map" in reply["error"] and len(reply["error"]) < 300
        oversized = running.context.socket(zmq.REQ)
        oversized.connect(running.node.endpoints["control"])
        oversized.send(msgpack.packb({"command": "status", "pad": "x" * 100_000}))
        assert not oversized.poll(500)  # over max_message_bytes: ZeroMQ drops the peer, no reply
        status = running.request({"command": "status"})
    assert status["ok"] and status["bad_requests"] == 5


@pytest.mark.parametrize("seqs, gaps, restarts", [
    ([5, 2**64 - 1], 0, 1),  # a jump of ~1.8e19 is a restarted counter, not lost readings
    ([2**64 - 2, 2**64 - 1, 0, 3], 2, 0),  # the counter wraps at 2**64; 1 and 2 were lost
    ([7, 3], 0, 1),
])
def test_sequence_gaps_do_not_overflow(tmp_path, seqs, gaps, restarts) -> None:
    with RunningNode(fake_config(tmp_path), fake_factory) as running:
        running.send(*[encoder(0.01 * k, seq) for k, seq in enumerate(seqs)])
        track = running.wait_received(len(seqs))["sensors"]["crank_encoder"]
    assert (track["accepted"], track["gaps"], track["restarts"]) == (len(seqs), gaps, restarts)
