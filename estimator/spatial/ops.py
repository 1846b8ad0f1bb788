"""Numba kernels' small operations on packed rows: joint transforms, Ad, ad and inertia products.

A body row of the packed model (``pack``) holds Bᵢ (R row-major, p), the unit axis, the joint's
damping, Coulomb friction and armature, the 6×6 inertia Mᵇ row-major, the parent's index and the
joint's kind, and gravity; a workspace row (estimator.spatial.dynamics.Workspace) is that model row
followed by the relative configuration C_{λ(i),i}(qᵢ) and the recursions' twists, accelerations and
wrenches (W_*; the derivatives' world-frame terms follow, derivatives.D_*), so that a kernel takes
one array for the model and its work. Every function writes into arrays it is given: nothing
allocates.

The kernels built on these (rnea, aba, crba, derivatives) are compiled with numba's underscored
option ``_nrt=False``, without its runtime: they allocate nothing, so they need no reference counts,
and a slice such as ``row[W_V:W_V + 6]`` is then a plain view, where numba would otherwise count a
reference to the array at every slice (an atomic increment and decrement that its pruning pass
leaves in these branching loops: about half a kernel's time; docs/spatial.md, "Speed"). An
allocation inside such a kernel fails to compile.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# packed model row; G_RIGID: the rigid body's 10 parameters (m, h = m d, Θ about the origin: xx yy zz xy xz yz);
# G_PARENT: λ(i) (−1: the base) and G_KIND: REVOLUTE 0 or PRISMATIC 1, as floats (exact); G_GRAVITY: g [m/s²]
G_ROT, G_POS, G_AXIS, G_DAMP, G_FRIC, G_ARM, G_INERTIA, G_RIGID, G_PARENT, G_KIND, G_GRAVITY, G_WIDTH = \
    0, 9, 12, 15, 16, 17, 18, 54, 64, 65, 66, 69
# workspace row after the model's: relative configuration, twist, acceleration, wrench, ABA's terms, scratch,
# the joint force Q; W_WIDTH: where the row's next part begins
W_REL, W_V, W_A, W_F, W_IA, W_PA, W_U, W_D, W_UU, W_C, W_T1, W_T2, W_M6, W_Q, W_WIDTH = \
    (G_WIDTH + offset for offset in (0, 12, 18, 24, 30, 66, 72, 78, 79, 80, 86, 92, 98, 152, 153))


def pack(parent: np.ndarray, kind: np.ndarray, placement: np.ndarray, axis: np.ndarray, damping: np.ndarray,
         friction: np.ndarray, armature: np.ndarray, inertia: np.ndarray, gravity: np.ndarray) -> np.ndarray:
    """(n, G_WIDTH): the model as the kernels read it, one row per body."""
    n = len(parent)
    geo = np.zeros((n, G_WIDTH))
    geo[:, G_PARENT], geo[:, G_KIND] = parent, kind
    geo[:, G_GRAVITY:G_GRAVITY + 3] = gravity
    geo[:, G_ROT:G_AXIS] = placement
    geo[:, G_AXIS:G_DAMP] = axis
    geo[:, G_DAMP], geo[:, G_FRIC], geo[:, G_ARM] = damping, friction, armature
    geo[:, G_INERTIA:G_RIGID] = inertia.reshape(n, 36)
    geo[:, G_RIGID] = inertia[:, 3, 3]
    geo[:, G_RIGID + 1:G_RIGID + 4] = np.stack((inertia[:, 2, 4], inertia[:, 0, 5], inertia[:, 1, 3]), axis=1)
    geo[:, G_RIGID + 4:G_PARENT] = inertia[:, [0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]]
    return geo


@njit(cache=True, inline="always")
def joint_transform(kind: int, g: np.ndarray, q: float, rel: np.ndarray) -> None:
    """C_{λ,i}(q) = Bᵢ exp(ⁱXᵢ q) into rel (R row-major, p): a rotation about the axis by q
    (Rodrigues) or a translation q along it."""
    x, y, z = g[G_AXIS], g[G_AXIS + 1], g[G_AXIS + 2]
    if kind == 0:
        c, s = math.cos(q), math.sin(q)
        t = 1.0 - c
        j00, j01, j02 = t * x * x + c, t * x * y - s * z, t * x * z + s * y
        j10, j11, j12 = t * x * y + s * z, t * y * y + c, t * y * z - s * x
        j20, j21, j22 = t * x * z - s * y, t * y * z + s * x, t * z * z + c
        for r in range(3):
            a, b, d = g[3 * r], g[3 * r + 1], g[3 * r + 2]
            rel[3 * r] = a * j00 + b * j10 + d * j20
            rel[3 * r + 1] = a * j01 + b * j11 + d * j21
            rel[3 * r + 2] = a * j02 + b * j12 + d * j22
            rel[9 + r] = g[G_POS + r]
    else:
        for r in range(3):
            rel[3 * r], rel[3 * r + 1], rel[3 * r + 2] = g[3 * r], g[3 * r + 1], g[3 * r + 2]
            rel[9 + r] = g[G_POS + r] + q * (g[3 * r] * x + g[3 * r + 1] * y + g[3 * r + 2] * z)


@njit(cache=True, inline="always")
def to_child(rel: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """out = Ad_{C⁻¹} Y for C = rel: a parent-frame twist in the child frame, ω' = Rᵀω,
    v' = Rᵀ(v + ω × p)."""
    w0, w1, w2 = y[0], y[1], y[2]
    u0 = y[3] + w1 * rel[11] - w2 * rel[10]
    u1 = y[4] + w2 * rel[9] - w0 * rel[11]
    u2 = y[5] + w0 * rel[10] - w1 * rel[9]
    for c in range(3):
        out[c] = rel[c] * w0 + rel[3 + c] * w1 + rel[6 + c] * w2
        out[3 + c] = rel[c] * u0 + rel[3 + c] * u1 + rel[6 + c] * u2


@njit(cache=True, inline="always")
def add_to_parent(rel: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """out += Adᵀ_{C⁻¹} W for C = rel: a child-frame wrench in the parent frame, f' = R f,
    t' = R t + p × f'."""
    f0, f1, f2 = (rel[0] * w[3] + rel[1] * w[4] + rel[2] * w[5], rel[3] * w[3] + rel[4] * w[4] + rel[5] * w[5],
                  rel[6] * w[3] + rel[7] * w[4] + rel[8] * w[5])
    for r in range(3):
        out[r] += rel[3 * r] * w[0] + rel[3 * r + 1] * w[1] + rel[3 * r + 2] * w[2]
    out[3] += f0
    out[4] += f1
    out[5] += f2
    out[0] += rel[10] * f2 - rel[11] * f1
    out[1] += rel[11] * f0 - rel[9] * f2
    out[2] += rel[9] * f1 - rel[10] * f0


@njit(cache=True, inline="always")
def wrench_to_parent(rel: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """out = Adᵀ_{C⁻¹} W (add_to_parent into zeros); out and w must not overlap."""
    f0, f1, f2 = (rel[0] * w[3] + rel[1] * w[4] + rel[2] * w[5], rel[3] * w[3] + rel[4] * w[4] + rel[5] * w[5],
                  rel[6] * w[3] + rel[7] * w[4] + rel[8] * w[5])
    for r in range(3):
        out[r] = rel[3 * r] * w[0] + rel[3 * r + 1] * w[1] + rel[3 * r + 2] * w[2]
    out[3], out[4], out[5] = f0, f1, f2
    out[0] += rel[10] * f2 - rel[11] * f1
    out[1] += rel[11] * f0 - rel[9] * f2
    out[2] += rel[9] * f1 - rel[10] * f0


@njit(cache=True, inline="always")
def bracket(x: np.ndarray, y: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out += scale · [X, Y] = scale · (ωx × ωy; vx × ωy + ωx × vy) (Müller eq. 113)."""
    out[0] += scale * (x[1] * y[2] - x[2] * y[1])
    out[1] += scale * (x[2] * y[0] - x[0] * y[2])
    out[2] += scale * (x[0] * y[1] - x[1] * y[0])
    out[3] += scale * (x[4] * y[2] - x[5] * y[1] + x[1] * y[5] - x[2] * y[4])
    out[4] += scale * (x[5] * y[0] - x[3] * y[2] + x[2] * y[3] - x[0] * y[5])
    out[5] += scale * (x[3] * y[1] - x[4] * y[0] + x[0] * y[4] - x[1] * y[3])


@njit(cache=True, inline="always")
def co_bracket(v: np.ndarray, h: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out += scale · (−ad_Vᵀ h) = scale · (ω × t + v × f; ω × f) for V = (ω; v), h = (t; f)."""
    out[0] += scale * (v[1] * h[2] - v[2] * h[1] + v[4] * h[5] - v[5] * h[4])
    out[1] += scale * (v[2] * h[0] - v[0] * h[2] + v[5] * h[3] - v[3] * h[5])
    out[2] += scale * (v[0] * h[1] - v[1] * h[0] + v[3] * h[4] - v[4] * h[3])
    out[3] += scale * (v[1] * h[5] - v[2] * h[4])
    out[4] += scale * (v[2] * h[3] - v[0] * h[5])
    out[5] += scale * (v[0] * h[4] - v[1] * h[3])


@njit(cache=True, inline="always")
def inertia_times(m: np.ndarray, y: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out += scale · M Y for M a row-major 6×6."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += m[6 * r + c] * y[c]
        out[r] += scale * s


@njit(cache=True, inline="always")
def screw_dot(kind: int, g: np.ndarray, w: np.ndarray) -> float:
    """ⁱXᵢᵀ W: the axis against the moment (revolute) or the force (prismatic)."""
    o = 3 * kind
    return g[G_AXIS] * w[o] + g[G_AXIS + 1] * w[o + 1] + g[G_AXIS + 2] * w[o + 2]


@njit(cache=True, inline="always")
def set_screw(kind: int, g: np.ndarray, out: np.ndarray) -> None:
    """out = ⁱXᵢ = (a; 0) or (0; a)."""
    for r in range(6):
        out[r] = 0.0
    for r in range(3):
        out[3 * kind + r] = g[G_AXIS + r]


@njit(cache=True, inline="always")
def add_inertia_to_parent(rel: np.ndarray, m: np.ndarray, scratch: np.ndarray, out: np.ndarray) -> None:
    """out += Adᵀ_{C⁻¹} M Ad_{C⁻¹} for a symmetric row-major 6×6 M = [[A, B], [Bᵀ, D]] in the child
    frame, C = rel = (R, p): the blocks rotated (X_r = R X Rᵀ), then moved to the parent origin,
    A' = A_r + p̃ B_rᵀ − B_r p̃ − p̃ D_r p̃, B' = B_r + p̃ D_r, D' = D_r (scratch: 54 entries)."""
    a, b, d, t = scratch[0:9], scratch[9:18], scratch[18:27], scratch[27:36]
    for blk, r0, c0 in ((a, 0, 0), (b, 0, 3), (d, 3, 3)):
        for r in range(3):  # t = X Rᵀ
            for c in range(3):
                t[3 * r + c] = (m[6 * (r0 + r) + c0] * rel[3 * c] + m[6 * (r0 + r) + c0 + 1] * rel[3 * c + 1]
                                + m[6 * (r0 + r) + c0 + 2] * rel[3 * c + 2])
        for r in range(3):  # blk = R t
            for c in range(3):
                blk[3 * r + c] = rel[3 * r] * t[c] + rel[3 * r + 1] * t[3 + c] + rel[3 * r + 2] * t[6 + c]
    e, f = scratch[36:45], scratch[45:54]
    p0, p1, p2 = rel[9], rel[10], rel[11]
    for c in range(3):  # t = p̃ D_r, column by column
        t[c] = p1 * d[6 + c] - p2 * d[3 + c]
        t[3 + c] = p2 * d[c] - p0 * d[6 + c]
        t[6 + c] = p0 * d[3 + c] - p1 * d[c]
    for c in range(3):  # e = p̃ B_rᵀ and f = p̃ tᵀ, column c: p × (row c of B_r or t)
        for x, y in ((b, e), (t, f)):
            y[c] = p1 * x[3 * c + 2] - p2 * x[3 * c + 1]
            y[3 + c] = p2 * x[3 * c] - p0 * x[3 * c + 2]
            y[6 + c] = p0 * x[3 * c + 1] - p1 * x[3 * c]
    for r in range(3):  # with p̃ᵀ = −p̃: −B_r p̃ = eᵀ and −t p̃ = fᵀ
        for c in range(3):
            out[6 * r + c] += a[3 * r + c] + e[3 * r + c] + e[3 * c + r] + f[3 * c + r]
            out[6 * r + 3 + c] += b[3 * r + c] + t[3 * r + c]
            out[6 * (3 + c) + r] += b[3 * r + c] + t[3 * r + c]
            out[6 * (3 + r) + 3 + c] += d[3 * r + c]


@njit(cache=True, inline="always")
def to_parent(rel: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """out = Ad_C Y for C = rel: a child-frame twist in the parent frame, ω' = R ω,
    v' = R v + p × ω' (Müller eq. 96)."""
    for r in range(3):
        out[r] = rel[3 * r] * y[0] + rel[3 * r + 1] * y[1] + rel[3 * r + 2] * y[2]
        out[3 + r] = rel[3 * r] * y[3] + rel[3 * r + 1] * y[4] + rel[3 * r + 2] * y[5]
    out[3] += rel[10] * out[2] - rel[11] * out[1]
    out[4] += rel[11] * out[0] - rel[9] * out[2]
    out[5] += rel[9] * out[1] - rel[10] * out[0]


@njit(cache=True, inline="always")
def compose(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a · b for configurations packed as (R row-major, p)."""
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c]
        out[9 + r] = a[3 * r] * b[9] + a[3 * r + 1] * b[10] + a[3 * r + 2] * b[11] + a[9 + r]


@njit(cache=True, inline="always")
def dot6(x: np.ndarray, y: np.ndarray) -> float:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(cache=True, inline="always")
def rigid_times(b: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """out = M Y for the rigid-body inertia of parameters b (G_RIGID layout): t = Θ ω + h × v,
    f = m v − h × ω (Müller eq. 40 with h = m d)."""
    m, h0, h1, h2 = b[0], b[1], b[2], b[3]
    xx, yy, zz, xy, xz, yz = b[4], b[5], b[6], b[7], b[8], b[9]
    w0, w1, w2, v0, v1, v2 = y[0], y[1], y[2], y[3], y[4], y[5]
    out[0] = xx * w0 + xy * w1 + xz * w2 + h1 * v2 - h2 * v1
    out[1] = xy * w0 + yy * w1 + yz * w2 + h2 * v0 - h0 * v2
    out[2] = xz * w0 + yz * w1 + zz * w2 + h0 * v1 - h1 * v0
    out[3] = m * v0 - h1 * w2 + h2 * w1
    out[4] = m * v1 - h2 * w0 + h0 * w2
    out[5] = m * v2 - h0 * w1 + h1 * w0


@njit(cache=True, inline="always")
def add_rigid_to_parent(rel: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out += the rigid-body parameters b (child frame) in the parent frame, C = rel = (R, p):
    h' = R h, Θ' = R Θ Rᵀ − m (p pᵀ − |p|² I) − (h' pᵀ + p h'ᵀ − 2 p·h' I), h_P = h' + m p
    (the parallel-axis theorem about a point that is not the centre of mass)."""
    m = b[0]
    p0, p1, p2 = rel[9], rel[10], rel[11]
    g0 = rel[0] * b[1] + rel[1] * b[2] + rel[2] * b[3]
    g1 = rel[3] * b[1] + rel[4] * b[2] + rel[5] * b[3]
    g2 = rel[6] * b[1] + rel[7] * b[2] + rel[8] * b[3]
    xx, yy, zz, xy, xz, yz = b[4], b[5], b[6], b[7], b[8], b[9]
    # t = Θ Rᵀ (column c of Rᵀ is row c of R)
    t00 = xx * rel[0] + xy * rel[1] + xz * rel[2]
    t10 = xy * rel[0] + yy * rel[1] + yz * rel[2]
    t20 = xz * rel[0] + yz * rel[1] + zz * rel[2]
    t01 = xx * rel[3] + xy * rel[4] + xz * rel[5]
    t11 = xy * rel[3] + yy * rel[4] + yz * rel[5]
    t21 = xz * rel[3] + yz * rel[4] + zz * rel[5]
    t02 = xx * rel[6] + xy * rel[7] + xz * rel[8]
    t12 = xy * rel[6] + yy * rel[7] + yz * rel[8]
    t22 = xz * rel[6] + yz * rel[7] + zz * rel[8]
    pp, ph = p0 * p0 + p1 * p1 + p2 * p2, p0 * g0 + p1 * g1 + p2 * g2
    diagonal = m * pp + 2.0 * ph
    out[0] += m
    out[1] += g0 + m * p0
    out[2] += g1 + m * p1
    out[3] += g2 + m * p2
    out[4] += rel[0] * t00 + rel[1] * t10 + rel[2] * t20 - m * p0 * p0 - 2.0 * g0 * p0 + diagonal
    out[5] += rel[3] * t01 + rel[4] * t11 + rel[5] * t21 - m * p1 * p1 - 2.0 * g1 * p1 + diagonal
    out[6] += rel[6] * t02 + rel[7] * t12 + rel[8] * t22 - m * p2 * p2 - 2.0 * g2 * p2 + diagonal
    out[7] += rel[0] * t01 + rel[1] * t11 + rel[2] * t21 - m * p0 * p1 - g0 * p1 - p0 * g1
    out[8] += rel[0] * t02 + rel[1] * t12 + rel[2] * t22 - m * p0 * p2 - g0 * p2 - p0 * g2
    out[9] += rel[3] * t02 + rel[4] * t12 + rel[5] * t22 - m * p1 * p2 - g1 * p2 - p1 * g2


@njit(cache=True, inline="always")
def rigid_ad(b: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """out = M ad_V (row-major 6×6) for the rigid-body inertia of parameters b: with M =
    [[Θ, h̃], [−h̃, m I]], M ad_V = [[Θ ω̃ + h̃ ṽ, h̃ ω̃], [m ṽ − h̃ ω̃, m ω̃]]; row r of X ã is
    (row r of X) × a."""
    m = b[0]
    w0, w1, w2, v0, v1, v2 = v[0], v[1], v[2], v[3], v[4], v[5]
    theta = ((b[4], b[7], b[8]), (b[7], b[5], b[9]), (b[8], b[9], b[6]))
    hx = ((0.0, -b[3], b[2]), (b[3], 0.0, -b[1]), (-b[2], b[1], 0.0))
    for r in range(3):
        t0, t1, t2 = theta[r]
        k0, k1, k2 = hx[r]
        out[6 * r] = t1 * w2 - t2 * w1 + k1 * v2 - k2 * v1
        out[6 * r + 1] = t2 * w0 - t0 * w2 + k2 * v0 - k0 * v2
        out[6 * r + 2] = t0 * w1 - t1 * w0 + k0 * v1 - k1 * v0
        hw0, hw1, hw2 = k1 * w2 - k2 * w1, k2 * w0 - k0 * w2, k0 * w1 - k1 * w0
        out[6 * r + 3], out[6 * r + 4], out[6 * r + 5] = hw0, hw1, hw2
        out[6 * (3 + r)] = -hw0
        out[6 * (3 + r) + 1] = -hw1
        out[6 * (3 + r) + 2] = -hw2
    for r, (a0, a1, a2) in enumerate(((0.0, -v2, v1), (v2, 0.0, -v0), (-v1, v0, 0.0))):
        out[6 * (3 + r)] += m * a0
        out[6 * (3 + r) + 1] += m * a1
        out[6 * (3 + r) + 2] += m * a2
    for r, (a0, a1, a2) in enumerate(((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))):
        out[6 * (3 + r) + 3] = m * a0
        out[6 * (3 + r) + 4] = m * a1
        out[6 * (3 + r) + 5] = m * a2
