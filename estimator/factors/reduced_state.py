"""A step's state as one GTSAM variable of its shared columns; the rest eliminated inside the step.

The factors between steps (integrators on z = q[I], the force model's rows, random walks of g and
b: estimator.factors.estimation_state) touch only s = x[shared] = [z; ż; z̈; F; g; Ḟ; b]. The
other columns of the stacked state, d = [q, q̇, q̈ off I; λ], enter their own step's factor alone
(the constraint rows at the three levels and the equations of motion determine them from s), so
they are eliminated there before GTSAM sees the factor, a local Schur complement by QR. With the
step's whitened rows linearized at x0, e ≈ e0 + J_d δd + J_s δs and J_d = [Q1 Q2] [R; 0]:

    δd = −R⁻¹ Q1ᵀ (e0 + J_s δs)      the conditional of d given s
    e_s = Q2ᵀ (e0 + J_s δs)          the rows left on s (the step's GTSAM factor)

exact for the linearized rows: the least-squares solution over d for every s. GTSAM then carries
X(k) = s_k, 3·dof + |F| + |g| + |Ḟ| + |b| wide instead of 3n + |F| + |g| + |Ḟ| + |b|, and the
cost of its update grows with the square of that width; the whole x_k is read back through the
step's *lift* x(s) = x0' + T (s − s0) (x0' the linearization point with the conditional's
correction at s0, T the identity on the shared columns and −R⁻¹ Q1ᵀ J_s on d).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import gtsam
import numpy as np
from scipy.linalg import lapack

from estimator.errors import MbstateError
from estimator.factors.adapter import ErrorFunction
from estimator.factors.estimation_state import EstimationLayout
from estimator.factors.keys import X
from estimator.factors.native import LinearRelation

CONDITIONING = 1e-12  # smallest |R_ii| / max |R_jj| of a conditional that still determines d


class Unresolved(MbstateError):
    """A step's rows do not determine its dependent columns (the independent coordinates lost rank)."""


@dataclass(frozen=True)
class Lift:
    """x(s) = x0 + T (s − x0[shared]) of one step (module docstring), with its conditional: R, and Q
    as LAPACK's Householder reflectors (``reflectors``, ``tau``; None without local columns)."""

    x0: np.ndarray
    basis: np.ndarray  # T
    triangle: np.ndarray  # R of d given s (whitened units), in its upper triangle
    shared: np.ndarray
    local: np.ndarray
    reflectors: np.ndarray | None = None
    tau: np.ndarray | None = None

    def __call__(self, s: np.ndarray) -> np.ndarray:
        return self.x0 + self.basis @ (s - self.x0[self.shared])

    def remaining(self, residual: np.ndarray) -> np.ndarray:
        """Q2ᵀ r of a change r of the step's first rows (the rest unchanged): the part that reaches
        the rows left on s; Q1ᵀ r only moves d given s."""
        if self.reflectors is None:
            return residual
        full = np.zeros((self.reflectors.shape[0], 1))
        full[:len(residual), 0] = residual
        rotated, _, _ = lapack.dormqr("L", "T", self.reflectors, self.tau, full, lwork=64)
        return rotated[len(self.local):, 0]

    def variances(self, covariance: np.ndarray) -> np.ndarray:
        """diag Cov x for Cov s = ``covariance``: T Cov Tᵀ, plus R⁻¹ R⁻ᵀ (d given s) on the local columns."""
        variances = np.einsum("ij,jk,ik->i", self.basis, covariance, self.basis)
        if len(self.local):
            inverse, _ = lapack.dtrtrs(self.triangle, np.eye(len(self.local)))
            variances[self.local] += np.sum(inverse ** 2, axis=1)
        return variances


@dataclass(frozen=True)
class ReducedState:
    """The step variables of an EstimationLayout: X(k) = s_k, and the elimination of d_k."""

    layout: EstimationLayout

    @cached_property
    def _identity(self) -> np.ndarray:
        """T's shared rows (the identity), its local rows 0: copied for each step."""
        shared = self.layout.shared
        basis = np.zeros((self.layout.size, len(shared)))
        basis[shared] = np.eye(len(shared))
        return basis

    @cached_property
    def _columns(self) -> np.ndarray:
        """[d; s] as one index array: the columns of J in the order of the QR's input."""
        return np.concatenate((self.layout.local, self.layout.shared))

    def reduce(self, x0: np.ndarray, error: np.ndarray,
               jacobian: np.ndarray) -> tuple[np.ndarray, np.ndarray, Lift]:
        """(e_s, J_s, lift) of whitened rows ``error`` + ``jacobian`` δx linearized at ``x0`` (module
        docstring): one Householder QR of J_d (LAPACK, Q never formed), Qᵀ applied to [J_s e]."""
        shared, local = self.layout.shared, self.layout.local
        basis = self._identity.copy()
        width = len(local)
        if not width:
            return error, jacobian[:, shared], Lift(x0, basis, np.zeros((0, 0)), shared, local)
        if len(error) < width:
            raise Unresolved(f"{len(error)} rows cannot determine {width} dependent columns")
        ordered = np.empty((len(error), len(x0) + 1), order="F")  # [J_d J_s e]
        ordered[:, :-1] = jacobian[:, self._columns]
        ordered[:, -1] = error
        factored, tau, _, _ = lapack.dgeqrf(ordered[:, :width], overwrite_a=True)
        rotated, _, _ = lapack.dormqr("L", "T", factored, tau, ordered[:, width:], lwork=64 * (len(shared) + 1),
                                      overwrite_c=True)
        triangle = factored[:width]  # R in its upper triangle (LAPACK reads no more of it)
        diagonal = np.abs(triangle.diagonal())
        if not diagonal.min() > CONDITIONING * diagonal.max():
            raise Unresolved("the step's rows no longer determine its dependent columns "
                             "(the independent coordinates are singular here)")
        solved, _ = lapack.dtrtrs(triangle, rotated[:width])  # R⁻¹ Q1ᵀ [J_s e]
        basis[local] = -solved[:, :-1]
        point = x0.copy()
        point[local] -= solved[:, -1]
        return rotated[width:, -1], rotated[width:, :-1], Lift(point, basis, triangle, shared, local, factored, tau)

    def eliminating(self, fn: ErrorFunction, lifts: MutableMapping[int, Lift], k: int,
                    known: tuple[np.ndarray, np.ndarray, np.ndarray]) -> ErrorFunction:
        """``fn(x, jac)`` (whitened rows of step k's state) as an error function of s_k, relinearized at
        each new s: x = lifts[k](s), d eliminated there, and lifts[k] replaced by that linearization's.
        ``known`` = (s0, e_s, J_s): the reduction at the factor's first linearization point, returned
        there as it is."""
        last = list(known)

        def on_shared(s: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
            if not np.array_equal(s, last[0]):
                x = lifts[k](s)
                error, [jacobian] = fn(x, jac=True)
                reduced, block, lifts[k] = self.reduce(x, error, jacobian)
                last[:] = s.copy(), reduced, block
            return last[1], ([last[2]] if jac else None)

        return on_shared

    def through(self, fn: ErrorFunction, lift: Lift) -> ErrorFunction:
        """``fn(x, jac)`` as an error function of s along ``lift`` (rows that do not determine d: late
        readings)."""

        def on_shared(s: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
            error, jacobians = fn(lift(s), jac=jac)
            return error, ([jacobians[0] @ lift.basis] if jac else None)

        return on_shared

    def relation(self, relation: LinearRelation) -> StepRelation:
        """A linear relation between stacked states as one between their s (it must not touch d)."""
        return step_relation(relation, [self.layout] * len(relation.blocks))


def step_relation(relation: LinearRelation, layouts: Sequence[EstimationLayout]) -> StepRelation:
    """A linear relation between stacked states as one between their s, each state's s that of its own
    layout in ``layouts`` (the independent coordinates may differ from step to step,
    estimator.online.partitions); it must not touch a state's d."""
    if any(np.any(block[:, layout.local]) for block, layout in zip(relation.blocks, layouts)):
        raise ValueError("a relation between steps touches a dependent column")
    blocks = [block[:, layout.shared] for block, layout in zip(relation.blocks, layouts)]
    return StepRelation(LinearRelation.of_blocks(relation.noise, blocks, relation.rhs))


@dataclass(frozen=True)
class StepRelation:
    """A LinearRelation on the s of consecutive steps."""

    relation: LinearRelation

    def factor(self, steps: Iterable[int]) -> gtsam.LinearContainerFactor:
        """The native factor between the states of ``steps``."""
        return self.relation.factor([X(k) for k in steps])
