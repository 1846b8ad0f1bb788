"""The stacked state of a step as GTSAM variables: X(k) = x without λ, and L(k) = λ.

λ enters only its own step's factor (the dynamics rows, and load cells on a constraint force), never
the process factors between steps. As a variable of its own, L(k) is a leaf of the Bayes tree:
iSAM2 eliminates it once, when its step is added, and the variables it re-eliminates at every update
(the chain X(k − N_w) … X(k)) are |S| narrower. Without λ in the state (kinematics only) X(k) is x.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import gtsam
import numpy as np

from estimator.factors.adapter import ErrorFunction
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.keys import L, X
from estimator.factors.native import LinearRelation


@dataclass(frozen=True)
class StateSplit:
    """How a stacked state x (EstimationLayout) maps onto the variables of its step."""

    layout: EstimationLayout

    @cached_property
    def rest(self) -> slice:
        """x in X(k): every block but λ, which comes last (EstimationLayout)."""
        return slice(0, self.layout.lam.start)

    @cached_property
    def parts(self) -> int:
        """Variables per step: 2 with λ, else 1."""
        return 2 if len(self.layout.rows) else 1

    def keys(self, k: int) -> list[int]:
        """The keys of step k."""
        return [X(k), L(k)][:self.parts]

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """x as the values of its step's variables."""
        return [x[self.rest], x[self.layout.lam]][:self.parts]

    def join(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """x from the values of its step's variables."""
        if self.parts == 1:
            return np.asarray(values[0])
        x = np.empty(self.layout.size)
        x[self.rest], x[self.layout.lam] = values
        return x

    def columns(self, jacobian: np.ndarray) -> list[np.ndarray]:
        """∂e/∂x as the blocks of the step's variables."""
        return [jacobian[:, self.rest], jacobian[:, self.layout.lam]][:self.parts]

    def function(self, fn: ErrorFunction) -> ErrorFunction:
        """``fn(x, jac)`` of one stacked state as an error function of its step's variables."""

        def on_parts(*values: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
            error, jacobians = fn(self.join(values), jac=jac)
            return error, (self.columns(jacobians[0]) if jac else None)

        return on_parts

    def relation(self, relation: LinearRelation) -> SplitRelation:
        """A linear relation between stacked states on the variables that it involves (its all-zero
        blocks, λ in a process factor, are left out)."""
        blocks, used = [], []
        for block in relation.blocks:
            for part in self.columns(block):
                used.append(bool(np.any(part)))
                if used[-1]:
                    blocks.append(part)
        return SplitRelation(self, LinearRelation.of_blocks(relation.noise, blocks, relation.rhs), tuple(used))


@dataclass(frozen=True)
class SplitRelation:
    """A LinearRelation on the variables ``used`` (in the order of ``StateSplit.keys`` of each state)."""

    split: StateSplit
    relation: LinearRelation
    used: tuple[bool, ...]

    def factor(self, steps: Iterable[int]) -> gtsam.LinearContainerFactor:
        """The native factor between the states of ``steps``."""
        keys = [key for k in steps for key in self.split.keys(k)]
        return self.relation.factor([key for key, used in zip(keys, self.used) if used])
