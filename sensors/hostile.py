"""Hostile input for fuzzing the node: msgpack messages, well- and ill-formed, each with the malformed
reason the node must count it under (sensors.messages), known by construction, not by running the
validator.

:func:`hostile_messages` mixes valid readings (stamps increasing per sensor, so the node accepts
them) with the cases of each kind below, in a seeded random order; ``flip`` cases (a valid message
with random bytes changed) have no known reason (None): they only have to be survived.

========================  ===============================================================
reason                    cases
========================  ===============================================================
``undecodable``           a map keyed by an array (``81 91 01 01``) or by a map, the never-used
                          byte 0xc1 in front of random bytes, a valid message cut short or with a
                          byte appended, invalid UTF-8 in a key
``too_deep``              arrays nested 33 … 1,023 deep inside a map, a ``value`` nested
                          1,000 deep
``unknown_sensor``        a complete reading from a sensor id nobody configured
``invalid``               not a map (integer, list, text), an unknown key (also together with
                          an unknown sensor: the key is the first problem), a missing key,
                          ``t`` NaN or text, ``seq`` negative, ``value`` of the wrong length or
                          nested a few levels, a ``cov`` that is not positive definite
========================  ===============================================================
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from estimator.wire import pack

VALID = "accepted"
KINDS = ("undecodable", "too_deep", "unknown_sensor", "invalid", "flip")


def _nested(depth: int, leaf: object = 1.0) -> object:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


class _Cases:
    """The cases of each kind for the sensors ``dimensions`` (id: value size), drawn with ``rng``."""

    def __init__(self, dimensions: Mapping[str, int], rng: np.random.Generator) -> None:
        self.dimensions, self.rng = dict(dimensions), rng
        self.names = list(self.dimensions)

    def reading(self, sensor: str | None = None, t: float = 0.0, seq: int = 0) -> dict:
        sensor = sensor or self.names[int(self.rng.integers(len(self.names)))]
        size = self.dimensions[sensor]
        value = self.rng.normal(size=size).tolist()
        return {"sensor": sensor, "t": t, "seq": seq, "value": value[0] if size == 1 else value}

    def undecodable(self) -> bytes:
        valid = pack(self.reading())
        cases = [bytes.fromhex("81910101"), b"\x81\x81\x01\x01\x01", b"\x81\x92\x01\x02\xa1x",
                 b"\xc1" + self.rng.bytes(int(self.rng.integers(0, 40))), valid[:int(self.rng.integers(1, len(valid)))],
                 valid + b"\x01", b"\x81\xa2\xff\xfe\x01"]
        return cases[int(self.rng.integers(len(cases)))]

    def too_deep(self) -> bytes:
        if self.rng.random() < 0.5:
            return pack({"sensor": self.names[0], "t": 0.0, "seq": 0, "value": _nested(1000)})
        return pack({"a": _nested(int(self.rng.integers(33, 1024)))})

    def unknown_sensor(self) -> bytes:
        return pack({"sensor": f"nobody_{int(self.rng.integers(1000))}", "t": 0.0, "seq": 0, "value": 1.0})

    def invalid(self) -> bytes:
        base = self.reading()
        size = self.dimensions[base["sensor"]]
        cases = [42, [1, 2, 3], "reading", {**base, "extra": 1},
                 {**base, "extra": 1, "sensor": "nobody"}, {k: v for k, v in base.items() if k != "seq"},
                 {**base, "t": float("nan")}, {**base, "t": "soon"}, {**base, "seq": -1},
                 {**base, "value": [0.0] * (size + 1)}, {**base, "value": _nested(5)},
                 {**base, "cov": [-1.0] * (size * size)}]
        return pack(cases[int(self.rng.integers(len(cases)))])

    def flip(self) -> bytes:
        data = bytearray(pack(self.reading()))
        for _ in range(int(self.rng.integers(1, 4))):
            data[int(self.rng.integers(len(data)))] = int(self.rng.integers(256))
        return bytes(data)


def hostile_messages(dimensions: Mapping[str, int], count: int, seed: int, valid_share: float = 0.5,
                     kinds: tuple[str, ...] = KINDS) -> list[tuple[bytes, str | None]]:
    """``count`` messages (bytes, expected outcome): VALID for a reading the node accepts, a
    malformed reason, or None (a ``flip``: unknown; a flipped stamp can also make later valid
    readings of its sensor go backwards). The other messages are of ``kinds``, drawn evenly. Valid
    readings are 1 ms apart, ``seq`` +1 per sensor, starting at seq 2**64 − 2 for the first sensor
    (its counter wraps past 2**64 − 1)."""
    rng = np.random.default_rng(seed)
    cases = _Cases(dimensions, rng)
    seqs = {name: 0 for name in dimensions}
    seqs[cases.names[0]] = 2**64 - 2
    messages: list[tuple[bytes, str | None]] = []
    t = 0.0
    for _ in range(count):
        if rng.random() < valid_share:
            t += 1e-3
            sensor = cases.names[int(rng.integers(len(cases.names)))]
            messages.append((pack(cases.reading(sensor, t, seqs[sensor])), VALID))
            seqs[sensor] = (seqs[sensor] + 1) % 2**64
        else:
            kind = kinds[int(rng.integers(len(kinds)))]
            messages.append((getattr(cases, kind)(), None if kind == "flip" else kind))
    return messages
