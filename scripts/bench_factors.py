"""Linearization cost of every factor: median µs per ``linearize`` call of the GTSAM factor, and of
the bare numpy error function with Jacobians (the difference is GTSAM's Python-callback overhead).

    python scripts/bench_factors.py [--calls 3000] [mechanism.yaml ...]

Default mechanisms: the four-bar with a crank motor and the pick-and-place robot from
configs/mechanisms. States are consistent (position, velocity and acceleration problems solved
with the actuated coordinates as drivers).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gtsam
import numpy as np

from estimator import kinematics
from estimator.factors.adapter import gtsam_factor
from estimator.mechanism_file import load_mechanism
from estimator.model import Mechanism

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the catalog and the numpy reference forms are test material
from factor_catalog import ONLINE_BIAS, FactorSpec, factor_catalog  # noqa: E402

CONFIGS = REPO / "configs" / "mechanisms"
DEFAULTS = (CONFIGS / "fourbar_crank.yaml", CONFIGS / "pick_and_place.yaml")
DT = 0.005


def median_us(call, calls: int) -> float:
    """Median wall time of ``call()`` [µs] over ``calls`` timed calls, after a warm-up."""
    for _ in range(50):
        call()
    samples = np.empty(calls)
    for i in range(calls):
        start = time.perf_counter_ns()
        call()
        samples[i] = time.perf_counter_ns() - start
    return float(np.median(samples)) * 1e-3


def state(mech: Mechanism) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """An assembled configuration and variables of two steps keyed by kind (see catalog)."""
    rng = np.random.default_rng(0)
    drivers = [a.coordinate for a in mech.actuators]
    q = kinematics.solve_position_problem(mech, mech.q0, drivers)
    qd = kinematics.solve_velocity_problem(mech, q, rng.normal(size=len(drivers)), drivers)
    qdd = kinematics.solve_acceleration_problem(mech, q, qd, rng.normal(size=len(drivers)), drivers)
    dof = kinematics.degrees_of_freedom(mech, q)
    values = {"q": q, "v": qd, "a": qdd, "l": rng.normal(size=mech.m), "f": rng.normal(size=len(drivers)),
              "zdd": rng.normal(size=dof)}
    values["x"] = np.concatenate((q, qd, qdd, values["f"], np.zeros(ONLINE_BIAS), values["l"]))
    values.update({kind + step: value.copy() for kind, value in list(values.items()) for step in ("+", "-", "--")})
    return q, values


def measure(spec: FactorSpec, values: dict[str, np.ndarray], calls: int) -> tuple[int, float, float]:
    """(error dimension, µs per linearize, µs per numpy error+Jacobians)."""
    inputs = [values[v] for v in spec.variables]
    rows = spec.fn(*inputs, jac=False)[0].shape[0]
    keys = spec.keys(2)  # step 2: the variables of steps 0 … 3
    graph_values = gtsam.Values()
    for key, value in zip(keys, inputs):
        graph_values.insert(key, value)
    factor = gtsam_factor(gtsam.noiseModel.Isotropic.Sigma(rows, 0.1), keys, spec.fn)
    return rows, median_us(lambda: factor.linearize(graph_values), calls), median_us(lambda: spec.fn(*inputs), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mechanisms", nargs="*", type=Path, default=list(DEFAULTS))
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per factor (default 3000)")
    args = parser.parse_args()
    tables = {}
    for path in args.mechanisms:
        mech = load_mechanism(path)
        q, values = state(mech)
        tables[path.stem] = (mech, {s.name: measure(s, values, args.calls) for s in factor_catalog(mech, q, DT)})
    names = list(dict.fromkeys(name for _, table in tables.values() for name in table))
    header = "| factor | " + " | ".join(f"{stem} (n={mech.n}, m={mech.m}): rows, linearize µs, numpy µs"
                                        for stem, (mech, _) in tables.items()) + " |"
    print(header)
    print("|---|" + "---|" * len(tables))
    for name in names:
        cells = [f"{t[name][0]}, {t[name][1]:.1f}, {t[name][2]:.1f}" if name in t else "—" for _, t in tables.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
