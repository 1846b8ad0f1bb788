"""The sensor message: one msgpack map per reading, with encoding, decoding and validation.

Keys (no others):

=========  ========  =======================================================================
key        required  value
=========  ========  =======================================================================
``sensor`` yes       sensor id (text), a key of the sensor configuration
``t``      yes       time stamp [s] on the sensor clock (finite number)
``seq``    yes       per-sensor counter (integer ≥ 0), +1 per reading; gaps reveal drops
``value``  yes       float for a 1-axis sensor, list of d floats for a d-axis one (finite), in
                     the sensor's units (rad/s, m/s², rad or m, N or N·m)
``cov``    no        covariance of ``value``: a float (1-axis) or a list of d·d floats, row-major;
                     symmetric positive definite; replaces the configured noise for this reading
=========  ========  =======================================================================

Integers are accepted where floats are expected; booleans are not numbers here. Every rejection
raises MessageError (an MbstateError) naming the key and the problem.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import msgpack
import numpy as np

from estimator.errors import MbstateError

REQUIRED = ("sensor", "t", "seq", "value")
OPTIONAL = ("cov",)


class MessageError(MbstateError):
    """A sensor message that cannot be used."""


@dataclass(frozen=True)
class Reading:
    """One validated reading; ``value`` (d,), ``cov`` (d, d) or None."""

    sensor: str
    t: float
    seq: int
    value: np.ndarray
    cov: np.ndarray | None = None

    def to_map(self) -> dict:
        """The message map (scalar sensors as plain floats)."""
        message = {"sensor": self.sensor, "t": float(self.t), "seq": int(self.seq), "value": _plain(self.value)}
        if self.cov is not None:
            message["cov"] = _plain(self.cov.ravel())
        return message


def _plain(values: np.ndarray) -> float | list[float]:
    values = np.asarray(values, float).ravel()
    return float(values[0]) if values.size == 1 else [float(v) for v in values]


def encode(reading: Reading) -> bytes:
    """msgpack bytes of a reading."""
    return msgpack.packb(reading.to_map(), use_bin_type=True)


def decode(data: bytes, dimensions: Mapping[str, int]) -> Reading:
    """Unpack and validate one message; ``dimensions`` maps known sensor ids to their value size."""
    try:
        message = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError) as exc:
        raise MessageError(f"not one msgpack object ({type(exc).__name__}: {exc})") from None
    return validate(message, dimensions)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(key: str, value: object, size: int) -> np.ndarray:
    """A float (size 1) or a list of ``size`` finite numbers."""
    items = [value] if size == 1 and _is_number(value) else value
    if not isinstance(items, (list, tuple)) or not all(_is_number(v) for v in items):
        expected = "a number" if size == 1 else f"a list of {size} numbers"
        raise MessageError(f"'{key}' must be {expected}, got {value!r}")
    if len(items) != size:
        raise MessageError(f"'{key}' must have {size} element{'s' if size != 1 else ''}, got {len(items)}")
    array = np.array(items, dtype=float)
    if not np.all(np.isfinite(array)):
        raise MessageError(f"'{key}' has a non-finite element: {value!r}")
    return array


def validate(message: object, dimensions: Mapping[str, int]) -> Reading:
    """A Reading from a decoded message map; MessageError naming the first problem."""
    if not isinstance(message, dict):
        raise MessageError(f"a message must be a map, got {type(message).__name__}")
    unknown = sorted(str(k) for k in message if k not in REQUIRED + OPTIONAL)
    if unknown:
        raise MessageError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                           f"(allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [k for k in REQUIRED if k not in message]
    if missing:
        raise MessageError(f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    sensor = message["sensor"]
    if not isinstance(sensor, str):
        raise MessageError(f"'sensor' must be text, got {sensor!r}")
    if sensor not in dimensions:
        raise MessageError(f"unknown sensor '{sensor}' (known: {', '.join(dimensions)})")
    t = message["t"]
    if not _is_number(t) or not math.isfinite(t):
        raise MessageError(f"'t' must be a finite number of seconds, got {t!r}")
    seq = message["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise MessageError(f"'seq' must be an integer >= 0, got {seq!r}")
    size = dimensions[sensor]
    value = _numbers("value", message["value"], size)
    cov = None
    if "cov" in message:
        cov = _numbers("cov", message["cov"], size * size).reshape(size, size)
        if not np.allclose(cov, cov.T, rtol=1e-9, atol=0.0):
            raise MessageError("'cov' must be symmetric")
        if np.any(np.linalg.eigvalsh(cov) <= 0.0):
            raise MessageError("'cov' must be positive definite")
    return Reading(sensor=sensor, t=float(t), seq=seq, value=value, cov=cov)
