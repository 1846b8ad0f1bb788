"""Classical solvers: forward dynamics per method and inverse dynamics, time per step."""

from __future__ import annotations

import numpy as np

from estimator.benchmarks import CONFIGS, Timing, time_per_step
from estimator.dynamics.forward import METHODS, ForwardOptions, consistent_initial_state, integrate
from estimator.dynamics.inverse import inverse_dynamics
from estimator.mechanism_file import load_mechanism

FORWARD_CASES = {"four-bar": "fourbar.yaml", "pick-and-place": "pick_and_place.yaml"}


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


def inverse_benchmarks(repeat: int = 3) -> list[Timing]:
    """Four-bar inverse dynamics along the upstream crank motion θ0 = 1.2 (1 − cos 2t), 2000 points
    at 5 ms (generated here in closed form, so the benchmark needs no reference files)."""
    mech = load_mechanism(CONFIGS / "fourbar_crank.yaml")
    t = 0.005 * np.arange(2000)
    pos, vel, acc = (1.2 * (1 - np.cos(2 * t)), 2.4 * np.sin(2 * t), 4.8 * np.cos(2 * t))

    def run() -> object:
        return inverse_dynamics(mech, ["theta0"], t, pos[:, None], vel[:, None], acc[:, None])

    return [time_per_step("four-bar inverse dynamics (classical)", run, len(t), repeat)]
