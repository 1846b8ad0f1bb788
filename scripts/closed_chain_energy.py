"""Measure issue 38's conservation figures on the closed-chain examples: 10 s of free motion under
gravity, friction off, 1 ms steps (Runge-Kutta of order 6 on the KKT accelerations, the M-orthogonal
projection onto the loops each step, estimator.spatial.closed_dynamics.simulate); prints the energy
drift against the kinetic energy's range and the largest loop residual. Run from the repository root
with the checkout on the path (a script's own folder comes first on sys.path, so without it Python
imports whichever ``estimator`` is installed); each Delta run takes minutes:

    PYTHONPATH=. python scripts/closed_chain_energy.py [rssr|delta|five_bar_3d ...]

Starts (seeded): ``random``, the sidecar's start with the independent joints moved by up to 0.3 rad
and rates up to 2 rad/s; ``hanging``, the stable equilibrium (estimator.spatial.closed_statics) from
a hanging guess with the same random rates. The RSSR's test (tests/estimator/spatial/
test_closed_dynamics.py) runs the first of these; the others are too long for the test suite.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

from estimator.spatial import assembly, closed_dynamics, energy
from estimator.spatial.closed_statics import solve_statics
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import SpatialModel, load_spatial

URDF = Path(__file__).resolve().parents[1] / "configs" / "mechanisms" / "urdf"
HANGING = {"five_bar_3d": [-1.745, 0.823, -1.396, -0.823]}  # the five-bar's start mirrored below its pivots
RUNS = ("random", "hanging")
CHAINS = ("rssr", "delta", "five_bar_3d")


def measure(model: SpatialModel, start: str) -> str:
    rng = np.random.default_rng(3)
    free = assembly.independent_joints(model, model.initial)
    if start == "hanging":
        model = dataclasses.replace(model, initial=np.array(HANGING.get(model.name, model.initial)))
        q0 = solve_statics(model).q
    else:
        guess = model.initial.copy()
        guess[free] += rng.uniform(-0.3, 0.3, len(free))
        q0 = assembly.assemble(model, guess, free)
    qd0 = assembly.velocities(model, q0, rng.uniform(-2.0, 2.0, len(free)), free)
    began = time.perf_counter()
    run = closed_dynamics.simulate(model, q0, qd0, 1e-3, 10_000, friction=False)
    seconds = time.perf_counter() - began
    kinetic = np.array([energy.kinetic_energy(model, q, qd) for q, qd in zip(run.q, run.qd)])
    drift = np.max(np.abs(kinetic + [energy.potential_energy(model, q) for q in run.q]
                          - kinetic[0] - energy.potential_energy(model, run.q[0])))
    loops = max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in zip(run.q, run.qd))
    return (f"{model.name} ({start}): drift {drift:.3g} J, kinetic energy range {np.ptp(kinetic):.4g} J, ratio "
            f"{drift / np.ptp(kinetic):.3g}; max |Φ| {loops:.3g} m; max |q̇| {np.max(np.abs(run.qd)):.3g}; {seconds:.0f} s")


if __name__ == "__main__":
    for name in sys.argv[1:] or CHAINS:
        for start in RUNS:
            print(measure(load_spatial(URDF / f"{name}.urdf"), start), flush=True)
