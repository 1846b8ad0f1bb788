"""A long simulation in chunks (replay.simulation): the seams keep time order, seq and truth."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO

from estimator.dynamics.forward import ForwardOptions, integrate, simulate
from estimator.mechanism_file import load_mechanism
from replay.simulation import forward_truth, forward_truths, simulated_records
from sensors.config import load_sensors


def test_a_simulation_in_chunks_keeps_time_order_seq_and_truth(tmp_path) -> None:
    """replay.simulation.simulated_records over chunks of 0.05 s (the CLI's are 60 s): every truth
    sample once, every reading once with seq 0, 1, 2, … per sensor, all in time order across seams."""
    mech = load_mechanism(REPO / "configs/mechanisms/fourbar_crank.yaml")
    sensors = load_sensors(REPO / "configs/sensors/fourbar.yaml", mech).sensors
    chunks = list(forward_truths(mech, mech.q0, np.zeros(mech.n), 1e-3, 0.2, chunk_s=0.05))
    assert len(chunks) == 4 and all(a.t[-1] == pytest.approx(b.t[0]) for a, b in zip(chunks, chunks[1:]))
    whole = forward_truth(mech, mech.q0, np.zeros(mech.n), 1e-3, 0.2)
    np.testing.assert_allclose(chunks[-1].q[-1], whole.q[-1], atol=1e-6)  # restarts differ only slightly
    records = list(simulated_records(chunks, sensors, seed=3))
    times = [item.t for _, item in records]
    assert times == sorted(times)
    truth = [item.t for kind, item in records if kind == "truth"]
    np.testing.assert_allclose(truth, 1e-3 * np.arange(201), atol=1e-12)
    for sensor in sensors:
        seqs = [item.seq for kind, item in records if kind == "reading" and item.sensor == sensor.params.name]
        assert seqs == list(range(int(round(0.2 * sensor.params.rate)) + 1))


def test_the_truth_is_the_motion_not_the_integrator_at_a_slow_sample_step() -> None:
    """Sampled every 5 ms (a 200 Hz sensor set), the forward-dynamics truth is integrated at substeps of
    at most TRUTH_STEP: the literature four-bar's crank over 3 s agrees with an independent method
    (independent coordinates, RK4 at 0.1 ms) to 1e-4 rad, where ALi3 at the 5 ms step itself drifts off
    by more than 3e-4 rad."""
    mech = load_mechanism(REPO / "configs/mechanisms/fourbar_benchmark.yaml")
    crank = mech.coordinate_names.index("crank")
    reference, _, _ = integrate(mech, mech.q0, np.zeros(mech.n), 1e-4, 30000, ForwardOptions(method="rmatrix"))
    truth = forward_truth(mech, mech.q0, np.zeros(mech.n), 5e-3, 3.0)
    np.testing.assert_allclose(truth.q[:, crank], reference[::50, crank], atol=1e-4)
    coarse = simulate(mech, mech.q0, np.zeros(mech.n), 5e-3, 600)
    assert np.max(np.abs(coarse.q[:, crank] - reference[::50, crank])) > 3e-4
