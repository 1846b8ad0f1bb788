"""What a causal estimate of a lab scenario can reach when its model is right but for the numbers it fits (issue 11).

    python scripts/causal_reference.py [SUITE] [--scenario gravity_error] [--set coupler_gyro]
                                       [--seed 1 2] [--every 0.5] [--every-before S]
                                       [--free NAME=SIGMA ...] [--start-sigma S] [--gravity-sigma S]

A reference for the lab's newest-step figures, not an estimator: at the instants t (every
``--every-before`` s up to the suite's ``after``, every ``--every`` s from there) it fits the numbers
a release from rest leaves open — the start value of the scenario's offset coordinate (the crank),
the magnitude of gravity and any mechanism parameters freed with ``--free`` (the lab's
``model.parameters``: masses, lengths) — to every reading up to t (weighted least squares,
scipy.optimize.least_squares, each residual a forward simulation of the scenario's model with those
numbers by replay.simulation.forward_truth, the truth's own integrator, so the fitted model can match
the truth exactly) and scores the fitted motion at t against the truth. With priors (``--free``'s
relative σ, ``--start-sigma`` [rad or m] about the model's start, ``--gravity-sigma`` relative to the
model's gravity, as the estimator's ``mass_sigma``, ``length_sigma``, ``position_sigma`` and
``gravity_sigma`` state them) the fit is the maximum a posteriori estimate an estimator with those
priors and a window over the whole run would publish. Each fit starts from the previous one (the
first from the model), so the instants must be close enough for that guess to lie in the right
minimum (the default is, on the four-bar). The Jacobian is central differences with steps of 1e-5
of each number's size: the integrator's Newton tolerance puts noise of about a fifth of the
derivative into differences of 1e-7. The RMSE over the instants from ``after`` on, and over the whole
run (each instant standing for the span since the one before), is what an estimator that knows the
model's structure, the release from rest and nothing else about the start could publish at those
instants from the readings so far; the fits cost seconds each, minutes with parameters freed.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from estimator.errors import MbstateError  # noqa: E402
from estimator.threads import one_blas_thread  # noqa: E402
from estimator.yaml_file import read_yaml  # noqa: E402
from replay.lab.cells import simulated  # noqa: E402
from replay.lab.suite import Scenario, Suite, load_suite  # noqa: E402
from replay.simulation import forward_truth  # noqa: E402
from sensors.base import wrap_angle  # noqa: E402
from sensors.config import load_sensors  # noqa: E402
from sensors.virtual import Truth  # noqa: E402

DIFFERENCE_STEP = 1e-5  # central differences' step, relative to each fitted number's size (module docstring)


@dataclass(frozen=True)
class Fit:
    """The fit at instant ``t``: start value of the coordinate, gravity's magnitude, the freed
    parameters' values, the error at t."""

    t: float
    start: float
    gravity: float
    error: float
    parameters: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Priors:
    """σ of the fitted numbers (module docstring): ``start`` absolute, ``gravity`` and each of
    ``parameters`` (name → σ) relative to the model's value; None: no prior on that number."""

    start: float | None = None
    gravity: float | None = None
    parameters: dict[str, float] = field(default_factory=dict)


def released(scenario: Scenario, start: float, gravity: float,
             parameters: Mapping[str, float] | None = None) -> Scenario:
    """The scenario whose model starts its coordinate at ``start`` with gravity of magnitude ``gravity``
    (the model's direction) and the mechanism ``parameters`` given (the rest as the scenario has them)."""
    truth = scenario.truth_mechanism()
    (name,) = scenario.offset
    direction = np.asarray(scenario.gravity if scenario.gravity is not None else truth.gravity, float)
    return dataclasses.replace(scenario, offset={name: start - truth.q0[truth.coordinate_names.index(name)]},
                               gravity=tuple(gravity * direction / np.linalg.norm(direction)),
                               parameters={**scenario.parameters, **(parameters or {})})


def model_parameters(scenario: Scenario, names: Sequence[str]) -> np.ndarray:
    """The model's values of the mechanism parameters ``names`` (the scenario's, else the file's numbers)."""
    written = read_yaml(scenario.mechanism).get("parameters") or {}
    values = []
    for name in names:
        value = scenario.parameters.get(name, written.get(name))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MbstateError(f"--free {name}: not a number among {scenario.mechanism}'s parameters "
                               f"or the scenario's model.parameters")
        values.append(float(value))
    return np.array(values)


def causal_fits(suite: Suite, scenario: Scenario, sensor_set: str, seed: int,
                instants: Sequence[float], priors: Priors = Priors()) -> list[Fit]:
    """The fit at each instant (module docstring), from the readings of the lab's cell of that seed
    (replay.lab.cells.simulated, the suite's duration)."""
    truth, readings = simulated(suite, scenario, sensor_set, seed, suite.duration)
    truth_mech = scenario.truth_mechanism()
    path = scenario.sensor_sets[sensor_set]
    dt = float(truth.t[1] - truth.t[0])
    index = {s.params.name: i for i, s in enumerate(load_sensors(path, truth_mech).sensors)}
    (name,) = scenario.offset
    coordinate = truth_mech.coordinate_names.index(name)
    model, freed = scenario.model_mechanism(), list(priors.parameters)
    prior = np.concatenate([[model.q0[coordinate], np.linalg.norm(model.gravity)],
                            model_parameters(scenario, freed)])
    sizes = np.abs(prior) + (prior == 0.0)
    relative = [priors.gravity, *priors.parameters.values()]
    sigma = np.array([np.nan if priors.start is None else priors.start,
                      *(np.nan if s is None else s * abs(v) for s, v in zip(relative, prior[1:]))])
    held = np.isfinite(sigma)

    def motion(p: np.ndarray, until: float) -> tuple[list, Truth]:
        mech = released(scenario, p[0], p[1], dict(zip(freed, p[2:]))).model_mechanism()
        return load_sensors(path, mech).sensors, forward_truth(mech, mech.q0, np.zeros(mech.n), dt, until)

    def residuals(p: np.ndarray, used: list) -> np.ndarray:
        sensors, run = motion(p, used[-1].t)
        rows = [(p[held] - prior[held]) / sigma[held]]
        for r in used:
            sensor = sensors[index[r.sensor]]
            h = sensor.measure(run.state(min(int(round((r.t - run.t[0]) / dt)), len(run.t) - 1)))
            rows.append(sensor.residual(h, r.value) / sensor.params.noise.sample_sigma(sensor.params.rate))
        return np.concatenate(rows)

    def jacobian(p: np.ndarray, used: list) -> np.ndarray:
        steps = DIFFERENCE_STEP * sizes
        return np.column_stack([(residuals(p + e, used) - residuals(p - e, used)) / (2.0 * e[k])
                                for k, e in enumerate(np.diag(steps))])

    fits, guess = [], prior.copy()
    for t in instants:
        used = [r for r in readings if r.t <= t + 1e-9]
        guess = least_squares(residuals, guess, jac=jacobian, args=(used,),
                              x_scale=np.where(held, sigma, sizes * 0.01)).x
        run = motion(guess, t)[1]
        error = run.q[-1, coordinate] - np.interp(t, truth.t, truth.q[:, coordinate])
        fits.append(Fit(t, float(guess[0]), float(guess[1]), float(wrap_angle(np.array([error]))[0]),
                        dict(zip(freed, map(float, guess[2:])))))
    return fits


def instants(duration: float, after: float, every: float, every_before: float) -> np.ndarray:
    """Every ``every_before`` s up to ``after``, then every ``every`` s to ``duration``."""
    before = np.arange(1, int(round(after / every_before)) + 1) * every_before
    start = before[-1] if len(before) else 0.0
    later = start + np.arange(1, int(round((duration - start) / every)) + 1) * every
    return np.round(np.concatenate([before, later]), 9)


def rmse_over_run(fits: Sequence[Fit]) -> float:
    """RMSE of the errors at the instants, each weighted by the span since the previous instant."""
    t = np.array([f.t for f in fits])
    spans, errors = np.diff(np.concatenate([[0.0], t])), np.array([f.error for f in fits])
    return float(np.sqrt(np.sum(spans * errors ** 2) / np.sum(spans)))


def parse_free(items: Sequence[str]) -> dict[str, float]:
    """``NAME=SIGMA`` items → {name: σ}; a bad item is a ValueError naming it."""
    free = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            sigma = float(value)
        except ValueError:
            sigma = math.nan
        if not name or not math.isfinite(sigma) or sigma <= 0.0:
            raise ValueError(f"--free {item}: expected NAME=SIGMA with SIGMA > 0 (relative)")
        free[name] = sigma
    return free


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default=str(REPO / "configs" / "lab" / "fourbar_benchmark.yaml"))
    parser.add_argument("--scenario", default="gravity_error")
    parser.add_argument("--set", default="coupler_gyro", dest="sensor_set")
    parser.add_argument("--seed", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between the instants")
    parser.add_argument("--every-before", type=float, help="seconds between the instants before the suite's "
                        "after (default: --every)")
    parser.add_argument("--free", nargs="+", default=[], metavar="NAME=SIGMA",
                        help="mechanism parameters fitted too, with their prior's relative σ")
    parser.add_argument("--start-sigma", type=float, help="prior σ of the start about the model's [rad or m]")
    parser.add_argument("--gravity-sigma", type=float, help="prior σ of gravity, relative to the model's")
    args = parser.parse_args(argv)
    one_blas_thread()
    try:
        suite = load_suite(args.suite)
        free = parse_free(args.free)
    except (MbstateError, ValueError) as error:
        parser.exit(2, f"{error}\n")
    scenario = suite.scenarios.get(args.scenario)
    if scenario is None or args.sensor_set not in scenario.sensor_sets or len(scenario.offset) != 1:
        parser.exit(2, f"{args.suite}: needs a scenario {args.scenario!r} with a sensor set {args.sensor_set!r} "
                       "and one coordinate in model.offset\n")
    every_before = args.every if args.every_before is None else args.every_before
    for option, value in (("--every", args.every), ("--every-before", every_before)):
        if not 0.0 < value <= suite.duration:
            parser.exit(2, f"{option}: must be in (0, {suite.duration}] s, got {value}\n")
    for option, value in (("--start-sigma", args.start_sigma), ("--gravity-sigma", args.gravity_sigma)):
        if value is not None and not (math.isfinite(value) and value > 0.0):
            parser.exit(2, f"{option}: must be > 0, got {value}\n")
    priors = Priors(args.start_sigma, args.gravity_sigma, free)
    try:
        model_parameters(scenario, list(free))
    except MbstateError as error:
        parser.exit(2, f"{error}\n")
    times = instants(suite.duration, suite.after, args.every, every_before)
    print(f"{args.suite}: {args.scenario}, {args.sensor_set}; {len(times)} fits"
          + (f"; freed {', '.join(free)}" if free else ""))
    for seed in args.seed:
        fits = causal_fits(suite, scenario, args.sensor_set, seed, times, priors)
        for fit in fits:
            freed = "".join(f"  {name} {value:.5g}" for name, value in fit.parameters.items())
            print(f"seed {seed} t={fit.t:5.2f} s  start {fit.start:.6f}  gravity {fit.gravity:.5f}{freed}"
                  f"  error {fit.error:+.2e}", flush=True)
        late = np.array([f.error for f in fits if f.t >= suite.after])
        print(f"seed {seed}: RMSE over the run {rmse_over_run(fits):.3g} rad, from {suite.after} s "
              f"{np.sqrt(np.mean(late ** 2)):.3g} rad ({len(late)} instants)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
