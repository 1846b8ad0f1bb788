"""The independent coordinates chosen per step (estimator.online.partitions, kinematics.repartition):
the pivot check against the velocities of an independent formulation, the process rows across a switch,
and a file of points only against the same mechanism with its angle coordinate (issue 35)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gtsam
import numpy as np
import pytest
from coordinate_runs import angle_errors, without_free_angles

from estimator.factors.keys import X
from estimator.constraints import constraint_jacobian
from estimator.kinematics import (BodyAxes, motion_tangent, partition_quality, repartition, solve_position_problem, solve_velocity_problem,
                                  tangent_basis)
from estimator.mechanism_file import load_mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.partitions import SWITCH_RATIO
from replay.clocks import FixedClock
from sensors.config import build_sensors

ROOT = Path(__file__).resolve().parents[3]
FOURBAR = ROOT / "configs/mechanisms/fourbar_benchmark.yaml"
FIVE_BAR = ROOT / "configs/mechanisms/five_bar_benchmark.yaml"
ENCODER = {"sensors": {"crank_encoder": {"kind": "encoder", "body": "crank", "rate": 200,
                                         "noise": {"sigma": 0.0174533}}}}


def at_crank(full, angle: float) -> np.ndarray:
    """The four-bar with its crank angle held at ``angle``."""
    q = full.q0.copy()
    q[full.coordinate_names.index("crank")] = angle
    return solve_position_problem(full, q, [full.coordinate_names.index("crank")])


PENDULUM = ROOT / "configs/mechanisms/pendulum.yaml"


@pytest.mark.parametrize("angle", [-0.5, -1.5707963, -3.0, 1e-3])
def test_the_pivot_of_a_point_coordinate_is_the_other_one_s_row_entry(angle: float) -> None:
    """The pendulum without its angle: one row |p|² − L² = 0, Φq = [2 x1, 2 y1], so the pivot of I = {x1}
    is 2 |y1| and that of {y1} is 2 |x1| (closed form): x1 is no independent coordinate hanging straight
    down, y1 none at the horizontal."""
    _, points, _ = without_free_angles(PENDULUM)
    x1, y1 = np.cos(angle), np.sin(angle)  # L = 1 m
    jacobian = constraint_jacobian(points, np.array([x1, y1]))
    assert partition_quality(jacobian, [0]) == pytest.approx(2 * abs(y1), abs=1e-12)
    assert partition_quality(jacobian, [1]) == pytest.approx(2 * abs(x1), abs=1e-12)


def test_x1_is_replaced_near_the_crank_angle_zero_and_kept_elsewhere() -> None:
    """The points-only four-bar integrating x1: kept at θ = 1 and 0.5 (its pivot at 1 the reference),
    replaced near θ = 0, where its pivot falls under SWITCH_RATIO of it (x1 = 2 cos θ is at its extreme),
    by a coordinate along which the motion is large (its velocity at least half the largest, the
    velocities solved by least squares on the file with its crank angle, an independent formulation)."""
    full, points, _ = without_free_angles(FOURBAR)
    x1 = points.coordinate_names.index("x1")
    crank = full.coordinate_names.index("crank")

    def jacobian(angle: float) -> np.ndarray:
        return constraint_jacobian(points, at_crank(full, angle)[:points.n])

    kept, reference = repartition(jacobian(1.0), (x1,), None, SWITCH_RATIO)
    assert kept == (x1,)
    assert repartition(jacobian(0.5), (x1,), reference, SWITCH_RATIO)[0] == (x1,)
    assert partition_quality(jacobian(1e-3), (x1,)) < 1e-2 * reference
    (chosen,), _ = repartition(jacobian(1e-3), (x1,), reference, SWITCH_RATIO)
    qd = solve_velocity_problem(full, at_crank(full, 1e-3), np.array([1.0]), [crank])[:points.n]
    assert chosen != x1 and abs(qd[chosen]) >= 0.5 * np.max(np.abs(qd))


def body_angles(mech, q: np.ndarray) -> np.ndarray:
    """The direction of each body's first two points [rad] (arctan2, an independent formulation)."""
    z = mech.z(q)
    return np.array([np.arctan2(*(z[mech.point_z[b.points[1]]] - z[mech.point_z[b.points[0]]])[::-1])
                     for b in mech.bodies if len(b.points) >= 2])


@pytest.mark.parametrize("angle", [1.0, 1e-3, -2.0])
def test_the_process_noise_is_the_same_motion_s_whichever_coordinate_is_integrated(angle: float) -> None:
    """The velocity-level integrator row of z gets σ² = A² h (ż / |ω|)² + integrator_sigma², ω the bodies'
    angular velocities for the motion (the velocities solved by least squares on the file with its crank
    angle, ω by central differences of the bodies' directions): for the crank angle σ = A √h ω_crank / |ω|,
    for a point's coordinate its share of that motion; the same noise of the same motion in either file."""
    full, points, _ = without_free_angles(FOURBAR)
    config = EstimatorConfig(rate=200, acceleration_noise=0.3, integrator_sigma=1e-6)
    crank = full.coordinate_names.index("crank")
    q = at_crank(full, angle)
    qd = solve_velocity_problem(full, q, np.array([1.0]), [crank])
    step = 1e-6
    speed = np.linalg.norm((body_angles(full, q + step * qd) - body_angles(full, q - step * qd)) / (2 * step))
    for mech in (full, points):
        est = OnlineEstimator(mech, build_sensors(ENCODER, mech, "test"), config, FixedClock())
        est.partitions.choose(0, q[:mech.n])
        tangent = est.partitions.tangents[0]
        for i in range(mech.n):
            relation = est.drafter.process(2, (i,), [dataclasses.replace(est.layout, independent=(i,))] * 2)
            weighted = est.drafter.weighted(relation, (i,), tangent)
            row = relation.relation.blocks[1][1]  # the velocity row, on the newer state
            expected = np.hypot(config.acceleration_noise * np.sqrt(config.dt) * qd[i] / speed,
                                config.integrator_sigma)
            np.testing.assert_allclose(weighted.relation.blocks[1][1][row != 0] / row[row != 0], 1.0 / expected,
                                       rtol=1e-7)


def test_a_motion_that_turns_no_body_is_measured_by_its_points() -> None:
    """A pendulum's point free in the plane (no constraint, kinematics only: the tangent basis is I):
    its bob's motion turns the rod, the motion along the rod turns nothing; motion_tangent keeps
    Σ_b ω² + (radial speed / mean length)² = |v|² (closed form at the bob (L, 0): ω = ẏ / L)."""
    _, points, _ = without_free_angles(PENDULUM)
    q = np.array([1.0, 0.0])  # L = 1 m along x
    tangent = motion_tangent(points, BodyAxes.of(points), q, np.eye(2))
    length = BodyAxes.of(points).length
    for v in np.eye(2):
        qd = tangent @ v
        omega = (body_angles(points, q + 1e-6 * qd) - body_angles(points, q - 1e-6 * qd)) / 2e-6
        assert np.sum(omega ** 2) + (qd[0] / length) ** 2 == pytest.approx(1.0, rel=1e-6)


def test_a_switch_keeps_the_process_rows_on_the_shared_columns() -> None:
    """Across a switch the process rows integrate the old coordinates, which the new step's s carries
    beside the new ones: a state predicted from the one before (estimator.dynamics.prediction) satisfies
    them on s, as on the whole states (test_online_estimator, without a switch)."""
    _, points, _ = without_free_angles(FOURBAR)
    est = OnlineEstimator(points, build_sensors(ENCODER, points, "test"), EstimatorConfig(rate=200), FixedClock())
    old = tuple(int(i) for i in est.layout.integrated)
    new = tuple(i for i in range(points.n) if i not in old)[:1]
    layouts = [est.layout, dataclasses.replace(est.layout, independent=tuple(sorted(old + new)))]
    relation = est.drafter.process(2, old, layouts).relation
    rng = np.random.default_rng(7)
    est.states = {0: rng.normal(size=est.layout.size)}
    states = [est.states[0], est.drafter.predict(1, est.states)]
    residual = sum(block @ x[layout.shared] for block, x, layout in zip(relation.blocks, states, layouts))
    assert np.max(np.abs(residual - relation.rhs)) < 1e-12
    states[1][new[0]] += 1e-3  # a new coordinate's column is on s but in no integrator row
    assert np.max(np.abs(sum(block @ x[layout.shared] for block, x, layout in zip(relation.blocks, states, layouts))
                         - relation.rhs)) < 1e-12
    states[1][old[0]] += 1e-3
    values = gtsam.Values()
    for k, (x, layout) in enumerate(zip(states, layouts)):
        values.insert(X(k), x[layout.shared])
    assert relation.factor([X(0), X(1)]).error(values) > 0.0


def test_the_points_only_four_bar_estimates_as_well_as_the_one_with_its_crank_angle() -> None:
    """The literature's four-bar, crank encoder at 200 Hz, 2 s of free swing through crank angle 0 (seed
    1): the file without its angle coordinate (points only) no more than 10 % worse than the file with it,
    on the crank angle and rate RMSE, the angle measured from the estimated points (with one choice of
    coordinates for the whole run, 3× the rate RMSE). The crank angle is kept all along; the points-only
    run switches its coordinates as the crank turns."""
    errors = angle_errors(FOURBAR, ENCODER, EstimatorConfig(rate=200), 2.0, 1)
    (angle, rate), (points_angle, points_rate) = errors.full, errors.points
    assert points_angle[0] <= 1.1 * angle[0]
    assert points_rate[0] <= 1.1 * rate[0]
    assert errors.switches[0] == 0 and errors.switches[1] > 0


def test_the_points_only_five_bar_estimates_as_well_as_the_one_with_its_crank_angles() -> None:
    """The literature's five-bar, an encoder on each crank at 200 Hz, 5 s of free swing (seed 1): without
    its two crank angles (points only, switching its coordinates as the cranks turn) no more than 10 %
    worse on either crank's angle and rate RMSE than with them (docs/accuracy.md, "Files of points only":
    over the bar on the rates while the auto acceleration noise read the velocity changes through the
    integrated coordinates alone)."""
    encoders = {"sensors": {f"{side}_encoder": {"kind": "encoder", "body": f"{side}_crank", "rate": 200,
                                                 "noise": {"sigma": 0.0174533}} for side in ("left", "right")}}
    errors = angle_errors(FIVE_BAR, encoders, EstimatorConfig(rate=200), 5.0, 1)
    (angle, rate), (points_angle, points_rate) = errors.full, errors.points
    assert np.all(points_angle <= 1.1 * angle)
    assert np.all(points_rate <= 1.1 * rate)
    assert errors.switches[0] == 0 and errors.switches[1] > 0
