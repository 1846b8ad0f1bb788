"""The generalized-momentum observer of the external joint torques (``estimator.kind: momentum_observer``;
De Luca and Mattone, "Sensorless robot collision detection and hybrid force/motion control", ICRA 2005;
De Luca et al., "Collision detection and safe reaction with the DLR-III lightweight manipulator arm",
IROS 2006): the arms' baseline for contact detection.

The joint torque sensors (sensors.joint_torque) read τ, what each joint transmits to its link side, after
the drive's rotor inertia and friction; the links then obey M_L(q) q̈ + n(q, q̇) = τ + τ_ext, M_L = M − Iₐ
the mass matrix without the armature and n = RNEA(q, q̇, 0) without friction (friction and armature act
before the sensor). With the momentum p = M_L q̇ and the identity Cᵀq̇ = Ṁq̇ − Cq̇,

    ṗ = τ − n(q, q̇) + Ṁ q̇ + τ_ext =: β + τ_ext,      r(t) = K_O (p(t) − p(0) − ∫₀ᵗ (β + r) ds),

so that ṙ = K_O (τ_ext − r): r follows the external joint torques through a first-order lag of bandwidth
K_O (``observer_gain``) without q̈. Discretized on the grid (h): β by the trapezoidal rule, r implicitly
(unconditionally stable, the step response 1 − (1 + K_O h)^{−k}),

    r_k = K_O (p_k − p_0 − S_{k−1} − h (β_k + β_{k−1}) / 2) / (1 + K_O h),   S_k = S_{k−1} + h (β_k + β_{k−1}) / 2 + h r_k.

Ṁ q̇ = (C + Cᵀ) q̇ (estimator.spatial.dynamics.mass_matrix_rate). q, q̇ and q̈ come from the per-joint
null-jerk Kalman filter (estimator.online.filters.null_jerk) on every reading but the torque sensors';
a joint's τ is its sensor's newest reading. The observer starts at the first step with a reading of
every torque sensor (r = 0 before). The wrench on each frame of ``wrenches`` is the least-squares
solution of Jᶠᵀ ŵ = r (Jᶠ the frame's Jacobian in its own axes, estimator.spatial.kinematics.frame_jacobian),
each frame alone taking all of r.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from estimator.errors import MbstateError
from estimator.model_protocol import Model
from estimator.online.config import EstimatorConfig
from estimator.online.filters.error_ekf import Measurement
from estimator.online.filters.null_jerk import NullJerkKF
from estimator.spatial.dynamics import inverse_dynamics, mass_matrix, mass_matrix_rate, workspace
from estimator.spatial.kinematics import body_kinematics, frame_jacobian
from estimator.spatial.model import SpatialModel
from sensors.config import SensorSet
from sensors.joint_torque import KIND as JOINT_TORQUE


class MomentumObserver:
    """The observer of the module docstring behind the filters' interface (``start``, ``predict``,
    ``correct``, ``state``, ``sigmas``); ``state`` also carries ``model`` (the external joint torques as
    "external_torque.<joint>") and ``wrenches`` (frame → (m; f))."""

    def __init__(self, mech: Model, config: EstimatorConfig, sensors: SensorSet) -> None:
        if not isinstance(mech, SpatialModel):
            raise MbstateError("estimator.kind: momentum_observer needs a URDF tree (its mass matrix and "
                               "Jacobians); this is a planar mechanism file: use kind smoother")
        self.kinematics = NullJerkKF(mech, config.filter_jerk_walk)  # refuses a closed chain in one line
        self.torque_joint = {id(s): s.joint for s in sensors.sensors if s.params.kind == JOINT_TORQUE}
        missing = sorted(set(mech.joint_names) - {mech.joint_names[j] for j in self.torque_joint.values()})
        if missing:
            raise MbstateError(f"estimator.kind: momentum_observer needs a joint torque sensor on every joint; "
                               f"none on {', '.join(missing)}")
        self.mech, self.frames, self.gain, self.h = mech, config.wrenches, config.observer_gain, config.dt
        self.work = workspace(mech)
        self.armature = np.diag(mech.armature)
        self.tau = np.full(mech.dof, np.nan)
        self.r = np.zeros(mech.dof)
        self._momentum0: np.ndarray | None = None
        self._integral = np.zeros(mech.dof)
        self._beta = np.zeros(mech.dof)

    def start(self, q: np.ndarray, qd: np.ndarray, position_sigma: float, velocity_sigma: float) -> None:
        """The kinematic filter's start (NullJerkKF.start); the observer starts at its first full step."""
        self.kinematics.start(q, qd, position_sigma, velocity_sigma)

    def predict(self, dt: float) -> None:
        self.kinematics.predict(dt)

    def correct(self, measurements: Sequence[Measurement]) -> None:
        """The kinematic filter's correction with the readings of the other sensors, then one observer step
        with the newest torques (module docstring)."""
        others = []
        for m in measurements:
            joint = self.torque_joint.get(id(m.sensor))
            if joint is None:
                others.append(m)
            else:
                self.tau[joint] = m.value[0]
        self.kinematics.correct(others)
        if not np.isnan(self.tau).any():
            self._observe()

    def _observe(self) -> None:
        state, mech, work = self.kinematics.state, self.mech, self.work
        momentum = (mass_matrix(mech, state.q, work) - self.armature) @ state.qd
        zero = np.zeros(mech.dof)
        beta = (self.tau - inverse_dynamics(mech, state.q, state.qd, zero, friction=False, work=work)
                + mass_matrix_rate(mech, state.q, state.qd, work))
        if self._momentum0 is None:
            self._momentum0, self._beta = momentum, beta
            return
        known = self._integral + 0.5 * self.h * (beta + self._beta)
        self.r = self.gain * (momentum - self._momentum0 - known) / (1.0 + self.gain * self.h)
        self._integral, self._beta = known + self.h * self.r, beta

    @property
    def state(self) -> SimpleNamespace:
        """q, q̇, q̈ of the kinematic filter, the external joint torques and the frames' wrenches."""
        kinematic = self.kinematics.state
        external = {f"external_torque.{name}": float(v) for name, v in zip(self.mech.joint_names, self.r)}
        wrenches = {}
        if self.frames:
            kin = body_kinematics(self.mech, kinematic.q, kinematic.qd, kinematic.qdd)
            for name in self.frames:
                wrenches[name] = np.linalg.lstsq(frame_jacobian(self.mech, kin, name).T, self.r, rcond=None)[0]
        return SimpleNamespace(q=kinematic.q, qd=kinematic.qd, qdd=kinematic.qdd, model=external, wrenches=wrenches)

    def sigmas(self) -> tuple[np.ndarray, np.ndarray]:
        """Standard deviations of q and q̇ (the kinematic filter's)."""
        return self.kinematics.sigmas()
