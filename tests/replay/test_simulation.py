"""A long simulation in chunks (replay.simulation): the seams keep time order, seq and truth."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from conftest import REPO

from estimator.dynamics.forward import ForwardOptions, integrate, simulate
from estimator.mechanism_file import load_mechanism
from replay.simulation import forward_truth, forward_truths, simulated_records
from sensors.config import load_sensors
from sensors.virtual import simulate_readings


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


def test_a_chunk_is_held_as_arrays_and_its_records_made_as_they_are_taken() -> None:
    """replay.simulation.simulated_records keeps no record object of its own: while it is still
    yielding, none of the truth states and readings it yielded before is alive once the consumer lets
    it go (a chunk of a long run holds 60 s of arrays, not a Python object per sample); and the records
    are one chunk's truth and readings (sensors.virtual.simulate_readings), in time order."""
    mech = load_mechanism(REPO / "configs/mechanisms/fourbar_crank.yaml")
    sensors = load_sensors(REPO / "configs/sensors/fourbar.yaml", mech).sensors
    truth = forward_truth(mech, mech.q0, np.zeros(mech.n), 1e-3, 0.3)
    taken: list[weakref.ref] = []
    records = []
    for kind, item in simulated_records([truth], sensors, seed=5):
        if taken:
            assert taken[-1]() is None, f"record {len(taken)} is still held"
        taken.append(weakref.ref(item))
        records.append((kind, item.t, item.seq if kind == "reading" else None))
        del item
    expected = [("truth", float(t), None) for t in truth.t] + [
        ("reading", r.t, r.seq) for r in simulate_readings(sensors, truth, seed=5)]
    expected.sort(key=lambda record: (record[1], record[0] == "reading"))
    assert records == expected
