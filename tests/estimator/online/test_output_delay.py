"""``output_delay``: each step's estimate published with the update of the step d later, smoothed by
the readings after it (estimator.online.estimator). Scenario: replay.scenarios (four-bar, unknown
motor torque, 0.6 s, seeded)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import REPO

from estimator.errors import MbstateError
from estimator.node.config import load_node_config
from estimator.online.config import EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.filters.online_filter import OnlineFilter
from replay.clocks import FixedClock
from replay.replay import replay_readings
from replay.scenarios import accuracy, scenario

CONFIG = EstimatorConfig(unknown_forces=("motor",), startup_span=0.0)
DELAY = 7  # the most the default lag (10) and max_coalesce (4) allow


def run(config: EstimatorConfig, check=None, clock: FixedClock | None = None) -> list:
    """Every reading through add/advance, then the final advance; ``check(estimator, estimates)`` after
    each advance that returned estimates."""
    mech, sensors, _, readings = scenario(0.6, 1)
    est = OnlineEstimator(mech, sensors, config, clock or FixedClock())
    out: list = []
    for reading in readings:
        est.add(reading)
        new = est.advance(reading.t)
        if new and check:
            check(est, new)
        out += new
    return out + est.advance(readings[-1].t, final=True)


def test_every_step_is_published_once_in_order_the_held_ones_at_the_end() -> None:
    newest = run(CONFIG)
    delayed = run(dataclasses.replace(CONFIG, output_delay=DELAY))
    assert [e.step for e in delayed] == [e.step for e in newest] == list(range(len(newest)))
    assert [e.t for e in delayed] == [e.t for e in newest]


def test_while_coalescing_the_held_steps_stay_in_the_window() -> None:
    """Updates of 3.5 ms against a 1 ms budget coalesce up to max_coalesce steps: with the largest delay
    allowed each step is still published once, in order."""
    delayed = run(dataclasses.replace(CONFIG, output_delay=DELAY), clock=FixedClock(3.5e-3))
    assert [e.step for e in delayed] == list(range(len(run(CONFIG)))) and 4 in {e.update_steps for e in delayed}


def test_a_published_step_is_the_smoothers_estimate_at_the_update_d_steps_later() -> None:
    """Published with the update of step k + d: the window's estimate of X(k) then (its lift), so the
    readings of the d steps after k are in it; the start's updates publish nothing until step d."""
    seen: list = []

    def check(est: OnlineEstimator, new: list) -> None:
        assert est.next_step - 1 - new[-1].step == DELAY
        for e in new:
            x = est.estimate(e.step)
            assert np.allclose(e.q, x[:est.layout.n], rtol=0, atol=1e-12)
            assert np.isclose(e.forces["motor"], x[est.layout.force][0], rtol=0, atol=1e-9)
        seen.extend(new)

    run(dataclasses.replace(CONFIG, output_delay=DELAY), check)
    assert seen[0].step == 0 and len(seen) > 400


def test_the_smoothed_torque_is_closer_to_the_truth() -> None:
    _, _, truth, _ = scenario(0.6, 1)
    newest = accuracy(truth, run(CONFIG))
    delayed = accuracy(truth, run(dataclasses.replace(CONFIG, output_delay=DELAY)))
    assert delayed[1] < 0.95 * newest[1] and delayed[0] <= newest[0]  # observed 0.109 / 0.118 N·m, 8.2e-5 / 9.6e-5 rad


def test_a_delay_beyond_the_lag_and_a_filter_with_a_delay_are_errors() -> None:
    with pytest.raises(MbstateError, match=r"estimator.output_delay: must be in \[0, lag \+ 1 − max_coalesce = 7\] "
                                           r"steps \(the step it holds back must still be in the window"):
        EstimatorConfig(output_delay=8)
    assert EstimatorConfig(output_delay=10, max_coalesce=1).output_delay == 10
    mech, sensors, _, _ = scenario(0.1, 1)
    with pytest.raises(MbstateError, match="estimator.output_delay: the error_ekf filter publishes each step"):
        OnlineFilter(mech, sensors, EstimatorConfig(kind="error_ekf", output_delay=2))


def test_the_key_is_read_from_a_node_configuration_and_replay_writes_the_held_steps(tmp_path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text(f"mechanism: {REPO / 'configs/mechanisms/fourbar_crank.yaml'}\n"
                    f"sensors: {REPO / 'configs/sensors/fourbar.yaml'}\n"
                    "estimator: {lag: 20, output_delay: 17, unknown_forces: [motor]}\n", encoding="utf-8")
    config = load_node_config(path)
    assert config.estimator.output_delay == 17
    replayed = replay_readings(config, [r.to_map() for r in scenario(0.1, 1)[3]], FixedClock())
    assert replayed.error is None and [e.step for e in replayed.estimates] == list(range(replayed.counters["steps"]))
    path.write_text(path.read_text(encoding="utf-8").replace("output_delay: 17", "output_delay: 2.5"), encoding="utf-8")
    with pytest.raises(MbstateError, match="output_delay: must be a whole number"):
        load_node_config(path)
