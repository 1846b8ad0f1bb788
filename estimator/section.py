"""A validating reader of one YAML map of the sensor configuration.

Every accessor names the full key path in its error (``fourbar.yaml: sensors.coupler_gyro.rate:
must be a positive number``) and the reader rejects keys it was never asked for, so a typo is an
error instead of a silently ignored setting. Every number has a range: the accessor's bounds, and
at most LIMIT in magnitude where a key states none. Values quoted in errors are shortened
(estimator.errors.shown).
"""

from __future__ import annotations

import math
from typing import Any

from estimator.errors import LIMIT, MbstateError, shown
from estimator.model import Body, Mechanism


class Section:
    """The map found at ``where`` in ``source``; accessors take a key and mark it as used."""

    def __init__(self, source: str, where: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise MbstateError(f"{source}: {where}: expected a map, got {type(data).__name__}")
        self.source, self.where, self.data = source, where, data
        self._used: set[str] = set()

    def error(self, key: str, problem: str) -> MbstateError:
        """An error naming the file, the key path and the problem."""
        return MbstateError(f"{self.source}: {self.where}.{key}: {problem}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        """The value as written (``default`` when absent)."""
        self._used.add(key)
        return self.data.get(key, default)

    def text(self, key: str, default: str | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str) or not value:
            raise self.error(key, "required text" if value is None else f"must be text, got {shown(value)}")
        return value

    def number(self, key: str, default: float | None = None, minimum: float | None = None,
               positive: bool = False, maximum: float = LIMIT) -> float:
        """A finite number; ``positive``: > 0; ``minimum``: ≥ minimum; ≤ ``maximum`` and ≥ −LIMIT."""
        value = self.raw(key, default)
        if value is None:
            raise self.error(key, "required")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(key, f"must be a finite number, got {shown(value)}")
        if positive and value <= 0.0:
            raise self.error(key, f"must be a positive number, got {shown(value)}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be at least {minimum:g}, got {shown(value)}")
        if value > maximum or value < -LIMIT:
            raise self.error(key, f"must be at most {maximum:g}, got {shown(value)}" if value > maximum
                             else f"must be at least {-LIMIT:g}, got {shown(value)}")
        return float(value)

    def count(self, key: str, default: int, minimum: int = 1, maximum: int = int(LIMIT)) -> int:
        """A whole number in [minimum, maximum] (an integer in the file, or a float with no fraction)."""
        value = self.raw(key, default)
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or value != int(value) or not minimum <= value <= maximum):
            raise self.error(key, f"must be a whole number in [{minimum}, {maximum}], got {shown(value)}")
        return int(value)

    def numbers(self, key: str, size: int, default: tuple[float, ...] | None = None) -> tuple[float, ...]:
        """A list of ``size`` finite numbers, each at most LIMIT in magnitude."""
        value = self.raw(key, default)
        if value is None:
            raise self.error(key, "required")
        if (not isinstance(value, (list, tuple)) or len(value) != size
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                       or abs(v) > LIMIT for v in value)):
            raise self.error(key, f"must be a list of {size} finite numbers within ±{LIMIT:g}, got {shown(value)}")
        return tuple(float(v) for v in value)

    def number_map(self, key: str) -> dict[str, float]:
        """A map of names to finite numbers (empty when the key is absent)."""
        values = self.section(key, {})
        result = {str(name): values.number(name) for name in values.data}
        values.finish()
        return result

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {shown(value)}")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self.raw(key, default)
        if value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}, got {shown(value)}")
        return value

    def section(self, key: str, default: dict | None = None) -> Section:
        """The nested map at ``key``."""
        value = self.raw(key, default)
        if value is None:
            raise self.error(key, "required")
        return Section(self.source, f"{self.where}.{key}", value)

    def body(self, mech: Mechanism, key: str) -> Body:
        """A body of ``mech`` given by name or index."""
        value = self.raw(key)
        names = [b.name for b in mech.bodies]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return mech.bodies[value]
        if isinstance(value, str) and value in names:
            return mech.bodies[names.index(value)]
        raise self.error(key, f"unknown body {shown(value)} (known: {', '.join(names)})")

    def point(self, mech: Mechanism, key: str) -> int:
        """A point index of ``mech`` (by index or name)."""
        value = self.raw(key)
        count = len(mech.point_names)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count:
            return value
        if isinstance(value, str) and value in mech.point_names:
            return mech.point_names.index(value)
        raise self.error(key, f"unknown point {shown(value)} (points are 0..{count - 1} or a point name)")

    def finish(self) -> None:
        """Reject keys nobody asked for."""
        unknown = sorted(key[:40].replace("\n", "\\n") if isinstance(key, str) else shown(key, 40)
                         for key in self.data if key not in self._used)
        if unknown:
            text = ", ".join(unknown)
            raise MbstateError(f"{self.source}: {self.where}: unknown key{'s' if len(unknown) > 1 else ''} "
                               f"{text if len(text) <= 200 else text[:197] + '...'}")
