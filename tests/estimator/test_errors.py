"""estimator.errors: the nesting count that bounds what the node unpacks and records."""

from estimator.errors import nesting_depth


def test_nesting_depth_counts_levels_of_maps_lists_and_tuples_keys_included():
    assert nesting_depth(1.0, 32) == 0
    assert nesting_depth({"sensor": "a", "t": 0.0, "value": 1.0}, 32) == 1
    assert nesting_depth({"sensor": "a", "value": [1.0, 2.0]}, 32) == 2
    assert nesting_depth({(1, (2,)): 0}, 32) == 3  # a tuple key and the tuple in it
    assert nesting_depth([[], [[[]]]], 32) == 4  # the deepest branch counts, empty containers too


def test_nesting_depth_stops_one_level_past_the_limit():
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    assert nesting_depth(deep, 32) == 33
