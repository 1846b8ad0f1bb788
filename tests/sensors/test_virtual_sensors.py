"""Virtual sensors against closed forms, and each imperfection against its statistics.

Pendulum (point mass m on a massless rod of length L, released at rest from θ0, θ from +x): energy
gives θ̇² = 2 g (sin θ0 − sin θ)/L; the equation of motion θ̈ = −(g/L) cos θ makes the tangential
specific force at the bob vanish, and the radial one is f_x = −L θ̇² + g sin θ = g (3 sin θ − 2 sin θ0)
(the rod's tension over m, pointing to the hinge). Four-bar: a crank encoder reads the crank angle.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import MECHANISMS

from estimator.dynamics.forward import ForwardOptions, simulate
from estimator.errors import MbstateError
from estimator.kinematics import solve_position_problem, solve_velocity_problem
from estimator.mechanism_file import load_mechanism
from estimator.spatial.model import load_spatial
from estimator.spatial.simulate import simulate as simulate_spatial
from sensors.accelerometer import Accelerometer, AccelerometerParams
from sensors.base import NoiseParams, SensorParams, wrap_angle
from sensors.config import build_sensors
from sensors.encoder import Encoder, RotaryParams
from sensors.gyroscope import Gyroscope, GyroscopeParams
from sensors.load_cell import LoadCell, LoadCellParams
from sensors.virtual import Truth, simulate_readings, virtual_readings

G, L, M = 9.81, 1.0, 1.0


@cache
def pendulum() -> tuple:
    mech = load_mechanism(MECHANISMS / "pendulum.yaml")
    q0 = solve_position_problem(mech, mech.q0)
    trajectory = simulate(mech, q0, np.zeros(mech.n), 1e-3, 1000, ForwardOptions(method="lagrange"))
    return mech, Truth.from_trajectory(mech, trajectory)


def params(name: str, kind: str, rate: float, units: str, **noise: float) -> SensorParams:
    return SensorParams(name=name, kind=kind, rate=rate, units=units, noise=NoiseParams(**noise))


def values(readings) -> np.ndarray:
    return np.array([r.value for r in readings])


def test_pendulum_gyroscope_reads_the_energy_rate() -> None:
    mech, truth = pendulum()
    gyro = Gyroscope(params("g", "gyroscope", 1000, "rad/s"), mech, GyroscopeParams(mech.bodies[0]))
    readings = virtual_readings(gyro, truth, np.random.default_rng(0))
    theta = truth.q[:, 2]
    speed = np.sqrt(np.maximum(2.0 * G * (np.sin(theta[0]) - np.sin(theta)) / L, 0.0))
    # RK4 at 1 ms with projection: energy drift ~1e-9; sqrt near the turning points amplifies it.
    np.testing.assert_allclose(np.abs(values(readings)[:, 0]), speed, atol=1e-4)
    np.testing.assert_allclose(values(readings)[:, 0], truth.qd[:, 2], atol=1e-9)  # ω = θ̇


def test_pendulum_accelerometer_at_the_bob_reads_the_tension_only() -> None:
    mech, truth = pendulum()
    sensor = Accelerometer(params("a", "accelerometer", 500, "m/s^2"), mech,
                           AccelerometerParams(mech.bodies[0], (L, 0.0)))
    readings = virtual_readings(sensor, truth, np.random.default_rng(0))
    theta = truth.q[::2, 2]
    expected = np.column_stack((G * (3.0 * np.sin(theta) - 2.0 * np.sin(theta[0])), np.zeros_like(theta)))
    # q̈ from the integrator's own equations: exact up to the energy drift (1e-9) and projection.
    np.testing.assert_allclose(values(readings), expected, atol=1e-6)


def test_mounting_angle_rotates_the_reading() -> None:
    mech, truth = pendulum()
    plain = Accelerometer(params("a", "accelerometer", 100, "m/s^2"), mech, AccelerometerParams(mech.bodies[0], (L, 0)))
    turned = Accelerometer(params("a", "accelerometer", 100, "m/s^2"), mech,
                           AccelerometerParams(mech.bodies[0], (L, 0), angle=np.pi / 2))
    state = truth.state(300)
    fx, fy = plain.measure(state)
    np.testing.assert_allclose(turned.measure(state), [fy, -fx], atol=1e-12)


def test_pendulum_load_cell_reads_tension_positive() -> None:
    mech, truth = pendulum()
    row = mech.constraint_names.index("rod: distance 0-1")
    cell = LoadCell(params("c", "load_cell", 100, "N"), mech, LoadCellParams(row=row, length=L))
    theta = truth.q[::10, 2]
    tension = M * G * (2.0 * np.sin(theta[0]) - 3.0 * np.sin(theta))
    assert np.all(tension > 0)
    np.testing.assert_allclose(values(virtual_readings(cell, truth, np.random.default_rng(0)))[:, 0], tension,
                               atol=1e-6)


@cache
def fourbar() -> tuple:
    mech = load_mechanism(MECHANISMS / "fourbar_crank.yaml")
    q0 = solve_position_problem(mech, mech.q0)
    qd0 = solve_velocity_problem(mech, q0, [6.0], [4])  # crank at 6 rad/s: several turns in 2 s
    trajectory = simulate(mech, q0, qd0, 1e-3, 2000, ForwardOptions(method="lagrange"))
    return mech, Truth.from_trajectory(mech, trajectory)


@pytest.mark.parametrize("turns", ["single", "multi"])
def test_fourbar_crank_encoder_reads_the_crank_angle(turns: str) -> None:
    mech, truth = fourbar()
    crank = mech.bodies[0]
    encoder = Encoder(params("e", "encoder", 1000, "rad"), mech, RotaryParams(crank, counts=4096, turns=turns))
    readings = values(virtual_readings(encoder, truth, np.random.default_rng(0)))[:, 0]
    theta = truth.q[:, 4]
    assert theta.max() - theta.min() > 4 * np.pi, "the crank must turn over for the wrap test"
    quantum = 2 * np.pi / 4096
    expected = wrap_angle(theta) if turns == "single" else np.unwrap(wrap_angle(theta))
    # rounding to the nearest count: error at most half a count (plus float slack)
    np.testing.assert_array_less(np.abs(wrap_angle(readings - expected)), 0.5 * quantum + 1e-12)
    if turns == "single":
        assert readings.max() <= np.pi and readings.min() > -np.pi - 1e-12
    else:
        np.testing.assert_allclose(readings - theta, 0.0, atol=0.5 * quantum + 1e-12)


def test_white_noise_and_bias_random_walk_follow_the_datasheet() -> None:
    mech, truth = fourbar()
    rate, density, walk = 1000.0, 1e-3, 1e-2
    gyro = Gyroscope(params("g", "gyroscope", rate, "rad/s", density=density), mech, GyroscopeParams(mech.bodies[1]))
    ideal = np.array([gyro.measure(truth.state(i)) for i in range(len(truth.t))])[:, 0]
    noise = values(virtual_readings(gyro, truth, np.random.default_rng(1)))[:, 0] - ideal
    # 2001 samples: the sample σ is within 3 standard errors (σ/√(2N) ≈ 1.6 %) of N √rate
    assert np.std(noise) == pytest.approx(density * np.sqrt(rate), rel=0.05)
    biased = Gyroscope(params("g", "gyroscope", rate, "rad/s", random_walk=walk, bias=0.3), mech,
                       GyroscopeParams(mech.bodies[1]))
    short = Truth(*(getattr(truth, k)[:201] for k in ("t", "q", "qd", "qdd", "lam", "f")))
    ends = [values(virtual_readings(biased, short, np.random.default_rng(seed)))[-1, 0] - ideal[200]
            for seed in range(400)]
    # bias after 0.2 s: 0.3 + a walk of variance K² t (200 increments of K²/rate); 400 runs: the
    # sample σ has a standard error of 3.5 %, the mean one of σ/20
    assert np.mean(ends) == pytest.approx(0.3, abs=4 * walk * np.sqrt(0.2 / 400))
    assert np.std(ends) == pytest.approx(walk * np.sqrt(0.2), rel=0.12)


def test_quantization_saturation_and_jitter() -> None:
    mech, truth = fourbar()
    gyro = Gyroscope(params("g", "gyroscope", 500, "rad/s", quantum=0.01, saturation=(-2.0, 2.5), jitter=1e-4),
                     mech, GyroscopeParams(mech.bodies[1]))
    readings = virtual_readings(gyro, truth, np.random.default_rng(2))
    z = values(readings)[:, 0]
    ideal = np.array([gyro.measure(truth.state(i)) for i in range(0, len(truth.t), 2)])[:, 0]
    assert ideal.min() < -2.0 and ideal.max() > 2.5, "the motion must exceed the range"
    np.testing.assert_allclose(z, np.clip(np.round(ideal / 0.01) * 0.01, -2.0, 2.5), atol=1e-12)
    np.testing.assert_allclose(np.round(z / 0.01) * 0.01, z, atol=1e-12)
    stamps = np.array([r.t for r in readings])
    offsets = stamps - truth.t[::2]
    assert np.std(offsets) == pytest.approx(1e-4, rel=0.1)  # 1001 samples: standard error 2.2 %
    assert [r.seq for r in readings] == list(range(len(readings)))


def test_readings_are_seeded_and_merged_in_stamp_order() -> None:
    mech, truth = fourbar()
    sensors = [Gyroscope(params("g", "gyroscope", 1000, "rad/s", density=1e-3, jitter=1e-4), mech,
                         GyroscopeParams(mech.bodies[1])),
               Encoder(params("e", "encoder", 100, "rad", density=1e-3), mech, RotaryParams(mech.bodies[0]))]
    first, again = simulate_readings(sensors, truth, seed=5), simulate_readings(sensors, truth, seed=5)
    assert [(r.sensor, r.t, float(r.value[0])) for r in first] == [(r.sensor, r.t, float(r.value[0])) for r in again]
    assert [r.t for r in first] == sorted(r.t for r in first)
    alone = simulate_readings(sensors[:1], truth, seed=5)
    assert [r.t for r in alone] == [r.t for r in first if r.sensor == "g"]


def test_trajectory_coarser_than_the_sensor_period_is_rejected() -> None:
    mech, truth = fourbar()
    gyro = Gyroscope(params("g", "gyroscope", 2000, "rad/s", density=1e-3), mech, GyroscopeParams(mech.bodies[1]))
    with pytest.raises(MbstateError, match="longer than the sensor period"):
        virtual_readings(gyro, truth, np.random.default_rng(0))


def test_urdf_sensors_read_a_spatial_truth_with_bias_quantum_and_saturation() -> None:
    """The Panda falling from rest for 0.2 s (RK4 on ABA, 1 ms, no drive torque): a virtual IMU, joint
    torque and force-torque sensor read h(x(t_k)) + bias, rounded to the quantum and clipped, per axis."""
    model = load_spatial(MECHANISMS / "urdf" / "panda.urdf")
    motion = simulate_spatial(model, np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.7]), np.zeros(model.dof), 1e-3, 200)
    truth = Truth(t=motion.t, q=motion.q, qd=motion.qd, qdd=motion.qdd, lam=np.zeros((201, 0)),
                  f=np.zeros((201, len(model.actuated))))
    noise = {"bias": 0.02, "quantum": 0.01, "saturation": [-5.0, 5.0]}
    config = {"gyro": {"kind": "gyroscope", "link": "panda_hand", "rate": 500, "noise": noise},
              "accel": {"kind": "accelerometer", "link": "panda_hand", "xyz": [0, 0, 0.1], "rate": 500, "noise": noise},
              "tau": {"kind": "joint_torque", "joint": "panda_joint2", "rate": 500, "noise": noise},
              "ft": {"kind": "force_torque", "joint": "panda_joint7", "rate": 500, "noise": noise}}
    sensors = build_sensors({"sensors": config}, model, "panda.yaml").sensors
    for sensor in sensors:
        z = values(virtual_readings(sensor, truth, np.random.default_rng(1)))
        ideal = np.array([sensor.measure(truth.state(i)) for i in range(0, 201, 2)])
        assert z.shape == ideal.shape == (101, sensor.dimension)
        np.testing.assert_allclose(z, np.clip(np.round((ideal + 0.02) / 0.01) * 0.01, -5.0, 5.0), atol=1e-12)
    # undriven and without friction, a joint passes no torque (the drive's is zero): the reading is its bias
    np.testing.assert_allclose(values(virtual_readings(sensors[2], truth, np.random.default_rng(1))), 0.02, atol=1e-12)
    wrist = values(virtual_readings(sensors[3], truth, np.random.default_rng(1)))
    assert np.abs(wrist).max() == 5.0  # the hand's weight saturates the force
