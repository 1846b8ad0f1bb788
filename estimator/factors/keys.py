"""The one place where GTSAM keys are built, and the map between time stamps and step indices.

Variables of step k (all ``gtsam.Vector``):

====  ========  =========================================
key   symbol    variable
====  ========  =========================================
Q     ``q``     coordinates q [m, rad]
V     ``v``     velocities q̇
A     ``a``     accelerations q̈
L     ``l``     Lagrange multipliers λ
F     ``f``     unknown actuator forces (torques) [N, N·m]
X     ``s``     stacked state of a step, [q; q̇; q̈; λ] or [q; q̇; q̈] (estimator.factors.stacked_state)
====  ========  =========================================
"""

from __future__ import annotations

from dataclasses import dataclass

import gtsam

from estimator.errors import MbstateError


def Q(k: int) -> int:
    """Key of q at step k."""
    return gtsam.symbol("q", k)


def V(k: int) -> int:
    """Key of q̇ at step k."""
    return gtsam.symbol("v", k)


def A(k: int) -> int:
    """Key of q̈ at step k."""
    return gtsam.symbol("a", k)


def L(k: int) -> int:
    """Key of the multipliers λ at step k."""
    return gtsam.symbol("l", k)


def F(k: int) -> int:
    """Key of the unknown actuator forces at step k."""
    return gtsam.symbol("f", k)


def X(k: int) -> int:
    """Key of the stacked state of step k."""
    return gtsam.symbol("s", k)


@dataclass(frozen=True)
class TimeGrid:
    """Uniform time steps t_k = t0 + k dt [s]; a stamp maps to the nearest step."""

    t0: float
    dt: float

    def __post_init__(self) -> None:
        if not self.dt > 0.0:
            raise MbstateError(f"time step must be positive, got dt = {self.dt}")

    def step(self, t: float) -> int:
        """Index of the step nearest to stamp t (rounded, so 0.30000000004 s is step 60 at 5 ms)."""
        return int(round((t - self.t0) / self.dt))

    def time(self, k: int) -> float:
        """Stamp of step k [s]."""
        return self.t0 + k * self.dt


def drop_oldest(pending: dict[int, list]) -> None:
    """Discard the first reading of the earliest step in ``pending`` (readings by grid step, none
    empty), and the step once it holds none: what a bounded reading buffer gives up first."""
    oldest = min(pending)
    pending[oldest].pop(0)
    if not pending[oldest]:
        del pending[oldest]
