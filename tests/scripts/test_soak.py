"""scripts/soak.py: its per-window measures against direct computations, and its smallest run
(a few seconds of sensor time through simulate, replay and the live node) end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from conftest import REPO, load_script

SCRIPT = REPO / "scripts" / "soak.py"
soak = load_script("soak")


def test_latency_percentile_is_numpys_within_a_bin() -> None:
    rng = np.random.default_rng(3)
    seconds = rng.lognormal(np.log(3e-4), 0.6, 20_000)
    series = soak.Series(bucket_s=1.0)
    for k, value in enumerate(seconds):
        series.add_latency(k * 1e-3, value)  # 20 buckets
    window = series.window(20.0, last=False)
    for q, key in ((50, "latency_p50_ms"), (99, "latency_p99_ms")):
        assert abs(window[key] / (1e3 * np.percentile(seconds, q)) - 1.0) < 0.011


def test_errors_streamed_in_chunks_are_the_direct_rmse(monkeypatch) -> None:
    monkeypatch.setattr(soak, "CHUNK", 7)
    rng = np.random.default_rng(4)
    t_truth = np.arange(0.0, 2.0, 1e-2)
    truth = np.column_stack([t_truth, 3.0 * np.sin(t_truth), np.cos(t_truth)])
    t = np.arange(0.005, 2.2, 1e-2)  # between the truth's samples, and past its end
    estimates = np.column_stack([t, 3.0 * np.sin(t) + rng.normal(0, 1e-3, t.size),
                                 np.cos(t) + rng.normal(0, 0.1, t.size)])
    series = soak.Series(bucket_s=0.1)
    soak.add_errors(series, soak.chunked(estimates.tolist()), soak.chunked(truth.tolist()))
    inside = t <= t_truth[-1]
    crank = estimates[inside, 1] - np.interp(t[inside], t_truth, truth[:, 1])
    torque = estimates[inside, 2] - np.interp(t[inside], t_truth, truth[:, 2])
    first, last = series.window(1.0, last=False), series.window(1.0, last=True)
    early = t[inside] < 1.0
    assert np.isclose(first["crank_rmse_rad"], np.sqrt(np.mean(crank[early] ** 2)))
    assert np.isclose(first["torque_rmse_nm"], np.sqrt(np.mean(torque[early] ** 2)))
    late = (t[inside] >= 1.0) & (t[inside] < 2.0)  # the last window: the ten buckets up to the last estimate
    assert (last["from_s"], last["to_s"]) == (1.0, 2.0)
    assert np.isclose(last["torque_rmse_nm"], np.sqrt(np.mean(torque[late] ** 2)))


def test_smallest_run_end_to_end(tmp_path) -> None:
    report = tmp_path / "soak.json"
    subprocess.run([sys.executable, str(SCRIPT), "--hours", "0.0006", "--live-minutes", "0.03",
                    "--window-minutes", "0.005", "--live-window-minutes", "0.005", "--sample-s", "0.5",
                    "--dir", str(tmp_path / "work"), "--json", str(report)], check=True, capture_output=True)
    figures = json.loads(report.read_text())
    assert figures["simulate"]["sensor_s"] == 0.0006 * 3600 and figures["simulate"]["peak_rss_mb"] > 0
    replay, live = figures["replay"], figures["live"]
    assert replay["steps"] > 1500 and replay["smoother_failures"] == 0 and not replay["stopped_early"]
    assert live["counters"]["received"] == live["published"] > 0 and live["smoother_failures"] == 0
    for part in (replay, live):
        for window in ("first", "last"):
            measures = part["windows"][window]
            assert 0 < measures["crank_rmse_rad"] < 1e-2 and measures["latency_p99_ms"] > 0
