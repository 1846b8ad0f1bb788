"""What every sensor kind shares: parameters, the state it reads, the ``Sensor`` protocol, the robust loss.

A sensor kind (gyroscope, accelerometer, encoder, load cell) is one class built from its config
section and the mechanism. Its measurement function h reads the state blocks named in
``variables`` — ``q``, ``v`` (q̇), ``a`` (q̈), ``l`` (λ), ``f`` (actuator forces), ``g`` (the estimator's
relative gravity error, one entry: 0 unless its state carries it), ``w`` (the external wrenches on named
frames the estimator carries, 6 entries each: only a sensor made by ``with_wrenches`` reads them) — and returns h and
∂h/∂block analytically, in numpy (compiled where it is hot) and without GTSAM. The sensor does not
touch the graph: the estimator turns a reading z into whitened rows of the step it attaches to
(estimator.factors.observation_stack), e = W (h(x) + b − z), wrapped to (−π, π] for rotary
encoders, W the whitening of the per-sample σ of the datasheet noise (or of the reading's ``cov``),
b the sensor's bias when it has a bias state (carried in the estimator's stacked state, with the
prior b_0 ~ N(0, σ_b²) and the random walk b_k − b_{k−1} ~ N(0, K² h) between steps), reweighted
by the robust loss (Huber, Cauchy) against outliers.

Noise conventions (datasheet / Allan variance, as IMU calibration tools such as Kalibr state them):
white-noise density N [unit/√Hz] gives the per-sample σ = N √rate; the bias random walk K
[unit/s/√Hz] gives the per-sample bias increment σ = K / √rate; a quantum Δ adds Δ²/12 to the
variance (rounding to the nearest step).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numba import njit

from estimator.errors import shown
from estimator.section import Section

if TYPE_CHECKING:
    from estimator.spatial.frame_wrenches import FrameWrenches
    from estimator.spatial.link_masses import LinkMassTerms

Jacobians = list[np.ndarray]
LOSSES = ("huber", "cauchy")
MAX_RATE = 1e6  # [Hz]: the highest sensor rate a configuration may state


@dataclass(frozen=True)
class NoiseParams:
    """Datasheet noise of one sensor (per axis, same for every axis).

    density [unit/√Hz] white noise; random_walk [unit/s/√Hz] bias random walk; bias [unit] the
    constant turn-on bias of the virtual sensor; bias_sigma [unit] the prior σ of the estimated
    bias; quantum [unit] resolution (0: continuous); saturation (low, high) [unit] or None; jitter
    [s] σ of the time-stamp error.
    """

    density: float = 0.0
    random_walk: float = 0.0
    bias: float = 0.0
    bias_sigma: float = 0.0
    quantum: float = 0.0
    saturation: tuple[float, float] | None = None
    jitter: float = 0.0

    def sample_sigma(self, rate: float) -> float:
        """Per-sample σ of white noise and quantization: √(N² rate + Δ²/12) [unit]."""
        return float(np.sqrt(self.density**2 * rate + self.quantum**2 / 12.0))

    def bias_step_sigma(self, dt: float) -> float:
        """σ of the bias change over dt [s]: K √dt [unit] (K / √rate per sample)."""
        return float(self.random_walk * np.sqrt(dt))


@njit(cache=True)
def robust_weight(loss: int, k: float, norm: float) -> float:
    """The M-estimator's weight w(|e|) = ρ′(|e|)/|e| at the norm |e| of a whitened residual, threshold k
    (in σ): ``loss`` 0 none (w = 1), 1 Huber (w = min(1, k/|e|)), 2 Cauchy (w = 1/(1 + (|e|/k)²)).
    Iteratively reweighted least squares scales e and ∂e/∂x by √w at every linearization, so that
    Gauss-Newton minimizes Σ ρ(|e|) (Z. Zhang, "Parameter estimation techniques: a tutorial with
    application to conic fitting", 1997, on M-estimators).
    Compiled: the estimator's rows (estimator.factors.observation_stack) call it for every reading."""
    if loss == 1:
        return min(1.0, k / max(norm, 1e-300))
    if loss == 2:
        return 1.0 / (1.0 + (norm / k) ** 2)
    return 1.0


@dataclass(frozen=True)
class RobustLoss:
    """An M-estimator against outliers: ``huber`` or ``cauchy`` with threshold k (in σ units)."""

    loss: str
    k: float

    @property
    def code(self) -> int:
        """The loss as ``robust_weight`` takes it: 1 Huber, 2 Cauchy."""
        return LOSSES.index(self.loss) + 1

    def weight(self, norm: float) -> float:
        """w(|e|) at the whitened residual's norm (``robust_weight``)."""
        return robust_weight(self.code, self.k, float(norm))


@dataclass(frozen=True)
class SensorParams:
    """What every sensor has: id (``name``), ``kind``, sample ``rate`` [Hz], ``noise``, optional
    robust ``loss``, whether its bias is estimated (``bias_state``), its ``units`` (SI, checked) and
    the ``range`` (low, high) [unit] of values it can report (sensors.plausibility refuses the rest)."""

    name: str
    kind: str
    rate: float
    units: str
    noise: NoiseParams = field(default_factory=NoiseParams)
    loss: RobustLoss | None = None
    bias_state: bool = False
    range: tuple[float, float] = (-np.inf, np.inf)


@dataclass(frozen=True)
class State:
    """The state at one instant: q, q̇, q̈ (n), λ (m), actuator forces f (in mech.actuators order) and the
    external wrenches on named frames; its gravity is its mechanism's (the gravity error ``g`` reads 0)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    f: np.ndarray
    wrenches: dict[str, np.ndarray] = field(default_factory=dict)  # applied external wrenches of a truth with
    # contact: frame name → (m; f) [N·m; N] in the frame's axes about its origin (what the torque sensors feel)

    def block(self, kind: str) -> np.ndarray:
        """The block named as in ``variables``."""
        return {"q": self.q, "v": self.qd, "a": self.qdd, "l": self.lam, "f": self.f, "g": np.zeros(1)}[kind]


@runtime_checkable
class Sensor(Protocol):
    """One sensor as the estimator, its filters and the virtual sensors use it: the one seam from a
    reading to the rows of the step it touches (module docstring); only the estimator owns the graph.

    ``params``: id, kind, rate, units, ``noise`` (the σ of a reading, the bias prior and random walk),
    robust ``loss``, ``bias_state``, ``range``. ``dimension``: the length d of a reading.
    ``variables``: the state blocks h reads (q, v, a, l, f, g), in the order ``measurement`` takes them.
    ``wraps``: the reading is an angle (residuals wrapped to (−π, π])."""

    params: SensorParams
    dimension: int
    variables: tuple[str, ...]
    wraps: bool

    def measurement(self, *blocks: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        """h (d,) of the blocks named in ``variables`` and, if ``jac``, [∂h/∂block] (d x block size each)."""
        ...

    def residual(self, h: np.ndarray, z: np.ndarray) -> np.ndarray:
        """h − z, wrapped to (−π, π] when ``wraps``."""
        ...

    def measure(self, state: State) -> np.ndarray:
        """The ideal (noise-free, bias-free) reading in the state ``state``."""
        ...

    def present(self, values: np.ndarray) -> np.ndarray:
        """How the device reports already corrupted values (N, d) in time order (encoders wrap or unwrap)."""
        ...

    def with_wrenches(self, frames: FrameWrenches) -> Sensor:
        """The sensor as it reads the external wrenches on ``frames`` too (one more block, ``w``): itself
        for a kind whose reading does not depend on them."""
        ...

    def with_masses(self, masses: LinkMassTerms) -> Sensor:
        """The sensor as it reads a URDF model's link-mass errors ν too (one more block, ``m``;
        estimator.spatial.link_masses): itself for a kind whose reading does not depend on them."""
        ...


class SensorModel:
    """The shared part of every kind (it satisfies ``Sensor``): a subclass sets ``params``,
    ``dimension``, ``variables`` and implements ``measurement(*blocks, jac)``; ``wraps`` marks angles."""

    params: SensorParams
    dimension: int
    variables: tuple[str, ...]
    wraps: bool = False

    def measurement(self, *blocks: np.ndarray, jac: bool = True) -> tuple[np.ndarray, Jacobians | None]:
        raise NotImplementedError

    def measure(self, state: State) -> np.ndarray:
        return self.measurement(*[state.block(v) for v in self.variables], jac=False)[0]

    def residual(self, h: np.ndarray, z: np.ndarray) -> np.ndarray:
        """h − z, wrapped to (−π, π] for angles."""
        e = h - z
        return wrap_angle(e) if self.wraps else e

    def present(self, values: np.ndarray) -> np.ndarray:
        """How the device reports already corrupted values (encoders wrap or unwrap)."""
        return values

    def with_wrenches(self, frames: FrameWrenches) -> Sensor:
        """Itself: a kind whose reading depends on external wrenches overrides this (``Sensor``)."""
        return self

    def with_masses(self, masses: LinkMassTerms) -> Sensor:
        """Itself: a kind whose reading depends on the link masses overrides this (``Sensor``)."""
        return self


def wrap_angle(angle: np.ndarray) -> np.ndarray:
    """Angle(s) in (−π, π] [rad]."""
    return np.pi - np.mod(np.pi - np.asarray(angle, float), 2.0 * np.pi)


def read_common(section: Section, kind: str, name: str, units: str, span: float) -> SensorParams:
    """The keys every sensor has: rate, units, noise, loss, bias_state, range (see configs/sensors/README.md);
    ``span`` [unit]: the kind's default range is [−span, span] when the noise has no saturation."""
    rate = section.number("rate", positive=True, maximum=MAX_RATE)
    declared = section.text("units", units)
    if declared != units:
        raise section.error("units", f"{kind} readings are in {units}, got {shown(declared)}")
    noise = section.section("noise", {})
    saturation = None
    if noise.has("saturation"):
        saturation = noise.numbers("saturation", 2)
        if saturation[0] >= saturation[1]:
            raise noise.error("saturation", f"needs low < high, got {list(saturation)}")
    if noise.has("sigma") and noise.has("density"):
        raise noise.error("sigma", "give sigma (per sample) or density, not both")
    density = (noise.number("sigma", minimum=0.0) / np.sqrt(rate) if noise.has("sigma")
               else noise.number("density", 0.0, minimum=0.0))
    params = NoiseParams(density=density,
                         random_walk=noise.number("random_walk", 0.0, minimum=0.0),
                         bias=noise.number("bias", 0.0), bias_sigma=noise.number("bias_sigma", 0.0, minimum=0.0),
                         quantum=noise.number("quantum", 0.0, minimum=0.0), saturation=saturation,
                         jitter=noise.number("jitter", 0.0, minimum=0.0))
    noise.finish()
    loss = None
    if section.has("loss"):
        spec = section.section("loss")
        loss = RobustLoss(spec.choice("type", LOSSES), spec.number("k", positive=True))
        spec.finish()
    bias_state = section.flag("bias_state", False)
    if bias_state and params.bias_sigma <= 0.0:
        raise section.error("noise.bias_sigma", "a sensor with bias_state needs bias_sigma > 0 (the bias prior)")
    limits = section.numbers("range", 2, saturation or (-span, span))
    if limits[0] >= limits[1]:
        raise section.error("range", f"needs low < high, got {list(limits)}")
    return SensorParams(name=name, kind=kind, rate=rate, units=units, noise=params, loss=loss, bias_state=bias_state,
                        range=limits)


def check_noise(section: Section, params: SensorParams) -> None:
    """A reading's rows need σ > 0 (W = 1/σ): noise.density or a quantum (counts, resolution) must be set."""
    if params.noise.sample_sigma(params.rate) <= 0.0:
        raise section.error("noise.density", "must be positive (or the sensor must have a resolution): "
                                             "the factor needs a non-zero σ")
