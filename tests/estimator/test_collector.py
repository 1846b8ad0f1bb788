"""The garbage collector between steps (estimator.collector)."""

from __future__ import annotations

import gc
import weakref

from estimator.collector import collect_if_due, steady_collection


class Node:
    """An object that can sit in a reference cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_outside_steady_collection_the_collector_stays_automatic() -> None:
    assert gc.isenabled()
    assert collect_if_due() == -1


def test_steady_collection_freezes_disables_and_restores() -> None:
    before = gc.get_threshold()
    with steady_collection():
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        watched = cycle()
        gc.set_threshold(10, 2, 2)
        try:
            generations, kept = [], []
            for _ in range(200):
                kept.append([Node() for _ in range(4)])  # live objects: the count of generation 0 grows
                generation = collect_if_due()
                if generation >= 0:
                    generations.append(generation)
        finally:
            gc.set_threshold(*before)
        assert watched() is None  # the cycle was collected between "steps", with automatic collection off
        # CPython's rule with thresholds (10, 2, 2): a generation is collected (the oldest due first) once
        # three collections of the one below it have run
        assert generations[:13] == [0, 0, 0, 1] * 3 + [2]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_nested_block_leaves_the_outer_one_as_it_is() -> None:
    with steady_collection():
        frozen = gc.get_freeze_count()
        with steady_collection():
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0
