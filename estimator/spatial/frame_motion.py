"""Motion of a frame S rigidly mounted on a body b of a spatial model, with its q-, q̇- and
q̈-derivatives: what a link IMU reads (sensors.link_gyroscope, sensors.link_accelerometer).

S has the pose (R_m, p_m) in body b's frame. Its body-fixed twist and acceleration are
V_s = Ad_{S⁻¹} V_b, V̇_s = Ad_{S⁻¹} V̇_b (S is fixed on b; Müller 2018 eqs. 66b–c) with the base
accelerating at (0; −g) as in the RNEA (rnea.forward_pass), so that with V_s = (ω; v), V̇_s = (ω̇; v̇)

    ω = the angular velocity in S's axes,   v̇ + ω × v = R_sᵀ (r̈ − g) the specific force at S's origin.

Tangents, for every joint k on the path from the base to b, all in S's axes (X̂ = Ad_{G_k} X with
G_k the pose of body k in S; Ĵ_k = Ad_{G_k} ᵏX_k, V̂_k, Â_{λ(k)} the twist of body k and the
acceleration of its parent, the base's (0; −g)):

    ĉ_k = [V̂_k, Ĵ_k],   ê_k = [Â_{λ(k)}, Ĵ_k] + q̇_k [ĉ_k, Ĵ_k],
    ∂V_s/∂q_k = ĉ_k,   ∂V_s/∂q̇_k = Ĵ_k,
    ∂V̇_s/∂q_k = ê_k + [ĉ_k, V_s − V̂_k],   ∂V̇_s/∂q̇_k = ĉ_k + [Ĵ_k, V_s − V̂_k],   ∂V̇_s/∂q̈_k = Ĵ_k,

estimator.spatial.derivatives' world tangents (Müller eqs. 15–17) carried into S by Ad_{(C_b S)⁻¹},
which commutes with the bracket; 0 for joints off the path. One compiled call, O(n + depth).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from estimator.errors import MbstateError
from estimator.spatial import lie
from estimator.spatial.dynamics import Workspace, _vector, workspace
from estimator.spatial.kinematics import ancestry
from estimator.spatial.model import SpatialModel
from estimator.spatial.ops import G_GRAVITY, G_KIND, G_PARENT, W_A, W_REL, W_V, bracket, set_screw, to_parent
from estimator.spatial.rnea import forward_pass

# frame row: the mount S (R row-major, p) in its body, then V_s and V̇_s after a call, then scratch:
# G (the pose of the current body in S), its parent's, Ĵ, V̂, Â, ĉ, V_s − V̂, a screw
F_MOUNT, F_V, F_A, F_G, F_H, F_J, F_VK, F_AL, F_C, F_D, F_X, F_WIDTH = \
    0, 12, 18, 24, 36, 48, 54, 60, 66, 72, 78, 84
TANGENTS = 5  # ∂V_s/∂q, ∂V_s/∂q̇, ∂V̇_s/∂q, ∂V̇_s/∂q̇, ∂V̇_s/∂q̈


@njit(cache=True, inline="always")
def _to_parent_frame(g: np.ndarray, rel: np.ndarray, out: np.ndarray) -> None:
    """out = G ∘ rel⁻¹: (R_g R_relᵀ, p_g − R_g R_relᵀ p_rel)."""
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = g[3 * r] * rel[3 * c] + g[3 * r + 1] * rel[3 * c + 1] + g[3 * r + 2] * rel[3 * c + 2]
    for r in range(3):
        out[9 + r] = g[9 + r] - (out[3 * r] * rel[9] + out[3 * r + 1] * rel[10] + out[3 * r + 2] * rel[11])


@njit(cache=True, _nrt=False)
def frame_motion_kernel(ws: np.ndarray, path: np.ndarray, row: np.ndarray, q: np.ndarray, qd: np.ndarray,
                        qdd: np.ndarray, out: np.ndarray) -> None:
    """V_s, V̇_s into row[F_V], row[F_A] and the tangents into out (TANGENTS, n, 6), row k the
    column of joint k (module docstring); ws: the workspace rows, path: the bodies from the base to b."""
    forward_pass(ws, q, qd, qdd)
    n = ws.shape[0]
    for t in range(TANGENTS):
        for k in range(n):
            for r in range(6):
                out[t, k, r] = 0.0
    g, h = row[F_G:F_G + 12], row[F_H:F_H + 12]
    m = row[F_MOUNT:F_MOUNT + 12]
    for r in range(3):  # G_b = S⁻¹ = (R_mᵀ, −R_mᵀ p_m)
        for c in range(3):
            g[3 * r + c] = m[3 * c + r]
    for r in range(3):
        g[9 + r] = -(g[3 * r] * m[9] + g[3 * r + 1] * m[10] + g[3 * r + 2] * m[11])
    b = path[path.shape[0] - 1]
    v_s, a_s = row[F_V:F_V + 6], row[F_A:F_A + 6]
    to_parent(g, ws[b, W_V:W_V + 6], v_s)
    to_parent(g, ws[b, W_A:W_A + 6], a_s)
    j, vk, al, c, d, x = (row[F_J:F_J + 6], row[F_VK:F_VK + 6], row[F_AL:F_AL + 6], row[F_C:F_C + 6],
                          row[F_D:F_D + 6], row[F_X:F_X + 6])
    for index in range(path.shape[0] - 1, -1, -1):
        k = path[index]
        wk = ws[k]
        set_screw(int(wk[G_KIND]), wk, x)
        to_parent(g, x, j)
        to_parent(g, wk[W_V:W_V + 6], vk)
        _to_parent_frame(g, wk[W_REL:W_REL + 12], h)
        for r in range(12):
            g[r] = h[r]
        p = int(wk[G_PARENT])
        if p < 0:
            x[0] = x[1] = x[2] = 0.0
            x[3], x[4], x[5] = -wk[G_GRAVITY], -wk[G_GRAVITY + 1], -wk[G_GRAVITY + 2]
            to_parent(g, x, al)
        else:
            to_parent(g, ws[p, W_A:W_A + 6], al)
        for r in range(6):
            c[r] = 0.0
            d[r] = v_s[r] - vk[r]
        bracket(vk, j, 1.0, c)
        dv_q, dv_qd, da_q, da_qd, da_qdd = out[0, k], out[1, k], out[2, k], out[3, k], out[4, k]
        for r in range(6):
            dv_q[r] = c[r]
            dv_qd[r] = da_qdd[r] = j[r]
            da_qd[r] = c[r]
        bracket(al, j, 1.0, da_q)
        bracket(c, j, qd[k], da_q)
        bracket(c, d, 1.0, da_q)
        bracket(j, d, 1.0, da_qd)


class FrameMotion:
    """The motion of one mounted frame S (module docstring), with its own workspace and buffers: one
    per sensor and thread. ``evaluate`` returns views of those buffers, overwritten by the next call."""

    def __init__(self, model: SpatialModel, body: int, rot: np.ndarray, pos: np.ndarray) -> None:
        if body < 0:
            raise MbstateError(f"{model.name}: a frame on the fixed base does not move")
        self.model = model
        self.work: Workspace = workspace(model)
        self.path = np.flatnonzero(ancestry(model)[body]).astype(np.int64)  # parents have lower indices
        self.row = np.zeros(F_WIDTH)
        self.row[F_MOUNT:F_MOUNT + 9], self.row[F_MOUNT + 9:F_MOUNT + 12] = np.asarray(rot).ravel(), pos
        self.tangents = np.zeros((TANGENTS, model.dof, 6))

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(V_s, V̇_s (6,) each, tangents (TANGENTS, n, 6)) at q, q̇, q̈ (n each)."""
        model = self.model
        frame_motion_kernel(self.work.rows, self.path, self.row, _vector(model, "q", q), _vector(model, "qd", qd),
                            _vector(model, "qdd", qdd), self.tangents)
        return self.row[F_V:F_V + 6], self.row[F_A:F_A + 6], self.tangents


def mounted_pose(model: SpatialModel, frame: str, xyz: np.ndarray,
                 rpy: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """(body, R, p): the pose in its body of a frame at ``xyz`` [m], turned by the URDF roll-pitch-yaw
    ``rpy`` [rad] (R = Rz Ry Rx), in the named frame (a link or sidecar frame; KeyError when absent)."""
    named = model.frame(frame)
    rot, pos = lie.compose((named.rot, named.pos), (lie.rotation_rpy(np.asarray(rpy, float)), np.asarray(xyz, float)))
    return named.body, rot, pos
