"""The estimate map the node publishes and logs (estimator.node.publishing.estimate_fields)."""

from __future__ import annotations

import msgpack
import numpy as np

from estimator.node.publishing import estimate_fields, unpack
from estimator.online.interface import StepEstimate


def estimate(**changes) -> StepEstimate:
    fields = dict(step=3, t=0.5, q=np.array([0.1, 0.2]), qd=np.zeros(2), qdd=np.ones(2), forces={"motor": 1.5},
                  lam=np.array([2.0]), sigma=None, latency=2e-4, update_steps=1, flags=("startup",))
    return StepEstimate(**(fields | changes))


def test_optional_blocks_appear_only_when_the_estimator_has_them() -> None:
    plain = estimate_fields(estimate())
    assert "sigma" not in plain and "model" not in plain
    assert plain["q"] == [0.1, 0.2] and plain["forces"] == {"motor": 1.5} and plain["latency_ms"] == 0.2
    full = estimate_fields(estimate(sigma={"q": np.array([1e-3, 2e-3])}, model={"gravity_error": np.float64(0.11)}))
    assert full["sigma"] == {"q": [1e-3, 2e-3]} and full["model"] == {"gravity_error": 0.11}
    assert unpack(msgpack.packb(full)) == full  # msgpack-ready: plain lists, floats and text
