"""What a causal estimate of a lab scenario can reach when its model is right but for its gravity (issue 11).

    python scripts/causal_reference.py [SUITE] [--scenario gravity_error] [--set coupler_gyro]
                                       [--seed 1 2] [--every 0.5]

A reference for the lab's newest-step figures, not an estimator: at the instants t = every,
2·every, … it fits the two numbers a release from rest leaves open — the start value of the
scenario's offset coordinate (the crank) and the magnitude of gravity — to every reading up to t
(weighted least squares, scipy.optimize.least_squares, each residual a forward simulation of the
scenario's model with those two numbers by replay.simulation.forward_truth, the truth's own
integrator, so the fitted model can match the truth exactly) and scores the fitted motion at t
against the truth. Each fit starts from the previous one (the first from the model's start and
gravity), so the instants must be close enough for that guess to lie in the right minimum (the
default is, on the four-bar). The RMSE over the instants from the suite's ``after`` on is what
an estimator that knows the model's structure, the release from rest and nothing else about the
start could publish at those instants from the readings so far; the fits cost seconds each.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from estimator.errors import MbstateError  # noqa: E402
from estimator.threads import one_blas_thread  # noqa: E402
from replay.lab.cells import simulated  # noqa: E402
from replay.lab.suite import Scenario, Suite, load_suite  # noqa: E402
from replay.simulation import forward_truth  # noqa: E402
from sensors.base import wrap_angle  # noqa: E402
from sensors.config import load_sensors  # noqa: E402
from sensors.virtual import Truth  # noqa: E402


@dataclass(frozen=True)
class Fit:
    """The fit at instant ``t``: start value of the coordinate, gravity's magnitude, error at t."""

    t: float
    start: float
    gravity: float
    error: float


def released(scenario: Scenario, start: float, gravity: float) -> Scenario:
    """The scenario whose model starts its coordinate at ``start`` with gravity of magnitude ``gravity``
    (the model's direction)."""
    truth = scenario.truth_mechanism()
    (name,) = scenario.offset
    direction = np.asarray(scenario.gravity if scenario.gravity is not None else truth.gravity, float)
    return dataclasses.replace(scenario, offset={name: start - truth.q0[truth.coordinate_names.index(name)]},
                               gravity=tuple(gravity * direction / np.linalg.norm(direction)))


def causal_fits(suite: Suite, scenario: Scenario, sensor_set: str, seed: int,
                instants: Sequence[float]) -> list[Fit]:
    """The fit at each instant (module docstring), from the readings of the lab's cell of that seed
    (replay.lab.cells.simulated, the suite's duration)."""
    truth, readings = simulated(suite, scenario, sensor_set, seed, suite.duration)
    truth_mech = scenario.truth_mechanism()
    path = scenario.sensor_sets[sensor_set]
    dt = float(truth.t[1] - truth.t[0])
    index = {s.params.name: i for i, s in enumerate(load_sensors(path, truth_mech).sensors)}
    (name,) = scenario.offset
    coordinate = truth_mech.coordinate_names.index(name)
    model = scenario.model_mechanism()
    guess = np.array([model.q0[coordinate], np.linalg.norm(model.gravity)])

    def motion(p: np.ndarray, until: float) -> tuple[list, Truth]:
        mech = released(scenario, p[0], p[1]).model_mechanism()
        return load_sensors(path, mech).sensors, forward_truth(mech, mech.q0, np.zeros(mech.n), dt, until)

    def residuals(p: np.ndarray, used: list) -> np.ndarray:
        sensors, run = motion(p, used[-1].t)
        rows = []
        for r in used:
            sensor = sensors[index[r.sensor]]
            h = sensor.measure(run.state(min(int(round((r.t - run.t[0]) / dt)), len(run.t) - 1)))
            rows.append(sensor.residual(h, r.value) / sensor.params.noise.sample_sigma(sensor.params.rate))
        return np.concatenate(rows)

    fits = []
    for t in instants:
        used = [r for r in readings if r.t <= t + 1e-9]
        guess = least_squares(residuals, guess, args=(used,), x_scale=[0.01, 0.1], diff_step=1e-7).x
        run = motion(guess, t)[1]
        error = run.q[-1, coordinate] - np.interp(t, truth.t, truth.q[:, coordinate])
        fits.append(Fit(t, float(guess[0]), float(guess[1]), float(wrap_angle(np.array([error]))[0])))
    return fits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default=str(REPO / "configs" / "lab" / "fourbar_benchmark.yaml"))
    parser.add_argument("--scenario", default="gravity_error")
    parser.add_argument("--set", default="coupler_gyro", dest="sensor_set")
    parser.add_argument("--seed", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between the instants")
    args = parser.parse_args(argv)
    one_blas_thread()
    try:
        suite = load_suite(args.suite)
    except MbstateError as error:
        parser.exit(2, f"{error}\n")
    scenario = suite.scenarios.get(args.scenario)
    if scenario is None or args.sensor_set not in scenario.sensor_sets or len(scenario.offset) != 1:
        parser.exit(2, f"{args.suite}: needs a scenario {args.scenario!r} with a sensor set {args.sensor_set!r} "
                       "and one coordinate in model.offset\n")
    if not 0.0 < args.every <= suite.duration:
        parser.exit(2, f"--every: must be in (0, {suite.duration}] s, got {args.every}\n")
    instants = np.arange(1, int(round(suite.duration / args.every)) + 1) * args.every
    print(f"{args.suite}: {args.scenario}, {args.sensor_set}; fits every {args.every} s")
    for seed in args.seed:
        fits = causal_fits(suite, scenario, args.sensor_set, seed, instants)
        for fit in fits:
            print(f"seed {seed} t={fit.t:5.2f} s  start {fit.start:.6f}  gravity {fit.gravity:.5f}  error {fit.error:+.2e}")
        late = np.array([f.error for f in fits if f.t >= suite.after])
        print(f"seed {seed}: RMSE from {suite.after} s {np.sqrt(np.mean(late ** 2)):.3g} rad ({len(late)} instants)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
