"""Linear error functions as native GTSAM factors: no Python callback when GTSAM linearizes.

A relation e = Σ_i A_i x_i − b (an integrator, estimator.factors.multistep; a prior) is read off its
numpy error function once, at x = 0 (b = −e(0), A_i = ∂e/∂x_i). Each factor is a
``gtsam.JacobianFactor`` inside a ``gtsam.LinearContainerFactor`` whose linearization point is
x = 0, so GTSAM linearizes it at any x in C++: A Δx − (b − Σ A_i x_i).

``linearized_factor`` is the same for a nonlinear error function linearized once (the online
estimator's step factors when it never relinearizes).

Built once per step by the online estimator: GTSAM's JacobianFactor constructors of one to three
keys build it faster than a GaussianConditional does, so ``factor`` uses them when it can.
"""

from __future__ import annotations

from collections.abc import Sequence

import gtsam
import numpy as np

from estimator.factors.adapter import ErrorFunction


class LinearRelation:
    """The matrices of a linear error function of vector variables of ``sizes``, with its noise model."""

    def __init__(self, noise: gtsam.noiseModel.Diagonal, sizes: Sequence[int], fn: ErrorFunction) -> None:
        error, jacobians = fn(*[np.zeros(size) for size in sizes], jac=True)
        self._set(noise, jacobians, -np.asarray(error, float))

    def _set(self, noise: gtsam.noiseModel.Diagonal, blocks: Sequence[np.ndarray], rhs: np.ndarray) -> None:
        self.noise, self.rhs = noise, rhs
        self.blocks = [np.array(block, float) for block in blocks]
        self.sizes = tuple(block.shape[1] for block in self.blocks)
        self._zeros = [np.zeros(size) for size in self.sizes]

    @classmethod
    def of_blocks(cls, noise: gtsam.noiseModel.Diagonal, blocks: Sequence[np.ndarray],
                  rhs: np.ndarray) -> LinearRelation:
        """The relation Σ_i A_i x_i − b with A_i = ``blocks`` and b = ``rhs``."""
        relation = cls.__new__(cls)
        relation._set(noise, blocks, np.asarray(rhs, float))
        return relation

    def jacobian(self, keys: Sequence[int]) -> gtsam.JacobianFactor:
        """The linear factor A x − b on the variables ``keys``, for a Gaussian factor graph."""
        keys = [int(key) for key in keys]
        if len(keys) <= 3:
            return gtsam.JacobianFactor(*[v for pair in zip(keys, self.blocks) for v in pair], self.rhs, self.noise)
        # a GaussianConditional without frontal variables is a plain Jacobian factor over any number of keys
        return gtsam.JacobianFactor(gtsam.GaussianConditional(list(zip(keys, self.blocks)), 0, self.rhs, self.noise))

    def factor(self, keys: Sequence[int]) -> gtsam.LinearContainerFactor:
        """The native factor on the variables ``keys``."""
        keys = [int(key) for key in keys]
        linear = self.jacobian(keys)
        origin = gtsam.Values()
        for key, zero in zip(keys, self._zeros):
            origin.insert(key, zero)
        return gtsam.LinearContainerFactor(linear, origin)


def linearized_factor(noise: gtsam.noiseModel.Base, keys: Sequence[int], points: Sequence[np.ndarray],
                      error: np.ndarray, blocks: Sequence[np.ndarray]) -> gtsam.LinearContainerFactor:
    """e(x) ≈ e0 + Σ_i J_i (x_i − x0_i) on vector variables ``keys``, linearized once at ``points`` (x0_i):
    the native factor of a nonlinear error function that is never relinearized (e0 = ``error``,
    J_i = ``blocks``)."""
    point = gtsam.Values()
    for key, x0 in zip(keys, points):
        point.insert(int(key), x0)
    pairs = [v for key, block in zip(keys, blocks) for v in (int(key), block)]
    return gtsam.LinearContainerFactor(gtsam.JacobianFactor(*pairs, -error, noise), point)


def native_linear_factor(noise: gtsam.noiseModel.Diagonal, keys: Sequence[int], sizes: Sequence[int],
                         fn: ErrorFunction) -> gtsam.LinearContainerFactor:
    """One native factor of the linear error function ``fn`` (build a LinearRelation once to make many)."""
    return LinearRelation(noise, sizes, fn).factor(keys)
