"""What the node, replay and the lab see of an online estimator (the smoother of
estimator.online.estimator or a filter baseline of estimator.online.filters): the ``Estimator``
protocol, its per-step output ``StepEstimate`` and the names of its counters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from sensors.messages import Reading

COUNTERS = ("readings", "steps", "pending", "used", "late", "dropped", "ignored", "outlier", "overruns",
            "degraded_steps", "coalesced_steps", "recoveries", "solver_recoveries", "resets", "resyncs",
            "catch_ups", "reinitializations", "startup_failures", "relinearizations")
# reset reasons and their counters
PAYLOAD_KEYS = ("payload.mass", "payload.com.x", "payload.com.y", "payload.com.z")  # StepEstimate.model, payload
RESTARTS = {"resync": "resyncs", "caught_up": "catch_ups", "reinitialized": "reinitializations"}


@dataclass(frozen=True)
class StepEstimate:
    """The estimate of one grid step, published when the step is processed (the newest state of the
    window, given every reading up to then)."""

    step: int
    t: float  # sensor time of the grid step [s]
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    forces: dict[str, float]  # estimated unknown actuator forces by actuator name [N, N·m]
    lam: np.ndarray  # multipliers (m; zero on redundant rows)
    sigma: dict[str, np.ndarray] | None  # {"q", "qd", "forces", "wrench.<frame>"; "payload": σ of θ}: marginal
    # std devs when enabled
    latency: float  # wall seconds of this step (its share when steps are coalesced)
    update_steps: int  # estimates published with this one: the grid steps of its smoother update (1 unless
    # coalesced); with output_delay, the steps that update published (the first output_delay updates publish
    # none, so a recorded log's timing lacks them)
    flags: tuple[str, ...]  # "startup", "degraded", "coalesced", "recovered", "solver_recovery", "unobservable",
    # "resync", "caught_up", "reinitialized"
    model: dict[str, float] = field(default_factory=dict)  # model-error states: "gravity_error" (gravity_sigma),
    # "mass_error.<body>" (mass_sigma), "length_error.<body>" (length_sigma), "friction.<coordinate>"
    # (friction_sigma), PAYLOAD_KEYS (payload: m [kg], c [m] in the link's axes; σ of θ in sigma["payload"])
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)  # external wrench by frame name: (mx, my, mz,
    # fx, fy, fz) [N·m, N] in the frame's axes about its origin (the smoother's ``wrenches`` states; a baseline's
    # estimate); the momentum observer also puts its external joint torques in ``model`` as
    # "external_torque.<joint>" [N·m or N]


class Estimator(Protocol):
    """Readings in (``add``, in arrival order), estimates out (``advance`` to the newest stamp seen)."""

    observability: Any  # the start-up's estimator.online.observability.ObservabilityReport, None before

    @property
    def started(self) -> bool:
        """True once the time grid and the start state are set."""

    @property
    def counters(self) -> dict[str, int]:
        """The totals named in COUNTERS, with the current degradation ``level``."""

    def add(self, reading: Reading) -> str:
        """Take one validated reading; its disposition (a COUNTERS name)."""

    def advance(self, sensor_time: float, final: bool = False) -> list[StepEstimate]:
        """The estimates of every grid step due at ``sensor_time`` (``final``: the input has ended)."""

    def reset(self, reason: str | None = None) -> None:
        """Back to start-up, counters kept; ``reason`` None, ``resync`` or ``reinitialized``."""
