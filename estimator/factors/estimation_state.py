"""The stacked state of the online estimator and its process-model factors.

x_k = [q (n); q̇ (n); q̈ (n); F (a); g (0 or 1); ν (0 or nm); ℓ (0 or nl); c (0 or nc); θ (0 or 10); Ḟ (0 or a);
b (nb); w (6 per frame); λ (|S|)]:
λ on an independent subset S of the constraint rows (dynamics only), F the unknown actuator forces
(dynamics only), g the relative error of the model's gravity (optional, dynamics only: the model's gravity force
Q_g becomes (1 + g) Q_g), ν for the relative errors μ = P ν of the masses of the model's nm bodies
with mass (optional, dynamics only: body b's mass matrix M_b and gravity force Q_g,b, its mass and
inertia, become (1 + μ_b) times the model's; P keeps the total mass, estimator.mass.BodyMassTerms),
ℓ the relative errors of the lengths of the nl bodies whose distance row is in S (optional: body b's
row u·u − L_b² becomes u·u − L_b² (1 + ℓ_b)², estimator.lengths), c the viscous friction
coefficients on nc chosen coordinates that the model lacks (optional, dynamics only: a generalized force
−c_i q̇_i on coordinate i), θ = (m, h, Θ) the inertial parameters of an unknown payload on one link of a
spatial model (optional, dynamics only: the equations of motion get Jᵀ W_p, its wrench on the link,
estimator.spatial.payload), Ḟ the rates of F (the smooth force model), b the biases of the sensors with
``bias_state`` (each sensor's d entries, in sensor order), w the external wrenches on named frames of a
URDF model (optional, dynamics only: w_f = (t; f) in frame f's axes about its origin, the RNEA's applied
wrenches, estimator.spatial.frame_wrenches).
One variable per step keeps GTSAM's bookkeeping small (estimator.factors.stacked_state); F, g, ν, ℓ, c,
θ, b and w ride in it, so their random walks join the integrators in one native factor between
consecutive states:

    model rows of step k (one Python factor, with that step's readings, estimator.factors.observation_stack):
      dynamics:    [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E F − Q_g g + Σ_b μ_b (M_b q̈ − (1 + g) Q_g,b)
                    + C q̇ − Σ_f J_fᵀ w_f; Φq_S q̈ − γ_S]
                   (estimator.dynamics.step_rows, g as one more unknown force, on the column Q_g;
                   the mass errors' term: mass_error_rows; C = diag(c) on the friction's
                   coordinates: friction_rows; w through the model's RNEA, estimator.model_protocol.step_rows;
                   + Jᵀ W_p(q, q̇, q̈, θ): payload_rows)
      kinematics:  [Φ_S; Φq_S q̇; Φq_S q̈ − γ_S]                          (its constraint block)
      either, with ℓ: Φ_S's distance rows less L_b² ((1 + ℓ_b)² − 1)   (length_error_rows)
    process rows between steps (native, linear; estimator.factors.native):
      Adams-Moulton of order p on z/ż and ż/z̈ over x_{k+1−p} … x_k (estimator.factors.multistep;
      z = q[I] the independent coordinates, so the other columns stay inside their step's factor:
      estimator.factors.reduced_state),
      F_k − F_{k−1} ~ N(0, K_F² h) (the force walk), or for smooth forces
      F_k − F_{k−1} − h/2 (Ḟ_{k−1} + Ḟ_k) ~ N(0, J² h³/12 + K_s² h) and Ḟ_k − Ḟ_{k−1} ~ N(0, J² h)
      (K_s a share of K: estimator.online.config.FORCE_STEP_SHARE),
      g_k − g_{k−1} ~ N(0, K_g² h), ν_k − ν_{k−1} ~ N(0, K_ν² h), ℓ_k − ℓ_{k−1} ~ N(0, K_ℓ² h),
      c_k − c_{k−1} ~ N(0, K_c² h), θ_k − θ_{k−1} ~ N(0, diag(K_θ)² h),
      b_k − b_{k−1} ~ N(0, K_b² h) per sensor, w_k − w_{k−1} ~ N(0, K_w² h),
      kinematics only, and for the jerk force model on the z the forces act on (F then free at each
      step, and those z without the white acceleration of the Adams-Moulton rows):
      z̈_k − z̈_{k−1} ~ N(0, K_j² h) (white jerk, the constant-acceleration model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, partial

import gtsam
import numpy as np
from numpy.typing import ArrayLike

from estimator.factors.multistep import adams_moulton_error
from estimator.factors.native import LinearRelation
from estimator.factors.stacked_state import StateLayout, integrator_on_states
from estimator.lengths import BodyLengthTerms
from estimator.mass import BodyMassTerms
from estimator.model import Mechanism
from estimator.model_protocol import constraint_rows, step_rows
from estimator.spatial.frame_wrenches import FrameWrenches
from estimator.spatial.link_masses import LinkMassTerms
from estimator.spatial.payload import STATES as PAYLOAD_STATES
from estimator.spatial.payload import PayloadTerms

MassTerms = BodyMassTerms | LinkMassTerms  # a planar model's or a URDF tree's (the same members)


@dataclass(frozen=True)
class EstimationLayout:
    """Where each block sits in x (see the module docstring). ``rows``: S; ``forces``: indices into
    mech.actuators of the unknown forces; ``bias``: bias size of each sensor (0 without bias state);
    ``gravity``: whether x carries the gravity error g; ``independent``: the independent coordinates
    z = q[I] that the process rows integrate (None: every coordinate, an unconstrained q);
    ``force_rates``: whether x carries Ḟ, the rates of the unknown forces (the smooth force model);
    ``masses``: how many mass-error entries ν x carries (0, or one per body with mass); ``lengths``:
    how many length errors ℓ (0, or one per body with a kept distance row); ``frictions``: the
    coordinates whose viscous friction coefficient c x carries; ``payload``: whether x carries the payload θ;
    ``wrenches``: the frames whose external wrench w x carries (6 entries each).
    The slices are cached: every step's factor reads them."""

    n: int
    rows: tuple[int, ...]
    forces: tuple[int, ...]
    bias: tuple[int, ...]
    gravity: bool = False
    independent: tuple[int, ...] | None = None
    force_rates: bool = False
    masses: int = 0
    lengths: int = 0
    frictions: tuple[int, ...] = ()
    wrenches: tuple[str, ...] = ()
    payload: bool = False

    @cached_property
    def integrated(self) -> np.ndarray:
        """I as an index array (every coordinate when ``independent`` is None)."""
        return np.arange(self.n) if self.independent is None else np.asarray(self.independent, int)

    @cached_property
    def shared(self) -> np.ndarray:
        """The columns the factors between steps touch, s = [z; ż; z̈; F; g; ν; ℓ; c; θ; Ḟ; b; w]
        (estimator.factors.reduced_state)."""
        picked = self.integrated
        return np.concatenate((picked, self.n + picked, 2 * self.n + picked, np.arange(3 * self.n, self.lam.start)))

    @cached_property
    def local(self) -> np.ndarray:
        """The other columns, [q, q̇, q̈ off I; λ]: only their own step's factor touches them."""
        return np.setdiff1d(np.arange(self.size), self.shared)

    @cached_property
    def row_indices(self) -> np.ndarray:
        """S as an index array."""
        return np.asarray(self.rows, int)

    @cached_property
    def force(self) -> slice:
        return slice(3 * self.n, 3 * self.n + len(self.forces))

    @cached_property
    def gravity_error(self) -> slice:
        """The column of g (empty without it), right after F: [F, g] are the step rows' unknown forces."""
        return slice(self.force.stop, self.force.stop + int(self.gravity))

    @cached_property
    def loads(self) -> slice:
        """[F, g]: the columns of the unknown forces of the dynamics rows."""
        return slice(self.force.start, self.gravity_error.stop)

    @cached_property
    def mass_error(self) -> slice:
        """The columns of ν (empty without them), after [F, g]."""
        return slice(self.gravity_error.stop, self.gravity_error.stop + self.masses)

    @cached_property
    def length_error(self) -> slice:
        """The columns of ℓ (empty without them), after ν."""
        return slice(self.mass_error.stop, self.mass_error.stop + self.lengths)

    @cached_property
    def friction(self) -> slice:
        """The columns of c (empty without them), after ℓ."""
        return slice(self.length_error.stop, self.length_error.stop + len(self.frictions))

    @cached_property
    def friction_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """The friction's coordinates and the columns of their c, as index arrays."""
        return np.asarray(self.frictions, int), np.arange(self.friction.start, self.friction.stop)

    @cached_property
    def payload_state(self) -> slice:
        """The columns of θ = (m, h, Θ) (empty without it), after c."""
        return slice(self.friction.stop, self.friction.stop + PAYLOAD_STATES * self.payload)

    @cached_property
    def force_rate(self) -> slice:
        """The columns of Ḟ (empty without them), after θ."""
        return slice(self.payload_state.stop, self.payload_state.stop + len(self.forces) * self.force_rates)

    def bias_of(self, sensor: int) -> slice:
        """Columns of the bias of sensor number ``sensor``."""
        start = self.force_rate.stop + sum(self.bias[:sensor])
        return slice(start, start + self.bias[sensor])

    @cached_property
    def wrench(self) -> slice:
        """The columns of w (empty without them), after b."""
        start = self.force_rate.stop + sum(self.bias)
        return slice(start, start + 6 * len(self.wrenches))

    @cached_property
    def lam(self) -> slice:
        """Last, after every column the factors between steps may touch."""
        return slice(self.wrench.stop, self.wrench.stop + len(self.rows))

    @cached_property
    def size(self) -> int:
        return self.lam.stop

    @property
    def stacked(self) -> StateLayout:
        """The same state as a StateLayout (extra = F, b, λ) for the integrator lifting."""
        return StateLayout(self.n, self.size - 3 * self.n)


def dynamics_rows(mech: Mechanism, layout: EstimationLayout, selection: np.ndarray, masses: MassTerms | None,
                  lengths: BodyLengthTerms | None, payload: PayloadTerms | None, x: np.ndarray, jac: bool = True,
                  frames: FrameWrenches | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """e = [Φ_S; Φq_S q̇; M q̈ + Φq_Sᵀ λ − Q − E [F; g]; Φq_S q̈ − γ_S] and ∂e/∂x (E = ``selection``: the
    actuators' columns, and the column Q_g last when x carries g), with the mass errors' term
    (mass_error_rows) on the bodies of ``masses`` when x carries ν, the length errors' term
    (length_error_rows) on the bodies of ``lengths`` when x carries ℓ, the friction's
    (friction_rows) when x carries c, the payload's (payload_rows) when x carries θ and the external
    wrenches on the frames of ``frames`` (in the model's step_rows: the RNEA's applied wrenches) when x
    carries w."""
    n, size = layout.n, len(layout.rows)
    error, block = step_rows(mech, layout.row_indices, selection, x[:n], x[n:2 * n], x[2 * n:3 * n],
                             x[layout.lam], x[layout.loads], jac, frames, x[layout.wrench])
    jacobian = None
    if jac:
        jacobian = np.zeros((error.shape[0], layout.size))
        jacobian[:, :3 * n] = block[:, :3 * n]
        jacobian[:, layout.lam] = block[:, 3 * n:3 * n + size]
        loads = 3 * n + size + layout.loads.stop - layout.loads.start
        jacobian[:, layout.loads] = block[:, 3 * n + size:loads]
        jacobian[:, layout.wrench] = block[:, loads:]
    if layout.masses:
        mass_error_rows(masses, layout, x, slice(2 * size, 2 * size + n), error, jacobian)
    if layout.lengths:
        length_error_rows(lengths, layout, x, error, jacobian)
    if layout.frictions:
        friction_rows(layout, x, 2 * size, error, jacobian)
    if layout.payload:
        payload_rows(payload, layout, x, 2 * size, error, jacobian)
    return error, jacobian


def payload_rows(payload: PayloadTerms, layout: EstimationLayout, x: np.ndarray, first: int, error: np.ndarray,
                 jacobian: np.ndarray | None) -> None:
    """Adds Jᵀ W_p, the joint forces the payload θ takes (estimator.spatial.payload), to the
    equations of motion (the n rows of ``error`` from ``first`` on) and its derivatives by q, q̇, q̈ and θ
    to ``jacobian`` (None: the error only)."""
    n, rows = layout.n, slice(first, first + layout.n)
    forces, derivatives = payload.rows(x[:n], x[n:2 * n], x[2 * n:3 * n], x[layout.payload_state], jacobian is not None)
    error[rows] += forces
    if jacobian is not None:
        jacobian[rows, :3 * n] += derivatives[:, :3 * n]
        jacobian[rows, layout.payload_state] += derivatives[:, 3 * n:]


def friction_rows(layout: EstimationLayout, x: np.ndarray, first: int, error: np.ndarray,
                  jacobian: np.ndarray | None) -> None:
    """Adds c_i q̇_i to the equation of motion of each coordinate i of ``layout.frictions`` (the rows of
    ``error`` from ``first`` on are the n equations of motion: a generalized force −c_i q̇_i the model's Q
    lacks, viscous friction on that coordinate) and its derivatives by c and q̇ to ``jacobian`` (None:
    the error only)."""
    coordinates, columns = layout.friction_indices
    rows, rates = first + coordinates, layout.n + coordinates
    c, qd = x[layout.friction], x[rates]
    error[rows] += c * qd
    if jacobian is not None:
        jacobian[rows, columns] += qd
        jacobian[rows, rates] += c


def mass_error_rows(masses: MassTerms, layout: EstimationLayout, x: np.ndarray, rows: slice,
                    error: np.ndarray, jacobian: np.ndarray | None) -> None:
    """Adds Σ_b μ_b d_b(q, q̇, q̈) to the equations of motion (``rows`` of ``error``) and its derivatives by
    q, q̇, q̈, g and ν to ``jacobian`` (None: the error only): body b's mass and inertia (1 + μ_b) times the
    model's, μ = P ν (P: ``masses.distribution``; ``masses.columns`` gives ∂d/∂ν and the motion's
    tangent). Planar: d_b = M_b q̈ − (1 + g) Q_g,b (estimator.mass), g = 0 when x carries no gravity
    error; spatial: d_b the inverse dynamics of link b alone (estimator.spatial.link_masses)."""
    n, nu = layout.n, x[layout.mass_error]
    scale = 1.0 + (x[layout.gravity_error][0] if layout.gravity else 0.0)
    by_state, motion = masses.columns(x[:n], x[n:2 * n], x[2 * n:3 * n], nu, scale)
    error[rows] += by_state @ nu
    if jacobian is None:
        return
    jacobian[rows, layout.mass_error] += by_state
    jacobian[rows, :3 * n] += motion.transpose(1, 0, 2).reshape(n, 3 * n)
    if layout.gravity:
        jacobian[rows, layout.gravity_error] -= (masses.state_gravity @ nu)[:, None]


def length_error_rows(lengths: BodyLengthTerms, layout: EstimationLayout, x: np.ndarray, error: np.ndarray,
                      jacobian: np.ndarray | None) -> None:
    """Adds −L_b² ((1 + ℓ_b)² − 1) to the distance row of each body b of ``lengths`` among the position
    rows Φ_S (the first rows of ``error``) and its derivative by ℓ_b to ``jacobian`` (None: the error
    only; estimator.lengths)."""
    change, slope = lengths.rows(x[layout.length_error], jacobian is not None)
    error[lengths.positions] += change
    if jacobian is not None:
        jacobian[lengths.positions, np.arange(layout.length_error.start, layout.length_error.stop)] += slope


def kinematic_rows(mech: Mechanism, rows: np.ndarray, layout: EstimationLayout, lengths: BodyLengthTerms | None,
                   x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """e = [Φ_S; Φq_S q̇; Φq_S q̈ − γ_S] over the constraint ``rows`` S and ∂e/∂x (the state carries no λ),
    with the length errors' term (length_error_rows) on the bodies of ``lengths`` when x carries ℓ."""
    n = layout.n
    error, block = constraint_rows(mech, rows, x[:n], x[n:2 * n], x[2 * n:3 * n], jac)
    jacobian = None
    if jac:
        jacobian = np.zeros((error.shape[0], layout.size))
        jacobian[:, :3 * n] = block
    if layout.lengths:
        length_error_rows(lengths, layout, x, error, jacobian)
    return error, jacobian


def process_relation(layout: EstimationLayout, dt: float, order: int, integrator_sigmas: ArrayLike,
                     walks: Sequence[tuple[slice | np.ndarray, float]],
                     trapezoids: Sequence[tuple[slice, slice, float]] = ()) -> LinearRelation:
    """The native factor between x_{k+1−p} … x_k: Adams-Moulton rows of z = q[I] and ż (σ
    ``integrator_sigmas``: one for each level, or a (2, |I|) array, one per level and coordinate),
    random walks x_k[s] − x_{k−1}[s] with per-step σ for each
    (columns s: a slice or indices, σ) of ``walks``, and trapezoidal rows
    x_k[v] − x_{k−1}[v] − h/2 (x_{k−1}[r] + x_k[r]) with σ for each (v, r, σ) of ``trapezoids``."""
    selection = np.eye(layout.n)[layout.integrated]
    integrator = integrator_on_states(layout.stacked, partial(adams_moulton_error, order, dt, selection=selection),
                                      order)
    columns = [np.arange(layout.size)[s] for s, _ in walks]
    picked = np.concatenate(columns) if columns else np.zeros(0, int)
    pick = np.eye(layout.size)[picked]

    identity = np.eye(layout.size)
    values = np.vstack([identity[v] for v, _, _ in trapezoids]) if trapezoids else np.zeros((0, layout.size))
    rates = np.vstack([identity[r] for _, r, _ in trapezoids]) if trapezoids else np.zeros((0, layout.size))
    previous = np.vstack((-pick, -values - 0.5 * dt * rates))  # the rows after the integrator's, on x_{k−1}
    current = np.vstack((pick, values - 0.5 * dt * rates))

    def error(*states: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        e, blocks = integrator(*states, jac=jac)
        e = np.concatenate((e, previous @ states[-2] + current @ states[-1]))
        if not jac:
            return e, None
        if len(previous):
            blocks = [np.vstack((b, np.zeros((len(previous), layout.size)))) for b in blocks]
            blocks[-2][-len(previous):] += previous
            blocks[-1][-len(previous):] += current
        return e, blocks

    levels = np.asarray(integrator_sigmas, float).reshape(2, -1)
    sigmas = np.concatenate([np.broadcast_to(levels, (2, len(layout.integrated))).ravel()]
                            + [np.full(len(c), sigma) for c, (_, sigma) in zip(columns, walks)]
                            + [np.full(v.stop - v.start, sigma) for v, _, sigma in trapezoids])
    return LinearRelation(gtsam.noiseModel.Diagonal.Sigmas(sigmas), [layout.size] * order, error)


def prior_relation(mean: np.ndarray, sigmas: np.ndarray) -> LinearRelation:
    """x ~ N(mean, diag σ²) on one variable (the start prior), as a native factor."""
    identity = np.eye(len(mean))
    return LinearRelation(gtsam.noiseModel.Diagonal.Sigmas(sigmas), [len(mean)],
                          lambda x, jac=True: (x - mean, [identity] if jac else None))
