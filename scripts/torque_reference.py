"""What a driven cell's sensors tell of its drive torques, by a method independent of the estimator (issue 10).

    python scripts/torque_reference.py MECHANISM SET [--duration 3] [--density 0.3 1 3 10 ...]

A reference for the accuracy matrix's torque figures (configs/bench/accuracy.yaml), not an
estimator. The cell's truth and readings are the matrix's (the same simulation and seed). The
driven coordinates z (the matrix's joints, which must be the mechanism's independent coordinates)
move as a white-jerk process of density D each: the state [z, ż, z̈, b] (b a bias per gyroscope,
a random walk of its density) evolves by the exact discretization of that process. Encoders read z
plus their mounting offset, with the uniform quantization's variance Δ²/12; gyroscopes read
J(q) ż + b with their white noise and quantization, J their body's rate per unit ż along the truth's
pose (the pose is what the encoders give to a fraction of a quantum). A Kalman filter gives each
step's estimate from the readings up to it (what a newest-step estimate can use); the
Rauch-Tung-Striebel smoother each step's from every reading of the run (the best estimate linear in
the readings under this prior, late or not). Both start from the truth's start, as the matrix's estimator is given
its start pose. The torques are the inverse dynamics of either motion (estimator.dynamics.inverse,
the code `mbstate inverse` runs); for each D the script prints their RMSE as a share of each
torque's range over the run. Sets with accelerometers or load cells are refused: their readings
are not linear in [z, ż, z̈].
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from estimator.benchmarks.accuracy import SEED, load_matrix, truth_of  # noqa: E402
from estimator.dynamics.inverse import inverse_dynamics  # noqa: E402
from estimator.errors import MbstateError  # noqa: E402
from estimator.kinematics import solve_velocity_problem  # noqa: E402
from estimator.mechanism_file import load_mechanism  # noqa: E402
from estimator.model import Mechanism  # noqa: E402
from estimator.threads import one_blas_thread  # noqa: E402
from sensors.base import State, wrap_angle  # noqa: E402
from sensors.config import load_sensors  # noqa: E402
from sensors.virtual import Truth, simulate_readings  # noqa: E402

Observation = tuple[np.ndarray, float, float]  # a reading at one step: H row, value, variance


def white_jerk(h: float, joints: int, density: float) -> tuple[np.ndarray, np.ndarray]:
    """Transition and process covariance of [z, ż, z̈] (each block ``joints`` wide) over a step h under
    white jerk of ``density``: the exact discretization of z⃛ = w."""
    eye = np.eye(joints)
    transition = np.block([[eye, h * eye, h * h / 2 * eye], [0 * eye, eye, h * eye], [0 * eye, 0 * eye, eye]])
    moments = np.array([[h ** 5 / 20, h ** 4 / 8, h ** 3 / 6], [h ** 4 / 8, h ** 3 / 3, h ** 2 / 2],
                        [h ** 3 / 6, h ** 2 / 2, h]])
    return transition, density ** 2 * np.kron(moments, eye)


def kalman_smoother(transition: np.ndarray, noise: np.ndarray, start: np.ndarray, start_cov: np.ndarray,
                    steps: Sequence[Sequence[Observation]]) -> tuple[np.ndarray, np.ndarray]:
    """The Kalman filter's and the Rauch-Tung-Striebel smoother's means at every step of the linear
    model x_k = A x_{k−1} + w (Cov w = ``noise``), x_0 ~ N(``start``, ``start_cov``), with the scalar
    readings of each step applied one at a time."""
    count, size = len(steps), len(start)
    filtered, predicted = np.zeros((count, size)), np.zeros((count, size))
    filtered_cov, predicted_cov = np.zeros((count, size, size)), np.zeros((count, size, size))
    x, cov = np.array(start, float), np.array(start_cov, float)
    for k, observations in enumerate(steps):
        if k:
            x, cov = transition @ x, transition @ cov @ transition.T + noise
        predicted[k], predicted_cov[k] = x, cov
        for row, value, variance in observations:
            spread = cov @ row
            gain = spread / (row @ spread + variance)
            x, cov = x + gain * (value - row @ x), cov - np.outer(gain, spread)
        filtered[k], filtered_cov[k] = x, cov
    smoothed = filtered.copy()
    for k in range(count - 2, -1, -1):
        back = np.linalg.solve(predicted_cov[k + 1], transition @ filtered_cov[k]).T
        smoothed[k] = filtered[k] + back @ (smoothed[k + 1] - predicted[k + 1])
    return filtered, smoothed


def unit_rates(mech: Mechanism, q: np.ndarray, driven: Sequence[int]) -> list[np.ndarray]:
    """q̇ at pose q for a unit rate of each driven coordinate, the others' at rest (Φq q̇ = 0)."""
    return [solve_velocity_problem(mech, q, unit, driven) for unit in np.eye(len(driven))]


def rate_gains(mech: Mechanism, sensor, q: np.ndarray, rates: Sequence[np.ndarray]) -> np.ndarray:
    """The sensor's ideal reading per unit rate of each driven coordinate (``rates``: unit_rates at q)."""
    zeros = np.zeros(mech.n)
    return np.array([float(np.ravel(sensor.measure(State(0.0, q, qd, zeros, np.zeros(mech.m),
                                                         np.zeros(len(mech.actuators)))))[0])
                     for qd in rates])


def encoder_joint(mech: Mechanism, sensor, truth: Truth, driven: Sequence[int]) -> tuple[int, float]:
    """Which driven coordinate an encoder reads, and its mounting offset; MbstateError if it reads none
    one to one."""
    for i, coordinate in enumerate(driven):
        offsets = [float(np.ravel(sensor.measure(truth.state(k)))[0]) - truth.q[k, coordinate]
                   for k in range(0, len(truth.t), max(1, len(truth.t) // 50))]
        if np.ptp(wrap_angle(np.array(offsets) - offsets[0])) < 1e-9:
            return i, offsets[0]
    raise MbstateError(f"sensor {sensor.params.name!r}: an encoder that reads no driven coordinate one to one")


def torque_shares(mechanism: str, sensor_set: str, duration: float, densities: Sequence[float]
                  ) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """For each density: the causal and the smoothed torque RMSE over each torque's range."""
    matrix = load_matrix()
    scenario = matrix.scenarios.get(mechanism)
    if scenario is None or scenario.trajectory is None or sensor_set not in matrix.sets:
        raise MbstateError(f"no driven cell {mechanism!r} set {sensor_set!r} in {matrix.source}")
    mech = load_mechanism(scenario.mechanism)
    sensors = load_sensors(matrix.sensor_file(mechanism, sensor_set), mech)
    other = [s.params.name for s in sensors.sensors if s.params.kind not in ("encoder", "gyroscope")]
    if other:
        raise MbstateError(f"sensor {other[0]!r}: only encoders and gyroscopes are linear in the joints' motion")
    truth = truth_of(scenario, "driven", mech, sensors, duration)
    driven = [mech.index(name) for name in scenario.joints]
    p, h = len(driven), float(truth.t[1] - truth.t[0])
    gyros = [s for s in sensors.sensors if s.params.kind == "gyroscope"]
    encoders = {s.params.name: encoder_joint(mech, s, truth, driven)
                for s in sensors.sensors if s.params.kind == "encoder"}
    column = {s.params.name: i for i, s in enumerate(gyros)}
    by_name = {s.params.name: s for s in sensors.sensors}
    steps: list[list[Observation]] = [[] for _ in truth.t]
    unwrapped: dict[str, float] = {}
    rates: dict[int, list[np.ndarray]] = {}  # unit_rates at step k, shared by the gyroscopes read there
    for reading in simulate_readings(sensors.sensors, truth, SEED):
        k = int(round((reading.t - truth.t[0]) / h))
        sensor = by_name[reading.sensor]
        value, noise = float(np.ravel(reading.value)[0]), sensor.params.noise
        row = np.zeros(3 * p + len(gyros))
        if reading.sensor in encoders:
            joint, offset = encoders[reading.sensor]
            last = unwrapped.get(reading.sensor, truth.q[0, driven[joint]] + offset)
            value = last + float(wrap_angle(value - last))
            unwrapped[reading.sensor] = value
            row[joint] = 1.0
            steps[k].append((row, value - offset, noise.quantum ** 2 / 12))
        else:
            if k not in rates:
                rates[k] = unit_rates(mech, truth.q[k], driven)
            row[p:2 * p] = rate_gains(mech, sensor, truth.q[k], rates[k])
            row[3 * p + column[reading.sensor]] = 1.0
            steps[k].append((row, value, noise.density ** 2 * sensor.params.rate + noise.quantum ** 2 / 12))
    start = np.concatenate([truth.q[0, driven], truth.qd[0, driven], truth.qdd[0, driven], np.zeros(len(gyros))])
    start_cov = np.diag(np.concatenate([np.zeros(3 * p), [s.params.noise.bias_sigma ** 2 for s in gyros]]))
    drift = np.diag([s.params.noise.random_walk ** 2 * h for s in gyros])
    ranges = np.ptp(truth.f, axis=0)
    shares = {}
    for density in densities:
        transition, noise = white_jerk(h, p, density)
        transition = np.block([[transition, np.zeros((3 * p, len(gyros)))],
                               [np.zeros((len(gyros), 3 * p)), np.eye(len(gyros))]])
        noise = np.block([[noise, np.zeros((3 * p, len(gyros)))], [np.zeros((len(gyros), 3 * p)), drift]])
        estimates = kalman_smoother(transition, noise, start, start_cov, steps)
        shares[density] = tuple(
            np.sqrt(np.mean((torques(mech, scenario.joints, truth.t, x, p) - truth.f) ** 2, axis=0)) / ranges
            for x in estimates)
    return shares


def torques(mech: Mechanism, joints: Sequence[str], t: np.ndarray, x: np.ndarray, p: int) -> np.ndarray:
    """The drive torques of the motion [z, ż, z̈] = x[:, :3p] by inverse dynamics."""
    solved = inverse_dynamics(mech, joints, t, x[:, :p], x[:, p:2 * p], x[:, 2 * p:3 * p])
    return Truth.from_trajectory(mech, solved.trajectory).f


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mechanism")
    parser.add_argument("sensor_set", metavar="SET")
    parser.add_argument("--duration", type=float, default=3.0, help="sensor time [s] (default 3)")
    parser.add_argument("--density", type=float, nargs="+", default=[0.3, 1.0, 3.0, 10.0],
                        help="white-jerk densities D [rad/s³/√Hz]")
    args = parser.parse_args(argv)
    if not all(math.isfinite(d) and d > 0.0 for d in args.density) or not 0.0 < args.duration <= 600.0:
        parser.exit(2, "--density: each > 0; --duration: in (0, 600] s\n")
    one_blas_thread()
    try:
        shares = torque_shares(args.mechanism, args.sensor_set, args.duration, args.density)
    except MbstateError as error:
        parser.exit(2, f"{error}\n")
    print(f"{args.mechanism} set {args.sensor_set}, {args.duration:g} s: drive-torque RMSE, % of each range")
    for density, (causal, smoothed) in shares.items():
        print(f"D {density:<8g} causal {' / '.join(f'{100 * v:.2f}' for v in causal)} %   "
              f"smoothed {' / '.join(f'{100 * v:.2f}' for v in smoothed)} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
