"""The sensor message schema: round trips and one test per rejection."""

from __future__ import annotations

import math

import msgpack
import numpy as np
import pytest

from sensors.messages import MessageError, Reading, decode, encode, validate

KNOWN = {"gyro": 1, "accel": 2}


def message(**changes) -> dict:
    base = {"sensor": "accel", "t": 1.25, "seq": 7, "value": [0.5, -9.8]}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def test_round_trip_of_scalar_and_vector_readings_with_cov() -> None:
    scalar = Reading(sensor="gyro", t=0.001, seq=1, value=np.array([0.25]))
    assert msgpack.unpackb(encode(scalar)) == {"sensor": "gyro", "t": 0.001, "seq": 1, "value": 0.25}
    vector = Reading(sensor="accel", t=2.0, seq=0, value=np.array([1.0, 2.0]), cov=np.diag([0.01, 0.04]))
    back = decode(encode(vector), KNOWN)
    assert (back.sensor, back.t, back.seq) == ("accel", 2.0, 0)
    np.testing.assert_array_equal(back.value, [1.0, 2.0])
    np.testing.assert_array_equal(back.cov, np.diag([0.01, 0.04]))
    assert validate(message(value=[1, 2], t=3), KNOWN).value.dtype == float  # integers are numbers


@pytest.mark.parametrize("bad,match", [
    (["not", "a", "map"], "must be a map"),
    (message(extra=1), "unknown key 'extra'"),
    (message(seq=...), "missing key seq"),
    (message(sensor=5), "'sensor' must be text"),
    (message(sensor="lidar"), "unknown sensor 'lidar'"),
    (message(t="now"), "'t' must be a finite number"),
    (message(t=math.inf), "'t' must be a finite number"),
    (message(t=True), "'t' must be a finite number"),
    (message(seq=-1), "'seq' must be an integer >= 0"),
    (message(seq=1.0), "'seq' must be an integer >= 0"),
    (message(value=0.5), "'value' must be a list of 2 numbers"),
    (message(value=[1.0, "x"]), "'value' must be a list of 2 numbers"),
    (message(value=[1.0, 2.0, 3.0]), "'value' must have 2 elements, got 3"),
    (message(value=[1.0, math.nan]), "'value' has a non-finite element"),
    (message(sensor="gyro", value=[1.0, 2.0]), "'value' must have 1 element, got 2"),
    (message(cov=[1.0, 0.0, 0.0]), "'cov' must have 4 elements, got 3"),
    (message(cov=[1.0, 0.5, 0.0, 1.0]), "'cov' must be symmetric"),
    (message(cov=[1.0, 0.0, 0.0, -1.0]), "'cov' must be positive definite"),
    (message(cov=[1.0, 0.0, 0.0, math.inf]), "'cov' has a non-finite element"),
])
def test_each_rejection_names_the_problem(bad: object, match: str) -> None:
    with pytest.raises(MessageError, match=match):
        validate(bad, KNOWN)


def test_undecodable_bytes_are_rejected() -> None:
    with pytest.raises(MessageError, match="not one msgpack object"):
        decode(msgpack.packb(message()) + b"\x01", KNOWN)
    with pytest.raises(MessageError, match="not one msgpack object"):
        decode(msgpack.packb(message())[:-2], KNOWN)
