"""The start-up observability check (estimator.online.observability): against an independent computation on
the pendulum, the sensor sets that cannot see the state (a load cell alone, a gyroscope on the
pick-and-place robot's platform, a gyroscope without dynamics at rest) and those that can, the
estimator's warning and flag, the node's status field and ``mbstate check --sensors``."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import MECHANISMS, REPO
from scipy.integrate import solve_ivp

from estimator.cli import main
from estimator.kinematics import solve_velocity_problem
from estimator.mass import with_gravity
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism
from estimator.node.intake import Intake
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.observability import SAMPLES, WINDOW_STEPS, ObservabilityReport, observability
from estimator.online.startup import initial_state, start_anchor
from replay.clocks import FixedClock
from sensors.config import build_sensors
from sensors.messages import Reading

GYRO_NOISE = {"density": 8.7e-5, "random_walk": 2.0e-5, "bias_sigma": 0.02}
LOAD_CELL = {"kind": "load_cell", "link": "rocker", "rate": 100, "noise": {"density": 0.05}}
ENCODER = {"kind": "encoder", "body": "crank", "counts": 4096, "rate": 1000}
DYNAMICS, KINEMATICS = EstimatorConfig(), EstimatorConfig(dynamics=False)


def gyro(body: str, bias: bool = False) -> dict:
    return {"kind": "gyroscope", "body": body, "rate": 1000, "bias_state": bias, "noise": GYRO_NOISE}


def check(mech: Mechanism, sensors: dict, config: EstimatorConfig = DYNAMICS,
          velocity: dict[str, float] | None = None) -> ObservabilityReport:
    """The check from the assembled configuration, at rest or with the given independent velocities."""
    sensor_set = build_sensors({"sensors": sensors}, mech, "test")
    layout = OnlineEstimator(mech, sensor_set, config).layout
    x0, _ = initial_state(mech, layout, {}, {}, 0.0, start_anchor(mech))
    if velocity:
        n, held = mech.n, [mech.index(name) for name in velocity]
        x0[n:2 * n] = solve_velocity_problem(mech, x0[:n], np.array(list(velocity.values())), held)
    return observability(mech, sensor_set, layout, config, x0)


def unseen(report: ObservabilityReport) -> list[tuple[list[str], list[str]]]:
    """(component names, concerns) of each unobservable direction."""
    return [(list(d.components), list(d.concerns)) for d in report.unobservable]


def fourbar() -> Mechanism:
    return load_mechanism(MECHANISMS / "fourbar_crank.yaml")


@pytest.mark.parametrize("stiffness", [0.0, 1e6])
def test_singular_values_match_an_independent_computation_on_the_pendulum(stiffness: float,
                                                                          write_yaml: Callable[..., Path]) -> None:
    """A gyroscope with an estimated bias on the pendulum (θ̈ = −(g/L) cos θ − k (θ − θ0), all the mass
    m = 1 at the bob, L = 1), released at rest at θ0 = −30°: the same σ-weighted, σ_z-scaled matrix from the
    variational equation solved by scipy, [δθ̇(t)] = Φ(t) [δθ0, δθ̇0], plus the bias column. A torsional
    spring of k = 1e6 N·m/rad (1000 rad/s, 7 periods in the window) needs the propagation's substeps."""
    text = (MECHANISMS / "pendulum.yaml").read_text(encoding="utf-8")
    mech = load_mechanism(write_yaml(text + f"forces: [{{type: torsional_spring, coordinate: theta, k: {stiffness}, "
                                            "angle: deg2rad(-30)}]\n"))
    report = check(mech, {"gyro": gyro("rod", bias=True)})
    assert report.coordinates == ("q.theta", "qd.theta", "bias.gyro")
    g, interval = 9.81, WINDOW_STEPS * DYNAMICS.dt / SAMPLES

    def motion(t: float, y: np.ndarray) -> np.ndarray:
        theta, rate, phi = y[0], y[1], y[2:].reshape(2, 2)
        linear = np.array([[0.0, 1.0], [g * np.sin(theta) - stiffness, 0.0]])
        return np.concatenate(([rate, -g * np.cos(theta) - stiffness * (theta + np.pi / 6)], (linear @ phi).ravel()))

    times = interval * np.arange(SAMPLES)
    solution = solve_ivp(motion, (0.0, times[-1]), [-np.pi / 6, 0.0, 1.0, 0.0, 0.0, 1.0], t_eval=times,
                         rtol=1e-12, atol=1e-14, method="DOP853")
    sigma = GYRO_NOISE["density"] * np.sqrt(1000.0)
    rows = np.column_stack((solution.y[4] * DYNAMICS.position_sigma, solution.y[5] * DYNAMICS.velocity_sigma,
                            np.full(SAMPLES, GYRO_NOISE["bias_sigma"]))) * np.sqrt(1000.0 * interval) / sigma
    assert report.observable
    np.testing.assert_allclose(report.singular_values, np.linalg.svd(rows, compute_uv=False), rtol=1e-4)


def test_a_load_cell_alone_cannot_see_a_mechanism_that_nothing_loads_at_rest() -> None:
    """In a horizontal plane the four-bar at rest carries no force whatever its angle, and the link force
    grows with the square of the velocity: the load cell sees neither the angle nor the velocity."""
    report = check(with_gravity(fourbar(), np.zeros(2)), {"lc": LOAD_CELL})
    assert unseen(report) == [(["q.theta0"], ["position"]), (["qd.theta0"], ["velocity"])]
    assert report.singular_values[0] <= report.threshold
    assert "q.theta0 (position); qd.theta0 (velocity)" in report.summary()


def test_a_load_cell_is_no_sensor_for_the_kinematics_only_estimator() -> None:
    report = check(fourbar(), {"lc": LOAD_CELL}, KINEMATICS)
    assert report.ignored == ("lc",)
    assert unseen(report) == [(["q.theta0"], ["position"]), (["qd.theta0"], ["velocity"])]
    assert "(not usable by the estimator: lc)" in report.summary()


def test_under_gravity_the_load_cell_sees_the_angle_and_weakly_against_an_unknown_torque() -> None:
    """Under gravity the rocker's static tension depends on the crank angle, and its change on the
    velocity: seen. With the motor torque unknown the tension can be explained by the torque: angle and
    torque differ only by the second-order effect of the motion within the window, weakly seen, not flagged."""
    assert check(fourbar(), {"lc": LOAD_CELL}).observable
    report = check(fourbar(), {"lc": LOAD_CELL}, EstimatorConfig(unknown_forces=("motor",)))
    assert report.coordinates == ("q.theta0", "qd.theta0", "force.motor")
    values = report.singular_values
    assert report.observable and values[-1] < 1e-4 * values[0] and values[-1] > 100 * report.threshold


def test_a_gyroscope_on_the_platform_that_never_turns_sees_only_its_bias() -> None:
    mech = load_mechanism(MECHANISMS / "pick_and_place.yaml")
    report = check(mech, {"platform_gyro": gyro("platform", bias=True)})
    assert unseen(report) == [(["q.theta0"], ["position"]), (["q.theta1"], ["position"]),
                              (["qd.theta0"], ["velocity"]), (["qd.theta1"], ["velocity"])]
    assert report.coordinates[-1] == "bias.platform_gyro" and report.singular_values[0] > 1e6 * report.threshold
    assert all(d.components == {d.text().split()[0]: 1.0} for d in report.unobservable)


@pytest.mark.parametrize("config", [DYNAMICS, KINEMATICS, EstimatorConfig(unknown_forces=("motor",))])
def test_an_encoder_on_the_crank_sees_the_fourbar(config: EstimatorConfig) -> None:
    report = check(fourbar(), {"encoder": ENCODER}, config)
    assert report.observable and report.summary() == "observable over a 50 ms window"


@pytest.mark.parametrize(("config", "velocity", "observable"), [
    (DYNAMICS, 2.0, True),  # the rate ratio coupler/crank depends on the angle, and gravity pulls
    (DYNAMICS, 0.0, True),  # released at rest: gravity's pull on the angle shows in the rate
    (KINEMATICS, 2.0, True),  # moving: the rate ratio coupler/crank depends on the angle
    (KINEMATICS, 0.0, False),  # at rest without dynamics nothing ties the angle to a rate
])
def test_a_coupler_gyroscope_sees_the_angle_through_the_motion(config: EstimatorConfig, velocity: float,
                                                                observable: bool) -> None:
    """On the swinging four-bar with dynamics the gyroscope sees the crank angle (its rate follows gravity's
    pull, and the coupler's rate over the crank's depends on the angle) and, as the rate changes, its own
    bias; kinematics only it sees them only while the mechanism moves."""
    for bias in (False, True):
        report = check(fourbar(), {"gyro": gyro("coupler", bias)}, config, {"theta0": velocity})
        assert report.observable == observable
    if not observable:  # at rest the rate stays constant: a bias is one more velocity
        assert unseen(check(fourbar(), {"gyro": gyro("coupler")}, config)) == [(["q.theta0"], ["position"])]
        report = check(fourbar(), {"gyro": gyro("coupler", bias=True)}, config)
        assert unseen(report) == [(["q.theta0"], ["position"]), (["bias.gyro", "qd.theta0"], ["velocity", "bias"])]


def test_the_estimator_warns_once_and_flags_every_estimate(caplog: pytest.LogCaptureFixture) -> None:
    """Kinematics only, a coupler gyroscope at rest: the angle is unseen. The node's status carries the report."""
    mech = fourbar()
    sensors = build_sensors({"sensors": {"gyro": gyro("coupler")}}, mech, "test")
    estimator = OnlineEstimator(mech, sensors, KINEMATICS, FixedClock())
    intake = Intake(estimator, sensors.dimensions(), max_future_s=1.0, budget_s=1e-3)
    assert intake.status(1.0)["observability"] is None
    estimates = []
    with caplog.at_level(logging.WARNING, logger="estimator.online.estimator"):
        for k in range(80):  # past the 0.05 s start-up span
            estimates += intake.handle(Reading("gyro", 1e-3 * k, k, np.zeros(1)).to_map())
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "not observable" in warnings[0].getMessage()
    assert warnings[0].getMessage().endswith("q.theta0 (position)")
    assert len(estimates) > 30 and all("unobservable" in e.flags for e in estimates)
    status = intake.status(1.0)["observability"]
    assert status["observable"] is False and status["unobservable"][0]["components"] == {"q.theta0": 1.0}


def test_an_observable_estimator_neither_warns_nor_flags(caplog: pytest.LogCaptureFixture) -> None:
    mech = fourbar()
    sensors = build_sensors({"sensors": {"encoder": ENCODER}}, mech, "test")
    estimator = OnlineEstimator(mech, sensors, DYNAMICS, FixedClock())
    with caplog.at_level(logging.WARNING, logger="estimator.online.estimator"):
        estimates = []
        for k in range(70):  # past the 0.05 s start-up span
            estimator.add(Reading("encoder", 1e-3 * k, k, np.zeros(1)))
            estimates += estimator.advance(1e-3 * k)
    assert estimates and not caplog.records
    assert estimator.observability.observable and not any("unobservable" in e.flags for e in estimates)


def run_check(capsys: pytest.CaptureFixture, *args: object) -> tuple[int, str, str]:
    code = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_check_prints_the_observability_of_a_sensor_file(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(yaml.safe_dump({"sensors": {"platform_gyro": gyro("platform", bias=True)}}), encoding="utf-8")
    code, out, err = run_check(capsys, MECHANISMS / "pick_and_place.yaml", "--sensors", path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    start = lines.index(f"observability with the sensors of {path} (dynamics, grid 1000 Hz, 50 ms window, at rest "
                        "in the assembled configuration):")
    assert lines[start + 1] == "  directions checked: q.theta0, q.theta1, qd.theta0, qd.theta1, bias.platform_gyro"
    assert lines[start + 3:] == ["  NOT observable: 4 direction(s) the sensors cannot see:", "    q.theta0 (position)",
                                 "    q.theta1 (position)", "    qd.theta0 (velocity)", "    qd.theta1 (velocity)"]
    code, out, _ = run_check(capsys, MECHANISMS / "pick_and_place.yaml", "--sensors", path, "--json")
    info = json.loads(out)["observability"]
    assert code == 0 and info["observable"] is False and len(info["unobservable"]) == 4


def test_check_takes_the_estimator_settings_and_sensors_of_a_node_file(capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run_check(capsys, MECHANISMS / "fourbar_crank.yaml", "--config",
                             REPO / "configs" / "estimator" / "fourbar.yaml", "--json")
    info = json.loads(out)["observability"]
    assert code == 0 and info["observable"] and info["sensors"].endswith("fourbar.yaml")
    assert info["coordinates"][:3] == ["q.theta0", "qd.theta0", "force.motor"]  # unknown_forces: [motor]


def test_check_rejects_a_bad_sensor_file_in_one_line(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("sensors: {g: {kind: gyroscope, body: nowhere, rate: 1000, noise: {density: 1}}}\n",
                    encoding="utf-8")
    code, out, err = run_check(capsys, MECHANISMS / "fourbar_crank.yaml", "--sensors", path)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "nowhere" in err
