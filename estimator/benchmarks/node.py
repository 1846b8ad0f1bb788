"""The online estimator on the four-bar: step latency, sustained input rate and accuracy.

Scenario (replay.scenarios, seeded): the four-bar under a varying motor torque, sampled by the
sensors of configs/sensors/fourbar.yaml (coupler gyro 1 kHz, crank encoder 4096 counts 1 kHz,
coupler accelerometer 500 Hz, rocker load cell 100 Hz, with their configured noise, biases,
quantization and time-stamp jitter). The estimator
(EstimatorConfig defaults: 1 kHz, lag 10, trapezoidal, unknown_forces [motor]) is fed every reading in
stamp order through ``add`` then ``advance(stamp)``, as the node and replay do.

Reported: latency per step (p50, p99, max) with the wall clock and the 1 ms budget, overruns
(``--repeat``: several runs of the default case), the machine's own stalls before and after the runs
(estimator.benchmarks.machine_stalls: a step hit by a stall longer than the budget less the step's
own cost overruns whatever it does), the largest input rate sustained (readings per second of wall
time when fed as fast as possible), RMSE of the crank angle and of the motor torque against the
truth (after the first 0.2 s of start-up transient) for the dynamics estimator and the
kinematics-only one, and the cost of ``publish_sigmas``. The RMSE comes from a replay of the same
readings with a FixedClock, i.e. with no step degraded: a coalesced step is solved with the readings
of the later steps of its update, so a timed run's accuracy moves with the machine's stalls.
``--realtime`` adds runs of the default case with each reading fed at its stamp, the load of a live
node: the machine idles between steps, so a step starts with colder caches, and a machine stall
falls inside a step less often.

    python -m estimator.benchmarks.node [--t-end 5] [--seed 1] [--repeat N] [--realtime]
"""

from __future__ import annotations

import argparse
import dataclasses
from functools import cache

import numpy as np

from estimator.argument_types import positive_int
from estimator.benchmarks import Stalls, Timing, machine, machine_stalls
from estimator.online.config import EstimatorConfig
from estimator.threads import one_blas_thread
from replay.clocks import FixedClock
from replay.scenarios import TRANSIENT, accuracy, feed, scenario


@dataclasses.dataclass(frozen=True)
class NodeRow:
    """One configuration: latency [ms], overruns, sustained input rate, accuracy."""

    case: str
    p50_ms: float
    p99_ms: float
    max_ms: float
    overruns: int
    readings_per_s: float
    crank_rmse: float
    torque_rmse: float
    counters: dict


@cache
def undegraded_accuracy(config: EstimatorConfig, t_end: float, seed: int) -> tuple[float, float]:
    """``accuracy`` of a run with a FixedClock: every step at level 0, whatever the machine does."""
    mech, sensors, truth, readings = scenario(t_end, seed)
    return accuracy(truth, feed(mech, sensors, config, readings, FixedClock())[0])


def run_case(case: str, config: EstimatorConfig, t_end: float, seed: int, realtime: bool = False) -> NodeRow:
    mech, sensors, _, readings = scenario(t_end, seed)
    estimates, counters, wall = feed(mech, sensors, config, readings, realtime=realtime)
    latency = 1e3 * np.array([e.latency for e in estimates])
    crank, torque = undegraded_accuracy(config, t_end, seed)
    return NodeRow(case, float(np.percentile(latency, 50)), float(np.percentile(latency, 99)), float(latency.max()),
                   counters["overruns"], len(readings) / wall, crank, torque, counters)


def cases() -> dict[str, EstimatorConfig]:
    base = EstimatorConfig(unknown_forces=("motor",))
    return {"dynamics (default)": base, "kinematics only": dataclasses.replace(base, dynamics=False),
            "dynamics, publish_sigmas": dataclasses.replace(base, publish_sigmas=True),
            "dynamics, lag 20": dataclasses.replace(base, lag=20),
            "dynamics, Adams-Moulton 3": dataclasses.replace(base, integrator_order=3)}


def deterministic(t_end: float = 1.0, seed: int = 1) -> bool:
    """Two replays with a FixedClock give identical estimates."""
    mech, sensors, _, readings = scenario(t_end, seed)
    config = EstimatorConfig(unknown_forces=("motor",))
    runs = [feed(mech, sensors, config, readings, FixedClock())[0] for _ in range(2)]
    return all(np.array_equal(a.q, b.q) and a.forces == b.forces for a, b in zip(*runs))


def node_benchmarks(repeat: int = 3, t_end: float = 2.0) -> list[Timing]:
    """Latency per step (median over ``repeat`` runs of the p50; spread of the p50s) of the dynamics and
    kinematics-only estimators, with p99, overruns, input rate and accuracy in the note."""
    timings = []
    for case, config in list(cases().items())[:2]:
        rows = [run_case(case, config, t_end, 1) for _ in range(repeat)]
        p50 = [r.p50_ms * 1e-3 for r in rows]
        best = rows[int(np.argsort(p50)[len(p50) // 2])]
        note = (f"p99 {best.p99_ms:.3f} ms, max {best.max_ms:.2f} ms, overruns {best.overruns}, "
                f"{best.readings_per_s:.0f} readings/s sustained; crank RMSE {best.crank_rmse:.2e} rad, "
                f"motor torque RMSE {best.torque_rmse:.3f} N·m")
        timings.append(Timing(f"four-bar online estimator, {case}", float(np.median(p50)), min(p50), max(p50),
                              best.counters["steps"], note))
    return timings


def format_rows(rows: list[NodeRow]) -> str:
    lines = [f"{'case':28s} {'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s} {'overrun':>7s} {'readings/s':>10s} "
             f"{'crank RMSE rad':>14s} {'torque RMSE N·m':>15s}"]
    lines += [f"{r.case:28s} {r.p50_ms:7.3f} {r.p99_ms:7.3f} {r.max_ms:7.2f} {r.overruns:7d} {r.readings_per_s:10.0f} "
              f"{r.crank_rmse:14.2e} {r.torque_rmse:15.3f}" for r in rows]
    return "\n".join(lines)


def stall_line(stalls: Stalls) -> str:
    return (f"machine stalls ({stalls.seconds:g} s of a loop reading the clock): {stalls.over_1ms} over 1 ms, "
            f"{stalls.over_half_ms} over 0.5 ms, longest {stalls.longest_ms:.2f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=5.0, help="simulated time [s] (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sensor noise (default 1)")
    parser.add_argument("--repeat", type=positive_int, default=1,
                        help="runs of the default case, each reported (default 1); the other cases run once")
    parser.add_argument("--realtime", action="store_true",
                        help="also run the default case --repeat times with readings fed at their stamps, "
                             "as a live node gets them (its readings/s column is then the scenario's own rate)")
    args = parser.parse_args(argv)
    one_blas_thread()
    mech, sensors, truth, readings = scenario(args.t_end, args.seed)
    print(f"four-bar online estimator, {args.t_end:g} s, {len(readings)} readings, seed {args.seed}; {machine()}")
    for sensor in sensors.sensors:
        noise = sensor.params.noise
        print(f"  {sensor.params.name}: {sensor.params.rate:g} Hz, σ = {noise.sample_sigma(sensor.params.rate):.3g} "
              f"{sensor.params.units}, bias {noise.bias:g}, jitter {noise.jitter:g} s")
    print(f"  encoder quantum 2π/4096 = {2 * np.pi / 4096:.3e} rad; RMSE after the first {TRANSIENT:g} s")
    print(stall_line(machine_stalls()))
    default, *others = cases().items()
    rows = [run_case(default[0], default[1], args.t_end, args.seed) for _ in range(args.repeat)]
    rows += [run_case(case, config, args.t_end, args.seed) for case, config in others]
    if args.realtime:
        rows += [run_case(f"{default[0]}, real time", default[1], args.t_end, args.seed, realtime=True)
                 for _ in range(args.repeat)]
    print(format_rows(rows))
    print(stall_line(machine_stalls()))
    print(f"replay with FixedClock deterministic: {deterministic()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
