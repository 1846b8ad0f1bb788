"""The link-mass errors of a spatial model: each link b with mass has its whole spatial inertia (mass,
first moment, rotational inertia) (1 + μ_b) times the model's. The RNEA is linear in the inertias, so

    Q(q, q̇, q̈; μ) = Q(q, q̇, q̈) + Σ_b μ_b Q_b(q, q̇, q̈),

Q_b the inverse dynamics of the model with only link b's inertia (gravity included; no friction, no
armature, no applied wrench: those do not scale with the link), whose analytic q-, q̇-, q̈-derivatives are
those of that model's RNEA (estimator.spatial.derivatives). The joint wrench W_j of a joint torque sensor
is linear in them the same way: its μ part about joint j's axis is row j of Σ_b μ_b Q_b (eq. 67b).

μ = P ν: ``distribution`` P = I − 1 wᵀ (w_b = m_b / Σ m) keeps the model's total mass, as the planar
design (estimator.mass.BodyMassTerms), when nothing reads a load; P = I frees it when a joint torque or
force-torque sensor reads the joint wrenches, which see the common factor (``with_total``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from estimator.spatial.dynamics import Workspace, inverse_dynamics, rnea_derivatives, workspace
from estimator.spatial.model import SpatialModel


def link_model(model: SpatialModel, link: int) -> SpatialModel:
    """``model`` with only link ``link``'s inertia, no joint friction, damping nor armature."""
    inertia = np.zeros_like(model.inertia)
    inertia[link] = model.inertia[link]
    mass = np.zeros_like(model.mass)
    mass[link] = model.mass[link]
    zero = np.zeros(model.dof)
    return dataclasses.replace(model, inertia=inertia, mass=mass, damping=zero, friction=zero, armature=zero)


@dataclass(frozen=True, eq=False)
class LinkMassTerms:
    """The link-mass errors of ``model`` (module docstring): ``names`` the links with mass, ``links`` their
    bodies, ``distribution`` P. Evaluations are cached on the last (q, q̇, q̈): the step rows and the
    joint torque sensors of one step read the same (one workspace per link: compared by identity)."""

    model: SpatialModel
    names: tuple[str, ...]
    links: np.ndarray
    distribution: np.ndarray
    parts: tuple[tuple[SpatialModel, Workspace], ...] = field(init=False, repr=False)
    _cache: list = field(init=False, repr=False)

    def __post_init__(self) -> None:
        parts = []
        for link in self.links:
            part = link_model(self.model, int(link))
            parts.append((part, workspace(part)))
        object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "_cache", [None, None])

    def with_total(self, free: bool) -> LinkMassTerms:
        """The same links with the total mass free (P = I) or kept (P = I − 1 wᵀ)."""
        return link_mass_terms(self.model, free)

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Q_b (n, nm): column b link b's inverse dynamics, ∂Q_b/∂[q, q̇, q̈] (nm, 3, n, n))."""
        key = np.concatenate((q, qd, qdd))
        if self._cache[0] is not None and np.array_equal(self._cache[0], key):
            return self._cache[1]
        n = self.model.dof
        values, tangents = np.empty((n, len(self.links))), np.empty((len(self.links), 3, n, n))
        for b, (part, work) in enumerate(self.parts):
            tangents[b] = rnea_derivatives(part, q, qd, qdd, work=work)
            values[:, b] = inverse_dynamics(part, q, qd, qdd, work=work)
        self._cache[:] = key, (values, tangents)
        return values, tangents

    def columns(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, nu: np.ndarray, scale: float = 1.0
                ) -> tuple[np.ndarray, np.ndarray]:
        """(∂d/∂ν = Q_b P (n, nm), ∂(Σ_b μ_b Q_b)/∂[q, q̇, q̈] (3, n, n)) at μ = P ν (``scale``: the
        planar gravity error's; a URDF model carries none)."""
        values, tangents = self.evaluate(q, qd, qdd)
        return values @ self.distribution, np.einsum("b,bkij->kij", self.distribution @ nu, tangents)


def link_mass_terms(model: SpatialModel, free_total: bool = False) -> LinkMassTerms:
    """The LinkMassTerms of ``model``'s links with mass; ``free_total``: P = I, else the total kept."""
    links = np.flatnonzero(np.asarray(model.mass) > 0.0)
    masses = np.asarray(model.mass)[links]
    distribution = (np.eye(len(links)) if free_total
                    else np.eye(len(links)) - np.outer(np.ones(len(links)), masses / masses.sum()))
    return LinkMassTerms(model, tuple(model.link_names[i] for i in links), links, distribution)
