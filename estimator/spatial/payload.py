"""An unknown payload on one link of a spatial model, as the joint forces it takes, with their analytic
derivatives: a rigid body of inertial parameters θ = (m, h, Θ) in the link's frame (m [kg]; h = m c
[kg·m], c its centre of mass; Θ [kg·m²] its rotational inertia about the link origin: xx yy zz xy xz yz),
added to the body the link rides on (the link's pose (R_l, p_l) in it: a link merged by fixed joints).

Its spatial inertia about the link origin is M_l(θ) = [[Θ, h̃], [−h̃, m 1]] (Müller eq. 40 with h = m d),
in the body's frame M_p = Xᵀ M_l X, X = Ad_{(R_l, p_l)⁻¹} (a body twist in the link's frame), and with the
body's twist V and acceleration V̇ in its own frame (the base accelerating at (0; −g), as in the RNEA:
estimator.spatial.frame_motion) its Newton–Euler wrench on the body, about the body origin, is
(Müller eq. 66c)

    W = M_p V̇ − ad_Vᵀ M_p V            (gravity included: V̇ carries −g),

linear in θ: ∂W/∂θ_i = B_i V̇ − ad_Vᵀ B_i V with B_i = Xᵀ ∂M_l/∂θ_i X. It adds Jᵀ W to the equations of
motion, J (6 × n) the body Jacobian (column k = ∂V/∂q̇_k). Derivatives, in the body's axes (frame_motion's
tangents ∂V, ∂V̇):

    ∂W = M_p ∂V̇ − ad_{∂V}ᵀ M_p V − ad_Vᵀ M_p ∂V,
    ∂(Jᵀ W)/∂x = Jᵀ ∂W/∂x  for x = q̇, q̈, θ,     ∂(Jᵀ W)/∂q = Jᵀ ∂W/∂q + B,
    B_ik = W · [J_i, J_k] for k beyond i on the path to the body, else 0

(J_i moves with q_k for k up to i and W with every q_k on the path, −ad_{J_k}ᵀ W; the two cancel up to i).

Why the ten parameters and not a point mass (m, c): the point mass's wrench is bilinear in (m, c) and c is
not seen at m = 0, the start; linearized near there the solver moves c by the moment's change over a small
m (metres), and those linearizations stay in the window's marginal. In (m, h) alone the point mass's
rotational inertia is (|h|² 1 − h hᵀ)/m, singular at m = 0. In θ the rows are linear; a point mass at c is
θ = (m, m c, m(|c|² 1 − c cᵀ)) (``point_mass``), and the published centre of mass is h/m.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.frame_motion import FrameMotion
from estimator.spatial.model import SpatialModel
from estimator.spatial.tangent import mean_length

STATES = 10  # θ = (m, h_x, h_y, h_z, Θ_xx, Θ_yy, Θ_zz, Θ_xy, Θ_xz, Θ_yz)
_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))  # Θ's six entries in θ[4:]


def link_inertia(theta: np.ndarray) -> np.ndarray:
    """M_l(θ) = [[Θ, h̃], [−h̃, m 1]] (6 × 6), the spatial inertia of θ about the link origin (eq. 40)."""
    out = np.zeros((6, 6))
    for (r, c), value in zip(_ENTRIES, theta[4:]):
        out[r, c] = out[c, r] = value
    out[:3, 3:] = lie.skew(theta[1:4])
    out[3:, :3] = -lie.skew(theta[1:4])
    out[3:, 3:] = theta[0] * np.eye(3)
    return out


def point_mass(mass: float, com: np.ndarray) -> np.ndarray:
    """θ of a point mass ``mass`` [kg] at ``com`` [m]: (m, m c, m(|c|² 1 − c cᵀ))."""
    com = np.asarray(com, float)
    inertia = mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.concatenate(([mass], mass * com, [inertia[r, c] for r, c in _ENTRIES]))


def published(theta: np.ndarray) -> np.ndarray:
    """(m, c) of θ: its mass and centre of mass h/m (0 at m = 0) [kg, m]."""
    return np.concatenate(([theta[0]], theta[1:4] / theta[0] if theta[0] != 0.0 else np.zeros(3)))


def _co_ad(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ad_Xᵀ y for each row X = (ω; v) of ``rows`` (k, 6): (y_t × ω + y_f × v; y_f × ω)."""
    w, v = rows[:, :3], rows[:, 3:]
    return np.hstack((np.cross(y[:3], w) + np.cross(y[3:], v), np.cross(y[3:], w)))


@dataclass(frozen=True)
class PayloadTerms:
    """The payload on link ``link`` of ``model``: its body ``body``, B_i (STATES, 6, 6) the basis of M_p in
    the body's frame, the body's mass [kg] and the model's mean link length [m] (the scales of the auto
    start σ, EstimatorConfig ``payload_mass_sigma``, ``payload_offset_sigma``) and the frame motion of the
    body's origin (one per thread: it owns buffers)."""

    model: SpatialModel = field(repr=False)
    link: str
    body: int
    basis: np.ndarray = field(repr=False)
    body_mass: float
    reach: float
    motion: FrameMotion = field(repr=False)

    def rows(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, theta: np.ndarray,
             jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(Jᵀ W (n,), its derivatives (n, 3n + STATES) over [q, q̇, q̈, θ] or None without ``jac``)."""
        v_b, a_b, tangents = self.motion.evaluate(q, qd, qdd)
        inertia = np.tensordot(theta, self.basis, axes=1)  # M_p
        momentum = inertia @ v_b
        wrench = inertia @ a_b - _co_ad(v_b[None], momentum)[0]
        jacobian_t = tangents[1]  # (n, 6): row k is J's column k
        out = jacobian_t @ wrench
        if not jac:
            return out, None
        n, ad = len(q), lie.ad(v_b)  # (ad_Vᵀ y)ᵀ = yᵀ ad_V for the rows y

        def wrench_tangent(dv: np.ndarray, da: np.ndarray) -> np.ndarray:
            """∂W along rows of twist tangents ``dv`` and acceleration tangents ``da`` (k, 6) → (k, 6)."""
            return da @ inertia.T - _co_ad(dv, momentum) - (dv @ inertia.T) @ ad

        dq = wrench_tangent(tangents[0], tangents[2])
        dqd = wrench_tangent(tangents[1], tangents[3])
        dqdd = tangents[4] @ inertia.T
        dtheta = (self.basis @ a_b - (self.basis @ v_b) @ ad).T  # (6, STATES): B_i V̇ − ad_Vᵀ B_i V
        jw, jv = jacobian_t[:, :3], jacobian_t[:, 3:]  # B_ik = W · [J_i, J_k]
        brackets = (np.cross(jw[:, None, :], jw[None, :, :]) @ wrench[:3]
                    + (np.cross(jw[:, None, :], jv[None, :, :]) - np.cross(jw[None, :, :], jv[:, None, :])) @ wrench[3:])
        result = np.empty((n, 3 * n + STATES))
        result[:, :n] = jacobian_t @ dq.T + np.triu(brackets, 1)
        result[:, n:2 * n] = jacobian_t @ dqd.T
        result[:, 2 * n:3 * n] = jacobian_t @ dqdd.T
        result[:, 3 * n:] = jacobian_t @ dtheta
        return out, result


def payload_terms(model: SpatialModel, link: str) -> PayloadTerms:
    """The payload terms of link ``link``; MbstateError (one line) for a link the model lacks or one on the
    fixed base."""
    try:
        frame = model.frame(link)
    except KeyError:
        raise MbstateError(f"estimator.payload: no link {link!r} in {model.name} (moving links: "
                           f"{', '.join(f.name for f in model.frames if f.body >= 0)[:200]})") from None
    if frame.body < 0:
        raise MbstateError(f"estimator.payload: link {link!r} is on the fixed base of {model.name}: a payload "
                           "there moves nothing")
    to_link = lie.adjoint(lie.inverse((frame.rot, frame.pos)))  # X: a body twist in the link's frame
    basis = np.array([to_link.T @ link_inertia(unit) @ to_link for unit in np.eye(STATES)])
    return PayloadTerms(model, link, frame.body, basis, float(model.mass[frame.body]), mean_length(model),
                        FrameMotion(model, frame.body, np.eye(3), np.zeros(3)))


def with_payload(model: SpatialModel, link: str, theta: np.ndarray) -> SpatialModel:
    """``model`` with the payload θ merged into the body link ``link`` rides on: its inertia gains M_p(θ),
    its mass m. The truth that PayloadTerms' rows model (and are tested against)."""
    terms = payload_terms(model, link)
    inertia, masses = model.inertia.copy(), model.mass.copy()
    inertia[terms.body] += np.tensordot(theta, terms.basis, axes=1)
    masses[terms.body] += theta[0]
    return dataclasses.replace(model, inertia=inertia, mass=masses)
