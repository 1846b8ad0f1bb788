"""The sensor message schema: round trips and one test per rejection."""

from __future__ import annotations

import math

import msgpack
import numpy as np
import pytest

from estimator.wire import pack
from sensors.messages import MessageError, Reading, unpack, validate

KNOWN = {"gyro": 1, "accel": 2}


def message(**changes) -> dict:
    base = {"sensor": "accel", "t": 1.25, "seq": 7, "value": [0.5, -9.8]}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def test_round_trip_of_scalar_and_vector_readings_with_cov() -> None:
    scalar = Reading(sensor="gyro", t=0.001, seq=1, value=np.array([0.25]))
    assert msgpack.unpackb(pack(scalar.to_map())) == {"sensor": "gyro", "t": 0.001, "seq": 1, "value": 0.25}
    vector = Reading(sensor="accel", t=2.0, seq=0, value=np.array([1.0, 2.0]), cov=np.diag([0.01, 0.04]))
    back = validate(unpack(pack(vector.to_map())), KNOWN)
    assert (back.sensor, back.t, back.seq) == ("accel", 2.0, 0)
    np.testing.assert_array_equal(back.value, [1.0, 2.0])
    np.testing.assert_array_equal(back.cov, np.diag([0.01, 0.04]))
    assert validate(message(value=[1, 2], t=3), KNOWN).value.dtype == float  # integers are numbers


@pytest.mark.parametrize("bad,match", [
    (["not", "a", "map"], "must be a map"),
    (message(extra=1), "unknown key 'extra'"),
    (message(extra=1, sensor="lidar"), "unknown key 'extra'"),  # the first problem found decides
    (message(seq=2**64), "'seq' must be an integer >= 0 and < 2\\*\\*64"),
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
        validate(unpack(msgpack.packb(message()) + b"\x01"), KNOWN)
    with pytest.raises(MessageError, match="not one msgpack object"):
        validate(unpack(msgpack.packb(message())[:-2]), KNOWN)


def test_the_reason_is_the_first_problem_found() -> None:
    with pytest.raises(MessageError) as error:
        validate(message(extra=1, sensor="lidar"), KNOWN)
    assert error.value.reason == "invalid"
    with pytest.raises(MessageError) as error:
        validate(message(sensor="lidar"), KNOWN)
    assert error.value.reason == "unknown_sensor"


def test_hostile_bytes_are_undecodable_or_too_deep_with_short_texts() -> None:
    deep = 0.0
    for _ in range(1000):
        deep = [deep]
    for data, reason in [(bytes.fromhex("81910101"), "undecodable"), (b"\x81\x81\x01\x01\x01", "undecodable"),
                         (msgpack.packb(message(value=deep)), "too_deep")]:
        with pytest.raises(MessageError) as error:
            validate(unpack(data), KNOWN)
        assert error.value.reason == reason and len(str(error.value)) < 200
    with pytest.raises(MessageError, match=r"'value' must be a list of 2 numbers, got \[\[\[\[...\]\]\]\]$"):
        validate(message(value=[[[[[1.0]]]]]), KNOWN)
