"""A long simulation in chunks (replay.simulation): the seams keep time order, seq and truth; a URDF
closed chain's truths (forward and inverse) are its closed-chain dynamics'."""

from __future__ import annotations

import re
import weakref

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.drive_trajectory import DriveTrajectory, hermite_resample, load_drive_trajectory
from estimator.dynamics.forward import ForwardOptions, integrate, simulate
from estimator.errors import MbstateError
from estimator.mechanism_file import load_mechanism
from estimator.spatial import closed_dynamics
from estimator.spatial.loops import loop_terms
from estimator.spatial.model import load_spatial
from replay.simulation import (TRUTH_STEP, forward_truth, forward_truths, inverse_truth, inverse_truths,
                               simulated_records)
from sensors.config import load_sensors
from sensors.virtual import simulate_readings

URDF = MECHANISMS / "urdf"


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


def test_a_closed_chains_forward_truth_is_its_kkt_motion_in_chunks() -> None:
    """The RSSR under a constant crank torque, 0.04 s in chunks of 0.02 s: the first chunk is
    closed_dynamics.simulate run directly at the truth's substep (TRUTH_STEP) sampled every dt, the
    restart keeps to it (1e-12), the loop stays closed (1e-12 m) and λ is the KKT system's."""
    model = load_spatial(URDF / "rssr.urdf")
    crank = model.joint_names.index("crank")
    q0, qd0 = closed_dynamics.start_state(model, np.zeros(model.dof), [], 3.0 * np.eye(model.dof)[crank], [crank])
    chunks = list(forward_truths(model, q0, qd0, 1e-3, 0.04, {"crank_motor": 0.1}, chunk_s=0.02))
    tau = model.actuation() @ [0.1]
    direct = closed_dynamics.simulate(model, q0, qd0, TRUTH_STEP, 160, tau=tau)
    assert len(chunks) == 2 and np.all(chunks[1].f == 0.1) and chunks[1].lam.shape == (21, 3)
    for name in ("q", "qd", "qdd", "lam"):
        assert np.array_equal(getattr(chunks[0], name), getattr(direct, name)[:81:4])
        np.testing.assert_allclose(getattr(chunks[1], name), getattr(direct, name)[80::4], rtol=0, atol=1e-10)
    truth = [(q, qd) for chunk in chunks for q, qd in zip(chunk.q, chunk.qd)]
    assert max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in truth) <= 1e-12
    np.testing.assert_allclose(chunks[1].lam[7], closed_dynamics.accelerations(
        model, chunks[1].q[7], chunks[1].qd[7], tau)[1], rtol=0, atol=1e-12)


def test_a_closed_chains_inverse_truth_is_the_planar_five_bars() -> None:
    """The five-bar as a 3D loop driven on configs/trajectories/five_bar.txt (left, right), 0.1 s in
    chunks of 0.05 s: its motors' forces are the planar five-bar's truth (1e-9 N·m, the planar package
    an independent model), its q and λ closed_dynamics.inverse's run directly, the loop closed."""
    model = load_spatial(URDF / "five_bar_3d.urdf")
    samples = load_drive_trajectory(REPO / "configs" / "trajectories" / "five_bar.txt", 2)
    truth = list(inverse_truths(model, ["left", "right"], samples, 1e-3, 0.1, chunk_s=0.05))
    planar = inverse_truth(load_mechanism(REPO / "configs" / "mechanisms" / "five_bar.yaml"), ["left", "right"],
                           samples, 1e-3, 0.1)
    f = np.concatenate((truth[0].f, truth[1].f[1:]))
    assert len(truth) == 2 and np.max(np.abs(f - planar.f)) <= 1e-9 * max(1.0, np.max(np.abs(planar.f)))
    times = samples.t[0] + 1e-3 * np.arange(101)
    driven = [model.joint_names.index("left"), model.joint_names.index("right")]
    direct = closed_dynamics.inverse(model, driven, times, *hermite_resample(samples.t, *samples.derivatives(),
                                                                             times)).trajectory
    for name in ("q", "lam"):
        np.testing.assert_allclose(np.concatenate((getattr(truth[0], name), getattr(truth[1], name)[1:])),
                                   getattr(direct, name), rtol=0, atol=1e-12)
    assert max(np.max(np.abs(loop_terms(model, q, qd).phi)) for q, qd in zip(direct.q, direct.qd)) <= 1e-12


@pytest.mark.parametrize("drives, problem", [
    (["left"], "five_bar_3d has 2 degrees of freedom but 1 driven joint was given"),
    (["left", "knee"], "--drive: 'knee' is not a movable joint of five_bar_3d"),
])
def test_a_closed_chains_drives_are_checked_before_any_chunk(drives, problem) -> None:
    model = load_spatial(URDF / "five_bar_3d.urdf")
    samples = DriveTrajectory(np.array([0.0, 0.5, 1.0]), np.full((3, len(drives)), 1.5))
    with pytest.raises(MbstateError, match=re.escape(problem)):
        inverse_truths(model, drives, samples, 1e-3, 0.1)
