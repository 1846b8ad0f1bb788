"""The independent coordinates of each grid step: coordinate partitioning with a pivot check (García de
Jalón and Bayo, ch. 5), per step, so that no pose but a true singularity of the mechanism is singular for
the estimator.

z = q[I] determines the step's other columns only while the constraint rows' block on them, Φq_S off I,
is regular (kinematics.partition_quality, its smallest singular value, the pivot): a point's x at its
extreme (a crank passing angle 0) or a rocker's angle at its dead point does not. Each step's I is
checked at its predicted pose (``choose``): kept while its pivot is at least ``SWITCH_RATIO`` of its
value where it was chosen (a partition that was good stays in use: the actuated coordinates or the
angles of the start's choice, kinematics.suggested_independent, a crank's angle through whole turns),
else replaced by the choice of QR with column pivoting there (kinematics.repartition).

The process rows of step k (Adams-Moulton on the stencil k+1−p … k, estimator.factors.estimation_state)
integrate P_k = I_{k+1−p}, the partition of the stencil's oldest step, and step k's variable s_k carries
z on I_k ∪ P_k: every step of a stencil then carries the stencil's P (at most one switch in any p
consecutive steps, which ``choose`` enforces, makes that hold), so a switch changes no row and
approximates nothing; for p − 1 steps after it, s is wider by the coordinates switched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.reduced_state import ReducedState
from estimator.kinematics import repartition, tangent_basis
from estimator.model_protocol import Model, constraint_jacobian, tangent_metric

SWITCH_RATIO = 0.25  # I is kept while its pivot is at least this share of its value where it was chosen


class Partitions:
    """I_k of each step since the start (``choose``), and the layout and ReducedState of each step's s."""

    def __init__(self, mech: Model, layout: EstimationLayout, rows: Sequence[int], order: int,
                 required: Sequence[int] = ()) -> None:
        """``layout``: the estimator's, its ``independent`` the start's I; ``rows``: S, the independent
        constraint rows; ``order``: the integrator's p; ``required``: coordinates every I must hold (the
        jerk force model's driven ones)."""
        self.mech, self.layout, self.rows, self.order, self.required = mech, layout, rows, order, set(required)
        self.start = tuple(layout.integrated)
        self.metric = tangent_metric(mech)  # T(q, N): the model's motion_tangent
        self._reduced: dict[tuple[int, ...], ReducedState] = {}
        self.independent: dict[int, tuple[int, ...]] = {}
        self.tangents: dict[int, np.ndarray] = {}  # T_k: the tangent metric at step k's predicted pose
        self.reference: float | None = None  # the pivot of the newest I where it was chosen
        self.switches = 0

    def reset(self) -> None:
        """Back to the start's I (a new grid)."""
        self.independent, self.tangents, self.reference = {}, {}, None

    def choose(self, k: int, q) -> None:
        """I_k at step k's predicted configuration q (module docstring); step k − 1 chosen before."""
        previous = self.independent.get(k - 1, self.start)
        recent = [self.independent.get(j, previous) for j in range(max(0, k + 1 - self.order), k)]
        chosen = previous
        jacobian = constraint_jacobian(self.mech, q)[list(self.rows)]
        basis = tangent_basis(jacobian) if len(self.rows) else np.eye(self.mech.n)
        self.tangents[k] = self.metric(q, basis)
        if self.layout.independent is not None and all(i == previous for i in recent):
            candidate, quality = repartition(jacobian, previous, self.reference, SWITCH_RATIO)
            if self.required <= set(candidate):
                chosen, self.reference = candidate, quality
                self.switches += chosen != previous
        self.independent[k] = chosen

    def integrated(self, k: int) -> tuple[int, ...]:
        """P_k: the coordinates the process rows of step k integrate (those of its stencil's oldest step)."""
        return self.independent[max(0, k + 1 - self.order)]

    def layout_of(self, k: int) -> EstimationLayout:
        """Step k's layout: s_k carries z on I_k ∪ P_k."""
        return self.reduced(k).layout

    def reduced(self, k: int) -> ReducedState:
        """The elimination of step k's dependent columns (estimator.factors.reduced_state)."""
        shared = tuple(sorted(set(self.independent[k]) | set(self.integrated(k))))
        if shared not in self._reduced:
            layout = self.layout if shared == self.start else dataclasses.replace(self.layout, independent=shared)
            self._reduced[shared] = ReducedState(layout)
        return self._reduced[shared]

    def forget(self, before: int) -> None:
        """Drop the steps before ``before``: the window's oldest step less the integrator's order and one
        (its stencil, and the lift kept one step beyond the window)."""
        self.independent = {k: i for k, i in self.independent.items() if k >= before}
        self.tangents = {k: t for k, t in self.tangents.items() if k >= before}
