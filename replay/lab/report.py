"""The lab's table (terminal, Markdown) and report (one HTML page with PNG plots, matplotlib Agg).

Table: one row per scenario × sensor set × estimator, the RMSE mean over the seeds, the worst of the
scored coordinates (the table names it): q, q̇, q̈ over the whole run and from ``after`` on, the
unknown forces' worst RMSE, where a scenario has a true payload the payload mass's largest relative
error from ``after`` on (the worst seed's), p50 of the cost per step [ms, measured under the
machine's load] and the cells that raised. Plots (first seed): per scenario × set, the first scored
coordinate's estimate against the truth with ±2σ bands where the estimator gives σ (the legend says
"no σ" where not), and its error over time (log scale); per scenario, bars of the whole-run q RMSE per estimator and set,
and, where estimators carry the gravity error state (``gravity_sigma``), the mass errors
(``mass_sigma``), the length errors (``length_sigma``), the friction (``friction_sigma``) or a payload
(``payload``), their g, μ, ℓ, c and m, c over time against the scenario's own errors.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from estimator.model import Mechanism
from replay.lab.cells import QUANTITIES, CellResult
from replay.lab.suite import Scenario, Suite

SYMBOLS = {"q": "q", "qd": "q̇", "qdd": "q̈"}


@dataclass(frozen=True)
class Row:
    """The seeds' mean of one scenario × set × estimator (NaN where no seed scored)."""

    scenario: str
    sensor_set: str
    estimator: str
    worst: str  # the scored coordinate of the worst q RMSE
    rmse: dict[str, float]  # quantity → whole-run RMSE, worst coordinate
    rmse_after: dict[str, float]
    forces: float
    payload: float  # the payload mass's largest relative error from ``after`` on, worst seed (NaN: none)
    cost_ms: float
    seeds: int
    errors: int


def _worst(values: dict[str, float]) -> tuple[str, float]:
    if not values:
        return "—", float("nan")
    name = max(values, key=lambda k: -np.inf if math.isnan(values[k]) else values[k])
    return name, values[name]


def rows(suite: Suite, results: Sequence[CellResult]) -> list[Row]:
    """The table's rows in the suite's order."""
    grouped: dict[tuple[str, str, str], list[CellResult]] = {}
    for r in results:
        grouped.setdefault((r.cell.scenario, r.cell.sensor_set, r.cell.estimator), []).append(r)
    table = []
    for (scenario, sensor_set, estimator), group in grouped.items():
        scored = [r for r in group if r.rmse]
        worst = _worst(scored[0].rmse["q"])[0] if scored else "—"

        def mean(key: str, quantity: str) -> float:
            values = [_worst(getattr(r, key)[quantity])[1] for r in scored]
            return float(np.mean(values)) if values else float("nan")

        forces = [_worst(r.rmse["forces"])[1] for r in scored if r.rmse["forces"]]
        payload = [r.payload_error for r in group if r.payload_error is not None]
        table.append(Row(scenario, sensor_set, estimator, worst, {q: mean("rmse", q) for q in QUANTITIES},
                         {q: mean("rmse_after", q) for q in QUANTITIES},
                         float(np.mean(forces)) if forces else float("nan"),
                         float(np.max(payload)) if payload else float("nan"),
                         float(np.mean([r.cost_ms["p50"] for r in group])), len(group),
                         sum(r.error is not None for r in group)))
    return table


def _number(value: float, spec: str = ".3g") -> str:
    return "—" if math.isnan(value) else format(value, spec)


def markdown_table(suite: Suite, table: Sequence[Row]) -> str:
    """The table as Markdown (also what the terminal prints)."""
    after = f"≥{suite.after:g} s"
    header = ["scenario", "set", "estimator", "coordinate"]
    for quantity in QUANTITIES:
        header += [f"{SYMBOLS[quantity]} RMSE", f"{SYMBOLS[quantity]} {after}"]
    payload = any(not math.isnan(row.payload) for row in table)  # the column only where a cell has one
    header += ["forces RMSE"] + [f"payload m error {after}"] * payload + ["cost p50 ms", "seeds", "errors"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in table:
        cells = [row.scenario, row.sensor_set, row.estimator, row.worst]
        for quantity in QUANTITIES:
            cells += [_number(row.rmse[quantity]), _number(row.rmse_after[quantity])]
        cells += [_number(row.forces)] + [_number(100.0 * row.payload, ".2f") + " %" * (not math.isnan(row.payload))] \
            * payload + [_number(row.cost_ms, ".3f"), str(row.seeds), str(row.errors)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _figures(suite: Suite, results: Sequence[CellResult], table: Sequence[Row], out: Path) -> list[tuple[str, str]]:
    """The PNG files (name, caption) of the module docstring, written to ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    first = [r for r in results if r.series is not None]
    for scenario in suite.scenarios.values():
        if not any(r.cell.scenario == scenario.name for r in results):
            continue
        name = scenario.scored[0]
        for sensor_set in scenario.sensor_sets:
            chosen = [r for r in first if r.cell.scenario == scenario.name and r.cell.sensor_set == sensor_set]
            if not chosen:
                continue
            fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
            truth = chosen[0].series
            top.plot(truth.t, truth.truth[:, 0], "k-", lw=1.5, label="truth")
            for r in chosen:
                s = r.series
                no_sigma = "" if s.sigma is not None else " (no σ)"
                line, = top.plot(s.t, s.estimate[:, 0], lw=1, label=f"{r.cell.estimator}{no_sigma}")
                if s.sigma is not None:
                    top.fill_between(s.t, s.estimate[:, 0] - 2 * s.sigma[:, 0], s.estimate[:, 0] + 2 * s.sigma[:, 0],
                                     color=line.get_color(), alpha=0.2, lw=0)
                bottom.semilogy(s.t, np.maximum(np.abs(s.estimate[:, 0] - s.truth[:, 0]), 1e-12), lw=1,
                                color=line.get_color(), label=r.cell.estimator)
            top.set_ylabel(name)
            top.set_title(f"{scenario.name}, {sensor_set}: estimate ±2σ against the truth (seed {chosen[0].cell.seed})")
            top.legend(fontsize=8, loc="best")
            bottom.set_ylabel(f"|error of {name}|")
            bottom.set_xlabel("t [s]")
            bottom.grid(True, which="both", alpha=0.3)
            figures.append(_saved(fig, plt, out / f"track_{scenario.name}_{sensor_set}.png",
                                  f"{scenario.name}, sensor set {sensor_set}: {name} and its error"))
        figures += _model_figure(scenario, [r for r in first if r.cell.scenario == scenario.name], out, plt)
        estimators = list(dict.fromkeys(r.cell.estimator for r in results))
        sets = list(scenario.sensor_sets)
        fig, axis = plt.subplots(figsize=(min(12.0, max(6.0, 0.5 * len(sets) * len(estimators))), 4))
        width = 0.8 / max(1, len(estimators))
        for j, estimator in enumerate(estimators):
            values = [next((r.rmse["q"] for r in table if (r.scenario, r.sensor_set, r.estimator)
                            == (scenario.name, s, estimator)), float("nan")) for s in sets]
            axis.bar(np.arange(len(sets)) + (j - (len(estimators) - 1) / 2) * width, values, width, label=estimator)
        axis.set_xticks(np.arange(len(sets)), sets, fontsize=8)
        axis.set_yscale("log")
        axis.set_ylabel("q RMSE, whole run (worst scored)")
        axis.set_title(f"{scenario.name}: RMSE per estimator and sensor set")
        axis.legend(fontsize=8)
        figures.append(_saved(fig, plt, out / f"rmse_{scenario.name}.png",
                              f"{scenario.name}: q RMSE per estimator and sensor set"))
    return figures


def _saved(fig, plt, path: Path, caption: str) -> tuple[str, str]:
    """Write ``fig`` to ``path`` (PNG) and close it; (file name, caption) for the report."""
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path.name, caption


def true_model_error(scenario: Scenario, name: str) -> float:
    """The scenario's own error of the model-error state ``name``: g = |g_truth| / |g_model| − 1, ℓ_b = body
    b's true length over the model's, less 1, μ_b = body b's share of the true total mass over its
    share of the model's, less 1 (the state keeps the model's total mass: estimator.mass.BodyMassTerms),
    or c_i = the truth's viscous friction coefficient on coordinate i less the model's; a payload's mass m
    and com offset c, the scenario's true payload (none: 0)."""
    if name.startswith("payload."):
        true = scenario.payload
        if true is None:
            return 0.0
        return true.mass if name == "payload.mass" else true.com["xyz".index(name[-1])]
    truth, model = scenario.truth_mechanism(), scenario.model_mechanism()
    if name == "gravity_error":
        return float(np.linalg.norm(truth.gravity) / np.linalg.norm(model.gravity) - 1.0)
    body = name.partition(".")[2]
    if name.startswith("friction."):
        return viscous_friction(truth, body) - viscous_friction(model, body)
    if name.startswith("length_error."):
        true_lengths, model_lengths = ({b.name: b.length for b in m.bodies} for m in (truth, model))
        return true_lengths[body] / model_lengths[body] - 1.0
    true_masses, model_masses = ({b.name: b.mass for b in m.bodies if b.mass > 0.0} for m in (truth, model))
    return (true_masses[body] / sum(true_masses.values())) / (model_masses[body] / sum(model_masses.values())) - 1.0


def viscous_friction(mech: Mechanism, coordinate: str) -> float:
    """The damping coefficient c of the mechanism's torsional springs on ``coordinate``, summed."""
    arrays, index = mech.arrays, mech.coordinate_names.index(coordinate)
    return float(arrays.torsion_par[arrays.torsion_idx == index, 1].sum())


MODEL_FIGURES = (("gravity", "gravity error g", lambda name: name == "gravity_error"),
                 ("masses", "mass error μ", lambda name: name.startswith("mass_error.")),
                 ("lengths", "length error ℓ", lambda name: name.startswith("length_error.")),
                 ("friction", "viscous friction c", lambda name: name.startswith("friction.")),
                 ("payload", "payload m [kg], c [m]", lambda name: name.startswith("payload.")))


def _model_figure(scenario: Scenario, results: Sequence[CellResult], out: Path, plt) -> list[tuple[str, str]]:
    """The estimators' model-error states over time (cells that estimate them), against the scenario's
    own (true_model_error): one figure for the gravity error g, one for the mass errors μ_b, one for
    the length errors ℓ_b (a plot per body) and one for the friction c_i (a plot per coordinate); none
    for a state no cell estimates."""
    figures = []
    for stem, label, picks in MODEL_FIGURES:
        names = sorted({name for r in results for name in r.series.model if picks(name)})
        if not names:
            continue
        curves = max(sum(name in r.series.model for r in results) for name in names) + 1
        height = max(1.0 + 2.5 * len(names), 0.5 + 0.16 * curves)  # room for the legend's entries
        fig = plt.figure(figsize=(11, height))
        grid = fig.add_gridspec(len(names), 2, width_ratios=(3, 1))
        axes = [fig.add_subplot(grid[0, 0])]
        axes += [fig.add_subplot(grid[k, 0], sharex=axes[0]) for k in range(1, len(names))]
        for name, axis in zip(names, axes):
            for r in (r for r in results if name in r.series.model):
                axis.plot(r.series.t, r.series.model[name], lw=1, label=f"{r.cell.sensor_set}, {r.cell.estimator}")
            true = true_model_error(scenario, name)
            axis.axhline(true, color="k", ls="--", lw=1, label="the scenario's")
            axis.set_ylabel(f"{label if len(names) == 1 else name.partition('.')[2]} (true {true:.4g})")
        # one legend beside the plots, in a column of its own (every plot has the same curves)
        legend = fig.add_subplot(grid[:, 1])
        legend.axis("off")
        legend.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="upper left")
        axes[-1].set_xlabel("t [s]")
        axes[0].set_title(f"{scenario.name}: the estimated {label} (seed {results[0].cell.seed})")
        figures.append(_saved(fig, plt, out / f"{stem}_{scenario.name}.png",
                              f"{scenario.name}: the estimated {label} against the scenario's"))
    return figures


def write_report(suite: Suite, results: Sequence[CellResult], table: Sequence[Row], out: Path, header: str) -> Path:
    """index.html and its PNGs in ``out``; the page's path."""
    out.mkdir(parents=True, exist_ok=True)
    figures = _figures(suite, results, table, out)
    body = [f"<h1>Lab: {html.escape(suite.source.name)}</h1>", f"<p>{html.escape(suite.description)}</p>",
            f"<p>{html.escape(header)}</p>", _html_table(suite, table)]
    failed = [r for r in results if r.error is not None]
    if failed:
        body.append("<h2>Errors</h2><ul>" + "".join(f"<li>{html.escape(r.cell.label())}: {html.escape(r.error)}</li>"
                                                   for r in failed) + "</ul>")
    for file, caption in figures:
        body.append(f"<figure><img src='{file}' alt='{html.escape(caption)}'><figcaption>{html.escape(caption)}"
                    "</figcaption></figure>")
    page = out / "index.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>mbstate lab</title><style>"
                    "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse;font-size:90%} "
                    "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}</style></head><body>"
                    + "\n".join(body) + "</body></html>\n", encoding="utf-8")
    return page


def _html_table(suite: Suite, table: Sequence[Row]) -> str:
    lines = markdown_table(suite, table).splitlines()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[:1] + lines[2:]]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cells[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in cells[1:])
    return f"<table><tr>{head}</tr>{body}</table>"
