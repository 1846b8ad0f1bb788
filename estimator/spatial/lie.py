"""SE(3) and se(3) in the twist convention X = (ω; v) (Müller 2018, App. B; Lynch and Park ch. 3).

Configurations are pairs (R, p); 6×6 operators act on twists, their transposes on wrenches (t; f).
"""

from __future__ import annotations

import numpy as np


def skew(w: np.ndarray) -> np.ndarray:
    """w̃, the 3×3 matrix with w̃ x = w × x."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def rotation_rpy(rpy: np.ndarray) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def exp_so3(w: np.ndarray) -> np.ndarray:
    """Rodrigues: exp(w̃) = I + sin θ ŵ + (1 − cos θ) ŵ², θ = |w|."""
    theta = float(np.linalg.norm(w))
    if theta < 1e-12:
        return np.eye(3) + skew(w)
    k = skew(w / theta)
    return np.eye(3) + np.sin(theta) * k + (1.0 - np.cos(theta)) * k @ k


def exp_se3(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """exp(X̂) for X = (ω; v): (exp ω̃, (I θ + (1 − cos θ) k̃ + (θ − sin θ) k̃²) v / θ), k = ω/θ
    (Lynch and Park eq. 3.88); a pure translation v when ω = 0."""
    w, v = x[:3], x[3:]
    theta = float(np.linalg.norm(w))
    if theta < 1e-12:
        return np.eye(3), v.astype(float).copy()
    k = skew(w / theta)
    g = np.eye(3) * theta + (1.0 - np.cos(theta)) * k + (theta - np.sin(theta)) * k @ k
    return exp_so3(w), g @ (v / theta)


def compose(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The product a·b of two configurations."""
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def inverse(c: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """C⁻¹ = (Rᵀ, −Rᵀ p)."""
    return c[0].T, -c[0].T @ c[1]


def adjoint(c: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Ad_C = [[R, 0], [p̃ R, R]] (Müller eq. 96)."""
    r, p = c
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = r
    out[3:, :3] = skew(p) @ r
    return out


def ad(x: np.ndarray) -> np.ndarray:
    """ad_X = [[ω̃, 0], [ṽ, ω̃]], so that ad_X Y = [X, Y] (Müller eq. 113)."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = skew(x[:3])
    out[3:, :3] = skew(x[3:])
    return out


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """Mᵇ = [[Θ_c − m d̃², m d̃], [−m d̃, m I]] about the frame origin, the centre of mass at d and
    Θ_c the rotational inertia about it in the frame's axes (Müller eq. 40)."""
    d = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com - mass * d @ d
    out[:3, 3:] = mass * d
    out[3:, :3] = -mass * d
    out[3:, 3:] = mass * np.eye(3)
    return out
