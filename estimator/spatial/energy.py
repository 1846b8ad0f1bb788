"""Kinetic and potential energy of a spatial model [J]: T = ½ q̇ᵀ M(q) q̇ (Müller eq. 81) and
U = −Σᵢ mᵢ gᵀ cᵢ(q), cᵢ body i's centre of mass in the world."""

from __future__ import annotations

import numpy as np

from estimator.spatial.dynamics import Workspace, mass_matrix
from estimator.spatial.kinematics import body_kinematics
from estimator.spatial.model import SpatialModel


def centres_of_mass(model: SpatialModel) -> np.ndarray:
    """(n, 3) each body's centre of mass in its frame, d = (m d̃)ᵛ / m from Mᵇ's upper right block
    (eq. 40); 0 for a massless body."""
    first = np.stack((model.inertia[:, 2, 4], model.inertia[:, 0, 5], model.inertia[:, 1, 3]), axis=1)
    return np.divide(first, model.mass[:, None], out=np.zeros_like(first), where=model.mass[:, None] > 0)


def kinetic_energy(model: SpatialModel, q: np.ndarray, qd: np.ndarray, work: Workspace | None = None) -> float:
    return 0.5 * float(qd @ mass_matrix(model, q, work) @ qd)


def potential_energy(model: SpatialModel, q: np.ndarray) -> float:
    zero = np.zeros(model.dof)
    body = body_kinematics(model, q, zero, zero)
    com = body.pos + np.einsum("nij,nj->ni", body.rot, centres_of_mass(model))
    return -float(model.mass @ (com @ model.gravity))
