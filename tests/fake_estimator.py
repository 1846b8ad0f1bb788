"""A small stand-in that follows the OnlineEstimator interface, for testing the node's runtime,
replay and tools apart from the estimator core.

Grid t_k = k / rate. ``add`` keeps a reading when it is not older than the window (lag steps behind
the newest step done), else says ``late``; before its first step it says ``pending``. ``advance(t)``
does every step with t_k <= t (it never coalesces, so ``final`` changes nothing); the estimate of step k carries q = q0 + (number of readings used so
far) in every coordinate and the force ``motor`` = the sum of the values of the readings used so
far, so a test can see which readings were used. Deterministic; latency from the injected clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from estimator.section import Section


@dataclass(frozen=True)
class FakeConfig:
    rate: float = 100.0
    lag: int = 5
    latency_budget_ms: float = 1000.0

    @classmethod
    def from_section(cls, section: Section, mech) -> FakeConfig:
        """Reads rate, lag and latency_budget_ms; takes the real estimator's other keys without a look."""
        for key in set(section.data) - {"rate", "lag", "latency_budget_ms"}:
            section.raw(key)
        return cls(rate=section.number("rate", cls.rate, positive=True), lag=int(section.number("lag", cls.lag)),
                   latency_budget_ms=section.number("latency_budget_ms", cls.latency_budget_ms, positive=True))


@dataclass(frozen=True)
class FakeStep:
    step: int
    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    forces: dict
    lam: np.ndarray
    sigma: dict | None
    latency: float
    flags: tuple[str, ...]
    update_steps: int = 1
    model: dict = field(default_factory=dict)
    wrenches: dict = field(default_factory=dict)


class FakeEstimator:
    def __init__(self, mech, sensors, config: FakeConfig, clock) -> None:
        self.mech, self.config, self.clock = mech, config, clock
        self.observability = None  # no start-up check (estimator.online.interface.Estimator)
        self.reset()

    def reset(self, reason: str | None = None) -> None:
        """Forget everything; a ``reason`` (resync, reinitialized) flags the estimates that follow."""
        self.reason = reason
        self.next_step: int | None = None
        self.used: list[float] = []
        self._counters = {"steps": 0, "used": 0, "late": 0, "dropped": 0, "recoveries": 0}

    @property
    def started(self) -> bool:
        return self.next_step is not None

    @property
    def counters(self) -> dict:
        return dict(self._counters)

    def add(self, reading) -> str:
        if self.started and reading.t < (self.next_step - 1 - self.config.lag) / self.config.rate:
            self._counters["late"] += 1
            return "late"
        self.used.append(float(np.sum(reading.value)))
        self._counters["used"] += 1
        if self.next_step is None:
            self.next_step = math.ceil(reading.t * self.config.rate - 1e-9)
            return "pending"
        return "used"

    def advance(self, sensor_time: float, final: bool = False) -> list[FakeStep]:
        steps = []
        while self.started and self.next_step / self.config.rate <= sensor_time + 1e-12:
            begin = self.clock()
            k, n = self.next_step, self.mech.n
            steps.append(FakeStep(step=k, t=k / self.config.rate, q=self.mech.q0 + len(self.used), qd=np.zeros(n),
                                  qdd=np.zeros(n), forces={"motor": float(sum(self.used))},
                                  lam=np.zeros(self.mech.m), sigma=None, latency=self.clock() - begin,
                                  flags=(self.reason,) if self.reason else ()))
            self.next_step += 1
            self._counters["steps"] += 1
        return steps


def fake_factory(config, clock) -> FakeEstimator:
    return FakeEstimator(config.mech, config.sensors, config.estimator, clock)
