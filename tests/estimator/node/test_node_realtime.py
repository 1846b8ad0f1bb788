"""The node loop's real-time options (estimator.node.realtime; ``mbstate run / demo --priority --cpu``): the
values checked with one line, the thread's cores and policy set inside the block and put back after it, and
one warning instead of an error where SCHED_FIFO is not permitted."""

from __future__ import annotations

import logging
import os
import threading

import pytest
from conftest import cli_exit_code
from estimator.errors import MbstateError
from estimator.node.realtime import LoopScheduling, cpu_list, scheduled


def test_cpu_lists_parse_and_nonsense_is_refused() -> None:
    assert cpu_list("1") == {1} and cpu_list("0,2") == {0, 2}
    for text in ("a", "-1", "", "1,,2"):
        with pytest.raises(ValueError):
            cpu_list(text)


def test_a_priority_outside_1_to_99_or_a_core_not_here_is_refused_by_name() -> None:
    for priority in (0, 100):
        with pytest.raises(MbstateError, match="--priority: expected 1 to 99"):
            LoopScheduling(priority).check()
    with pytest.raises(MbstateError, match="--cpu: no core 4096 here"):
        LoopScheduling(cpus=frozenset({4096})).check()
    LoopScheduling(50, frozenset(os.sched_getaffinity(0))).check()


def in_a_thread(scheduling: LoopScheduling) -> dict[str, object]:
    """The policy and cores of a fresh thread inside ``scheduled`` and after it (the test's thread untouched)."""
    seen: dict[str, object] = {}

    def body() -> None:
        with scheduled(scheduling):
            seen["inside"] = os.sched_getscheduler(0), os.sched_getaffinity(0)
        seen["after"] = os.sched_getscheduler(0), os.sched_getaffinity(0)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    return seen


def test_the_loop_thread_runs_on_its_cores_at_fifo_and_as_before_afterwards(caplog) -> None:
    cores = os.sched_getaffinity(0)
    one = frozenset({min(cores)})
    seen = in_a_thread(LoopScheduling(10, one))
    policy, inside = seen["inside"]
    assert inside == one and seen["after"] == (os.SCHED_OTHER, cores)
    # root or CAP_SYS_NICE: FIFO, and what the thread starts resets to the normal policy; else one warning
    assert policy == os.SCHED_FIFO | os.SCHED_RESET_ON_FORK or "not permitted" in caplog.text


def test_without_the_permission_one_warning_and_the_loop_runs(monkeypatch, caplog) -> None:
    def refused(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refused)
    with caplog.at_level(logging.WARNING, logger="mbstate.node"):
        seen = in_a_thread(LoopScheduling(50))
    assert seen["inside"][0] == os.SCHED_OTHER
    assert [r.message.count("\n") for r in caplog.records] == [0]
    assert "not permitted to run the loop at SCHED_FIFO priority 50" in caplog.text


@pytest.mark.parametrize("argv, message", [(["demo", "--priority", "0"], "--priority: expected 1 to 99"),
                                           (["run", "--config", "x.yaml", "--cpu", "4096"], "--cpu: no core 4096"),
                                           (["demo", "--cpu", "one"], "invalid cpu_list value")])
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys) -> None:
    assert cli_exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
