"""The sensor message: one msgpack map per reading, its bounded unpacking and its validation.

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
raises MessageError (an MbstateError) naming the key and the problem, and its ``reason`` (the
node's malformed counter): ``undecodable`` (not one msgpack object, map keys that are arrays or
maps), ``too_deep`` (lists and maps nested more than MAX_DEPTH levels), ``unknown_sensor``, or
``invalid`` (anything else). The first problem found decides, in the order of the checks:
unpacking, depth, keys, ``sensor``, ``t``, ``seq``, ``value``, ``cov``. Values quoted in errors
are shortened (estimator.errors.shown), never built by recursion over the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import msgpack
import numpy as np

from estimator.errors import MbstateError, nesting_depth, shown

REQUIRED = ("sensor", "t", "seq", "value")
OPTIONAL = ("cov",)
KEYS, KEYS_REQUIRED = frozenset(REQUIRED + OPTIONAL), frozenset(REQUIRED)
MAX_DEPTH = 32  # nesting levels of any message the node unpacks (a reading needs 2: map, list)
SEQ_LIMIT = 2**64  # ``seq`` is an unsigned 64-bit counter (msgpack's largest integer)


class MessageError(MbstateError):
    """A sensor message that cannot be used; ``reason``: its malformed counter (module docstring)."""

    def __init__(self, text: str, reason: str = "invalid") -> None:
        super().__init__(text)
        self.reason = reason


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


def unpack(data: bytes) -> object:
    """One msgpack object, nested at most MAX_DEPTH levels; MessageError ``undecodable`` (bad msgpack,
    trailing bytes, invalid UTF-8, a map key that is an array or a map) or ``too_deep``."""
    try:
        message = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, TypeError) as exc:  # msgpack's errors are ValueErrors; unhashable keys TypeError
        raise MessageError(f"not one msgpack object ({type(exc).__name__}: {shown(str(exc), 80)})",
                           "undecodable") from None
    if nesting_depth(message, MAX_DEPTH) > MAX_DEPTH:
        raise MessageError(f"nested more than {MAX_DEPTH} levels deep", "too_deep")
    return message


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(key: str, value: object, size: int) -> np.ndarray:
    """A float (size 1) or a list of ``size`` finite numbers."""
    if size == 1 and _is_number(value) and math.isfinite(value):  # a 1-axis reading: the common case
        return np.array((float(value),))
    items = [value] if size == 1 and _is_number(value) else value
    if not isinstance(items, (list, tuple)) or not all(_is_number(v) for v in items):
        expected = "a number" if size == 1 else f"a list of {size} numbers"
        raise MessageError(f"'{key}' must be {expected}, got {shown(value)}")
    if len(items) != size:
        raise MessageError(f"'{key}' must have {size} element{'s' if size != 1 else ''}, got {len(items)}")
    array = np.array(items, dtype=float)
    if not all(map(math.isfinite, array.tolist())):  # a few floats: cheaper than numpy's calls
        raise MessageError(f"'{key}' has a non-finite element: {shown(value)}")
    return array


def validate(message: object, dimensions: Mapping[str, int], depth_checked: bool = False) -> Reading:
    """A Reading from a decoded message map; MessageError naming the first problem (with its reason).
    ``depth_checked``: the map came from ``unpack``, which has bounded its depth already."""
    if not isinstance(message, dict):
        raise MessageError(f"a message must be a map, got {type(message).__name__}")
    if not depth_checked and nesting_depth(message, MAX_DEPTH) > MAX_DEPTH:
        raise MessageError(f"nested more than {MAX_DEPTH} levels deep", "too_deep")
    unknown = [] if message.keys() <= KEYS else sorted(
        shown(k, 40) for k in message if not isinstance(k, str) or k not in KEYS)
    if unknown:
        raise MessageError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown[:6])}"
                           f"{f' … ({len(unknown)} in all)' if len(unknown) > 6 else ''} "
                           f"(allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [] if message.keys() >= KEYS_REQUIRED else [k for k in REQUIRED if k not in message]
    if missing:
        raise MessageError(f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    sensor = message["sensor"]
    if not isinstance(sensor, str):
        raise MessageError(f"'sensor' must be text, got {shown(sensor)}")
    if sensor not in dimensions:
        raise MessageError(f"unknown sensor {shown(sensor, 60)} (known: {', '.join(dimensions)})",
                           "unknown_sensor")
    t = message["t"]
    if not _is_number(t) or not math.isfinite(t):
        raise MessageError(f"'t' must be a finite number of seconds, got {shown(t)}")
    seq = message["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < SEQ_LIMIT:
        raise MessageError(f"'seq' must be an integer >= 0 and < 2**64, got {shown(seq)}")
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
