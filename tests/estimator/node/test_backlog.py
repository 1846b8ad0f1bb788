"""The backlog watch (estimator.node.backlog): how far behind its input the node is, on a simulated
wall clock, message by message."""

from __future__ import annotations

import pytest

from estimator.node.backlog import BEHIND, BURST, BacklogWatch


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def verdicts(watch: BacklogWatch, clock: Clock, taken: list[tuple[float, float, bool]], epoch: int = 0) -> list:
    """Each message taken as (wall time, newest stamp, messages still waiting): the watch's verdicts."""
    found = []
    for wall, newest, waiting in taken:
        clock.now = wall
        found.append(watch.verdict(newest, epoch, waiting))
    return found


def test_a_node_slower_than_a_real_time_stream_is_behind_once_max_lag_s_behind_it() -> None:
    """The sensors stamp in real time; the node takes 0.05 s of stamps per 0.1 s of wall time:

        wall [s]    0.00   0.10   0.25   0.40   0.41
        stamp [s]   0.00   0.05   0.10   0.15   0.40
        waiting     no     yes    yes    yes    no
        lag [s]     map    0.05   0.15   0.25   map again (current)
        verdict     -      -      -      behind -
    """
    clock = Clock()
    watch = BacklogWatch(0.2, clock)
    taken = [(0.0, 0.0, False), (0.1, 0.05, True), (0.25, 0.1, True), (0.4, 0.15, True), (0.41, 0.4, False)]
    assert verdicts(watch, clock, taken) == [None, None, None, BEHIND, None]
    assert watch.delay == pytest.approx(0.01) and watch.lag == 0.0


def test_a_burst_faster_than_real_time_is_caught_once_the_node_was_busy_max_lag_s() -> None:
    """The stamps run 10x the wall clock while messages wait; the lag goes negative at once, but a node
    busy for less than max_lag_s is never more than that behind:

        wall [s]    0.00   0.10   0.30
        stamp [s]   0.00   1.00   3.00
        waiting     no     yes    yes
        lag [s]     map    -0.90  -2.70
        busy [s]    0      0.10   0.30
        verdict     -      -      burst
    """
    clock = Clock()
    watch = BacklogWatch(0.2, clock)
    assert verdicts(watch, clock, [(0.0, 0.0, False), (0.1, 1.0, True), (0.3, 3.0, True)]) == [None, None, BURST]


def test_a_node_busy_but_keeping_to_the_stream_never_skips() -> None:
    """Messages wait for a whole second, but the stamps keep to the wall clock within max_lag_s."""
    clock = Clock()
    watch = BacklogWatch(0.2, clock)
    taken = [(0.0, 0.0, False)] + [(0.1 * k, 0.1 * k - 0.15 * (k % 2), True) for k in range(1, 11)]
    assert verdicts(watch, clock, taken) == [None] * 11


def test_new_stamps_or_none_map_the_clocks_again() -> None:
    """A new time base of the intake's stamps (reset, resync) maps the clocks at its first message, even
    with messages waiting; no admitted stamp yet gives no verdict."""
    clock = Clock()
    watch = BacklogWatch(0.2, clock)
    assert verdicts(watch, clock, [(0.0, None, True), (0.1, 0.0, False), (0.5, 0.1, True)]) == [None, None, BEHIND]
    assert verdicts(watch, clock, [(0.6, 1000.0, True), (0.9, 1000.3, True)], epoch=1) == [None, None]
    assert verdicts(watch, clock, [(1.2, 1000.35, True)], epoch=1) == [BEHIND]
