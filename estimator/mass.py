"""Constant mass matrix and gravity forces of planar bodies in natural coordinates.

A point with body-frame coordinates (ξ, η) lies at r = r0 + A (r1 − r0), A = (ξ I + η J) / L, with
r0, r1 the body's first two points, L their distance and J the 90° rotation. Hence r = C [r0; r1]
with C = [I − A, A], and (García de Jalón and Bayo, ch. 3)

    M_e = ∫ Cᵀ C dm:  M00 = (m − 2 m cx / L + I0 / L²) I,  M01 = (m / L)(cx I + cy J) − (I0 / L²) I,
                      M11 = (I0 / L²) I,  M10 = M01ᵀ,
    Q_e = ∫ Cᵀ g dm:  Q1 = (m / L)(cx I + cy Jᵀ) g,  Q0 = m g − Q1,

where (cx, cy) is the centre of gravity and I0 the inertia about the first point. The element
matrices are scattered through z indices, so fixed points and any point order need no special case.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from estimator.model import Body, Mechanism

J = np.array([[0.0, -1.0], [1.0, 0.0]])


def body_mass_matrix(body: Body) -> np.ndarray:
    """The 4x4 element mass matrix over [x0, y0, x1, y1] of the body's first two points."""
    m, (cx, cy), L, inertia = body.mass, body.cog, body.length, body.inertia
    m11 = inertia / L**2 * np.eye(2)
    m01 = m / L * (cx * np.eye(2) + cy * J) - m11
    m00 = (m - 2.0 * m * cx / L) * np.eye(2) + m11
    return np.block([[m00, m01], [m01.T, m11]])


def body_gravity_force(body: Body, gravity: np.ndarray) -> np.ndarray:
    """The generalized gravity force over [x0, y0, x1, y1] of the body's first two points [N]."""
    m, (cx, cy), L = body.mass, body.cog, body.length
    q1 = m / L * (cx * gravity + cy * (J.T @ gravity))
    return np.concatenate((m * gravity - q1, q1))


def body_z_indices(body: Body, point_z: np.ndarray) -> np.ndarray:
    """z indices of [x0, y0, x1, y1] of the body's first two points."""
    return point_z[list(body.points[:2])].ravel()


def assemble_mass_matrix(bodies: tuple[Body, ...], point_z: np.ndarray, n: int) -> np.ndarray:
    """The constant n x n mass matrix: element matrices scattered on the moving coordinates."""
    size = int(point_z.max()) + 1
    mass = np.zeros((size, size))
    for body in bodies:
        idx = body_z_indices(body, point_z)
        mass[np.ix_(idx, idx)] += body_mass_matrix(body)
    return np.ascontiguousarray(mass[:n, :n])


def assemble_gravity_force(bodies: tuple[Body, ...], point_z: np.ndarray, gravity: np.ndarray, size: int) -> np.ndarray:
    """Gravity generalized force over all of z (constant entries included, for the potential)."""
    force = np.zeros(size)
    for body in bodies:
        np.add.at(force, body_z_indices(body, point_z), body_gravity_force(body, gravity))
    return force


def with_gravity(mech: Mechanism, gravity: np.ndarray) -> Mechanism:
    """The same mechanism under another gravity vector [m/s²] (e.g. ``--gravity 0,-9.81``)."""
    gravity = np.asarray(gravity, dtype=float)
    size = mech.n + len(mech.arrays.constants)
    gravity_z = assemble_gravity_force(mech.bodies, mech.point_z, gravity, size)
    q_force = mech.arrays.q_force - mech.gravity_z[:mech.n] + gravity_z[:mech.n]
    q_force.setflags(write=False)
    return dataclasses.replace(mech, gravity=gravity, gravity_z=gravity_z,
                               arrays=mech.arrays._replace(q_force=q_force))


@dataclasses.dataclass(frozen=True)
class BodyMassTerms:
    """Each body with mass's share of M and of the gravity force on the moving coordinates:
    ``matrices`` M_b (nm x n x n) and ``gravity`` Q_g,b (n x nm), M = Σ_b M_b and Q_g = Σ_b Q_g,b
    (module docstring); ``names`` the bodies'; ``distribution`` P = I − 1 wᵀ (nm x nm), w_b = m_b / Σ m:
    μ = P ν keeps Σ_b m_b μ_b = 0 for any ν, relative mass errors that move mass between the bodies
    and leave the total as in the model."""

    names: tuple[str, ...]
    matrices: np.ndarray
    gravity: np.ndarray
    distribution: np.ndarray

    @functools.cached_property
    def state_matrices(self) -> np.ndarray:
        """Σ_b P_bk M_b for each entry k of ν (μ = P ν), stacked: nm·n x n (one product with q̈ gives them all)."""
        n = self.matrices.shape[1]
        return np.einsum("bk,bij->kij", self.distribution, self.matrices).reshape(-1, n)

    @functools.cached_property
    def state_gravity(self) -> np.ndarray:
        """Q_g,b P: the gravity forces of the entries of ν (n x nm)."""
        return self.gravity @ self.distribution

    def columns(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, nu: np.ndarray, scale: float = 1.0
                ) -> tuple[np.ndarray, np.ndarray]:
        """(∂d/∂ν = Σ_b P_bk (M_b q̈ − scale Q_g,b) (n x nm), ∂(Σ_b μ_b (M_b q̈ − scale Q_g,b))/∂[q, q̇, q̈]
        (3 x n x n): Σ_b μ_b M_b on q̈, 0 on q and q̇), ``scale`` = 1 + g; the same members as the spatial
        estimator.spatial.link_masses.LinkMassTerms."""
        n = len(qdd)
        tangent = np.zeros((3, n, n))
        tangent[2] = (nu @ self.state_matrices.reshape(len(nu), n * n)).reshape(n, n)
        return (self.state_matrices @ qdd).reshape(-1, n).T - scale * self.state_gravity, tangent


def body_mass_terms(mech: Mechanism) -> BodyMassTerms:
    """The BodyMassTerms of ``mech``'s bodies with mass (none: empty terms), under its gravity."""
    bodies = [body for body in mech.bodies if body.mass > 0.0]
    size = mech.n + len(mech.arrays.constants)
    n = mech.n
    matrices = np.array([assemble_mass_matrix((body,), mech.point_z, n) for body in bodies]).reshape(-1, n, n)
    gravity = np.array([assemble_gravity_force((body,), mech.point_z, mech.gravity, size)[:n]
                        for body in bodies]).reshape(-1, n).T
    fractions = np.array([body.mass for body in bodies]) / sum(body.mass for body in bodies)
    distribution = np.eye(len(bodies)) - np.outer(np.ones(len(bodies)), fractions)
    return BodyMassTerms(tuple(body.name for body in bodies), matrices, gravity, distribution)
