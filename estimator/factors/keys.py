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

Variables of body (joint) i of a spatial dynamics graph (estimator.spatial_graph):

=============  ========  ==================================================
key            symbol    variable
=============  ========  ==================================================
BODY_TWIST     ``V``     body twist Vᵢ (6) [rad/s; m/s]
BODY_ACCEL     ``A``     body twist acceleration V̇ᵢ (6) [rad/s²; m/s²]
JOINT_WRENCH   ``F``     wrench through joint i onto body i, body frame (6) [N·m; N]
JOINT_ACCEL    ``D``     joint acceleration q̈ᵢ (1)
JOINT_TORQUE   ``T``     joint force τᵢ (1) [N·m or N]
LOOP_WRENCH    ``W``     wrench through loop joint k, its frame B (6) [N·m; N]
LOOP_ACCEL     ``J``     loop joint k's accelerations along its free directions (0–3)
=============  ========  ==================================================
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


def BODY_TWIST(i: int) -> int:
    """Key of body i's twist Vᵢ."""
    return gtsam.symbol("V", i)


def BODY_ACCEL(i: int) -> int:
    """Key of body i's twist acceleration V̇ᵢ."""
    return gtsam.symbol("A", i)


def JOINT_WRENCH(i: int) -> int:
    """Key of the wrench through joint i."""
    return gtsam.symbol("F", i)


def JOINT_ACCEL(i: int) -> int:
    """Key of joint i's acceleration q̈ᵢ."""
    return gtsam.symbol("D", i)


def JOINT_TORQUE(i: int) -> int:
    """Key of joint i's force τᵢ."""
    return gtsam.symbol("T", i)


def LOOP_WRENCH(k: int) -> int:
    """Key of loop joint k's wrench."""
    return gtsam.symbol("W", k)


def LOOP_ACCEL(k: int) -> int:
    """Key of loop joint k's accelerations."""
    return gtsam.symbol("J", k)


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
