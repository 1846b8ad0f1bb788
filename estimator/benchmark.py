"""Benchmarks of the classical solvers: wall time per step, compilation excluded.

Each case runs once to compile, then ``repeat`` times; the median is reported (the machine's other
load shows up as spread, given as min-max).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from estimator.dynamics.forward import METHODS, ForwardOptions, consistent_initial_state, integrate
from estimator.dynamics.inverse import inverse_dynamics
from estimator.mechanism_file import load_mechanism

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "mechanisms"
FORWARD_CASES = {"four-bar": "fourbar.yaml", "pick-and-place": "pick_and_place.yaml"}


@dataclass(frozen=True)
class Timing:
    """Seconds per step (or per point): median and spread over repeats."""

    case: str
    per_step: float
    fastest: float
    slowest: float
    steps: int


def time_per_step(case: str, run: Callable[[], object], steps: int, repeat: int) -> Timing:
    """Run once to compile, then ``repeat`` timed runs of ``steps`` steps each."""
    run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) / steps)
    return Timing(case, float(np.median(samples)), min(samples), max(samples), steps)


def forward_benchmarks(t_end: float = 5.0, dt: float = 1e-3, repeat: int = 3) -> list[Timing]:
    """Each forward method on the four-bar and the pick-and-place robot, from rest."""
    steps = int(round(t_end / dt))
    timings = []
    for label, filename in FORWARD_CASES.items():
        mech = load_mechanism(CONFIGS / filename)
        q0, qd0 = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
        for method in METHODS:
            options = ForwardOptions(method=method, integrator="rk4")
            timings.append(time_per_step(f"{label} {method}{'' if method == 'ali3' else ' rk4'}",
                                         lambda: integrate(mech, q0, qd0, dt, steps, options), steps, repeat))
    return timings


def machine() -> str:
    """One line naming the machine and the date, to go with every reported figure."""
    return f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}"


def inverse_benchmarks(repeat: int = 3) -> list[Timing]:
    """Four-bar inverse dynamics along the upstream crank motion θ0 = 1.2 (1 − cos 2t), 2000 points
    at 5 ms (generated here in closed form, so the benchmark needs no reference files)."""
    mech = load_mechanism(CONFIGS / "fourbar_crank.yaml")
    t = 0.005 * np.arange(2000)
    pos, vel, acc = (1.2 * (1 - np.cos(2 * t)), 2.4 * np.sin(2 * t), 4.8 * np.cos(2 * t))

    def run() -> object:
        return inverse_dynamics(mech, ["theta0"], t, pos[:, None], vel[:, None], acc[:, None])

    return [time_per_step("four-bar inverse dynamics (classical)", run, len(t), repeat)]
