"""A long simulation in chunks (replay.simulation): the seams keep time order, seq and truth."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO

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
