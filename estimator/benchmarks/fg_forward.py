"""Factor-graph forward dynamics: the paper's Table 1 analogue and the solver choices.

Four-bar of Listing 1 (configs/mechanisms/fourbar.yaml), released at rest with the crank at 0,
dt = 1 ms, 5 s. Reference: Lagrange multipliers + Baumgarte + projection, RK4 at 0.1 ms. Per row:
RMSE of q [mm] over all coordinates and steps, max |Φ| [m], mean and p99 wall time per step [ms],
mean over the first and the last simulated second (flat cost = no growth with simulated time),
solver recoveries. Timings are single runs on a shared machine: repeat for medians.

    python -m estimator.benchmarks.fg_forward [--quick]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import cache

import numpy as np

from estimator.benchmarks import CONFIGS, Timing, machine, time_per_step
from estimator.constraints import constraint_values
from estimator.dynamics.forward import ForwardOptions, consistent_initial_state, integrate
from estimator.graph_dynamics.forward import FgOptions, simulate_fg
from estimator.mechanism_file import load_mechanism
from estimator.smoother import ORDERINGS, SmootherOptions

DT = 1e-3


@dataclass(frozen=True)
class FgRow:
    """One configuration's accuracy and cost."""

    case: str
    rmse_mm: float
    max_phi: float
    mean_ms: float
    p99_ms: float
    first_second_ms: float
    last_second_ms: float
    recoveries: int


@cache
def _case(t_end: float) -> tuple:
    mech = load_mechanism(CONFIGS / "fourbar.yaml")
    q0, qd0 = consistent_initial_state(mech, mech.q0, np.zeros(mech.n))
    steps = int(round(t_end / DT))
    reference = integrate(mech, q0, qd0, DT / 10, steps * 10, ForwardOptions(method="lagrange"))[0][::10]
    return mech, q0, qd0, steps, reference


def run_case(case: str, t_end: float, formulation: str, lag: int, options: FgOptions = FgOptions()) -> FgRow:
    """Simulate one configuration and measure it against the reference."""
    mech, q0, qd0, steps, reference = _case(t_end)
    result = simulate_fg(mech, q0, qd0, DT, steps, formulation, lag, options)
    ms = 1e3 * result.step_seconds
    second = min(steps, int(round(1.0 / DT)))
    q = result.trajectory.q
    return FgRow(case, 1e3 * float(np.sqrt(np.mean((q - reference) ** 2))),
                 max(float(np.max(np.abs(constraint_values(mech, x)))) for x in q), float(ms.mean()),
                 float(np.percentile(ms, 99)), float(ms[:second].mean()), float(ms[-second:].mean()), result.recoveries)


def table1(t_end: float = 5.0, lags: tuple[int, ...] = tuple(range(2, 11))) -> list[FgRow]:
    """N_w = 2 … 10 in dependent and independent coordinates (default orders: AM3 dc, AM4 ic)."""
    return [run_case(f"fg-{f} N_w={lag}", t_end, f, lag) for f in ("dc", "ic") for lag in lags]


def integrator_orders(t_end: float = 5.0) -> list[FgRow]:
    """Adams-Moulton order 2 (trapezoidal), 3, 4 at N_w = 2."""
    return [run_case(f"fg-{f} AM{p}", t_end, f, 2, FgOptions(order=p)) for f in ("dc", "ic") for p in (2, 3, 4)]


def solver_choices(t_end: float = 5.0, batch_t_end: float = 0.5) -> list[FgRow]:
    """fg-dc at N_w = 2: factorization, relinearization, extra iterations (iSAM2), and elimination
    orderings of the batch (Levenberg-Marquardt) fixed-lag smoother over a shorter run."""
    variants = {
        "iSAM2 CHOLESKY, relin 1e-3 (default)": SmootherOptions(),
        "iSAM2 QR": SmootherOptions(factorization="QR"),
        "iSAM2 relin threshold 1e-8": SmootherOptions(relinearize_threshold=1e-8),
        "iSAM2 relin 1e-8 + 1 extra iteration": SmootherOptions(relinearize_threshold=1e-8, extra_iterations=1),
    }
    rows = [run_case(name, t_end, "dc", 2, FgOptions(solver=solver)) for name, solver in variants.items()]
    for ordering in ORDERINGS:
        solver = SmootherOptions(backend="batch", ordering=ordering)
        rows.append(run_case(f"batch LM {ordering} ({batch_t_end:g} s)", batch_t_end, "dc", 2, FgOptions(solver=solver)))
    return rows


def fg_forward_benchmarks(t_end: float = 1.0, repeat: int = 3) -> list[Timing]:
    """Wall time per step (whole run, prediction and read-back included) of fg-dc and fg-ic at N_w = 2,
    for ``mbstate bench``."""
    mech, q0, qd0, steps, _ = _case(t_end)
    return [time_per_step(f"four-bar fg-{f} N_w=2", lambda f=f: simulate_fg(mech, q0, qd0, DT, steps, f, 2),
                          steps, repeat) for f in ("dc", "ic")]


def format_rows(title: str, rows: list[FgRow]) -> str:
    """A plain-text table."""
    lines = [title, f"{'case':42s} {'RMSE mm':>10s} {'max|Φ| m':>9s} {'mean ms':>8s} {'p99 ms':>7s} "
                    f"{'1st s':>6s} {'last s':>6s} {'recov':>5s}"]
    lines += [f"{r.case:42s} {r.rmse_mm:10.3g} {r.max_phi:9.1e} {r.mean_ms:8.3f} {r.p99_ms:7.3f} "
              f"{r.first_second_ms:6.3f} {r.last_second_ms:6.3f} {r.recoveries:5d}" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 s runs and N_w in (2, 5, 10)")
    args = parser.parse_args(argv)
    t_end, lags = (1.0, (2, 5, 10)) if args.quick else (5.0, tuple(range(2, 11)))
    print(f"four-bar, dt = 1 ms, {t_end:g} s from rest; {machine()}")
    print(format_rows("Table 1 analogue (time per step, ms)", table1(t_end, lags)))
    print(format_rows("Integrator order (N_w = 2)", integrator_orders(t_end)))
    print(format_rows("Solver choices (fg-dc, N_w = 2)", solver_choices(t_end, 0.2 if args.quick else 0.5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
