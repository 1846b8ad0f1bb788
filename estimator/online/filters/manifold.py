"""The filters' state: (q, q̇) on the constraint manifold, seen through independent coordinates z = q[I].

At a point (q, q̇) with Φ(q) = 0, Φq q̇ = 0 and I, S chosen there (estimator.factors.independent_coordinates:
B = [Φq_S; E_I] square and regular), the first-order maps from (δz, δż) to the dependent quantities are
(García de Jalón and Bayo, ch. 5):

    δq = R δz,   δq̇ = V δz + R δż,   R = B⁻¹ [0; I],   V = −B⁻¹ [(Φqq_S·q̇) R; 0],
    δq̈ = (−D ∂a_S/∂q R − D ∂a_S/∂q̇ V + R Z_z) δz + (−D ∂a_S/∂q̇ R + R Z_ż) δż,   D = B⁻¹ [I; 0],

with a = Φq q̈ + s the acceleration-constraint error and z̈ = Z(z, ż) the reduced dynamics
Rᵀ (M q̈ − Q) = 0 (estimator.factors.independent_coordinates.reduced_dynamics_error, e):

    Z_z = −(Rᵀ M R)⁻¹ (∂e/∂q R + ∂e/∂q̇ V),   Z_ż = −(Rᵀ M R)⁻¹ ∂e/∂q̇ R.

The filters' error state is (δz, δż); after a correction, q and q̇ are put back on the manifold by the
position and velocity problems with q[I] and q̇[I] held (estimator.kinematics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.constraints import constraint_derivatives
from estimator.factors.constraint_factors import acceleration_constraint_terms
from estimator.factors.independent_coordinates import (IndependentCoordinates, choose_independent_coordinates,
                                                       reduced_dynamics_error)
from estimator.kinematics import solve_position_problem, solve_velocity_problem
from estimator.model import Mechanism


@dataclass(frozen=True)
class Linearization:
    """The maps of the module docstring at one (q, q̇): q̈ and z̈ of the model and the derivatives of
    q, q̇, q̈ (n x 2 dof each, columns [δz, δż]) and of z̈ (dof x 2 dof)."""

    ic: IndependentCoordinates
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    zdd: np.ndarray
    d_q: np.ndarray
    d_qd: np.ndarray
    d_qdd: np.ndarray
    d_zdd: np.ndarray

    @property
    def dof(self) -> int:
        return len(self.ic.coordinates)

    def blocks(self, variables: tuple[str, ...]) -> list[np.ndarray]:
        """∂(block)/∂(δz, δż) for the sensor blocks ``variables`` (q, v, a; g, the gravity error, is not in
        the filters' state: zero)."""
        return [{"q": self.d_q, "v": self.d_qd, "a": self.d_qdd}[v] if v != "g" else np.zeros((1, 2 * self.dof))
                for v in variables]

    def transition(self, dt: float) -> np.ndarray:
        """F = I + h A + (h A)²/2 of the error dynamics d/dt [δz; δż] = A [δz; δż], A = [[0, I], [Z_z, Z_ż]]."""
        dof = self.dof
        a = np.zeros((2 * dof, 2 * dof))
        a[:dof, dof:] = np.eye(dof)
        a[dof:] = self.d_zdd
        ha = dt * a
        return np.eye(2 * dof) + ha + 0.5 * ha @ ha


def linearize(mech: Mechanism, q: np.ndarray, qd: np.ndarray, ic: IndependentCoordinates | None = None) -> Linearization:
    """The maps of the module docstring at (q, q̇) on the manifold (``ic`` chosen at q when None)."""
    ic = ic or choose_independent_coordinates(mech, q)
    rows, n, dof = ic.rows, mech.n, len(ic.coordinates)
    size = len(rows)
    _, phi_q, phi_qq = constraint_derivatives(mech, q, True)
    phi_q, phi_qq = phi_q[rows], phi_qq[rows]
    inverse = np.linalg.inv(np.vstack((phi_q, ic.picker)))
    basis, dependent = inverse[:, size:], inverse[:, :size]
    velocity = -dependent @ (phi_qq @ qd) @ basis  # V
    mass = mech.arrays.mass
    reduced_mass = basis.T @ mass @ basis
    zdd = np.linalg.solve(reduced_mass, -reduced_dynamics_error(ic, q, qd, np.zeros(dof), jac=False)[0])
    _, (e_q, e_qd, _) = reduced_dynamics_error(ic, q, qd, zdd)
    d_zdd = -np.linalg.solve(reduced_mass, np.hstack((e_q @ basis + e_qd @ velocity, e_qd @ basis)))
    qdd = inverse @ np.concatenate((-(phi_qq @ qd) @ qd, zdd))
    _, (acc_q, acc_qd, _) = acceleration_constraint_terms(mech, q, qd, qdd, phi_q, phi_qq)
    d_q = np.hstack((basis, np.zeros((n, dof))))
    d_qd = np.hstack((velocity, basis))
    d_qdd = basis @ d_zdd - dependent @ (acc_q @ d_q + acc_qd @ d_qd)
    return Linearization(ic, q, qd, qdd, zdd, d_q, d_qd, d_qdd, d_zdd)


def corrected(mech: Mechanism, state: Linearization, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) after the correction ``delta`` = [δz; δż]: q[I] = z + δz held in the position problem
    (from q, on its branch), then q̇[I] = ż + δż held in the velocity problem. Raises AssemblyError
    when the corrected z is out of the mechanism's reach."""
    indices, dof = state.ic.coordinates, state.dof
    guess = state.q.copy()
    guess[indices] += delta[:dof]
    q = solve_position_problem(mech, guess, tuple(int(i) for i in indices))
    qd = solve_velocity_problem(mech, q, state.qd[indices] + delta[dof:], tuple(int(i) for i in indices))
    return q, qd


def change_of_coordinates(state: Linearization, chosen: IndependentCoordinates) -> np.ndarray:
    """T with [δz'; δż'] = T [δz; δż] for the coordinates ``chosen`` (z' = q[I']), from δq and δq̇ of the
    module docstring: the covariance of the error in z' is T P Tᵀ."""
    picker = chosen.picker
    return np.vstack((picker @ state.d_q, picker @ state.d_qd))
