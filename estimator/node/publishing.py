"""The node's output messages as msgpack maps (one ZeroMQ frame each, ``type`` says which).

``estimate`` (every step)::

    type "estimate", step (int), t [s, sensor clock], q, qd, qdd (lists, coordinate order),
    lam (list, constraint order), forces {name: N or N·m}, latency_ms (float), flags (list of
    text), sigma {block: list} only when the estimator publishes marginal standard deviations,
    model {name: value} only when it carries model-error states (``gravity_error``: the relative
    error g of the model's gravity, estimator ``gravity_sigma``; ``mass_error.<body>``: the relative
    error μ_b of a body's mass, ``mass_sigma``; ``length_error.<body>``: the relative error ℓ_b of a
    body's length, ``length_sigma``; ``friction.<coordinate>``: the viscous friction coefficient c_i
    the model lacks on a coordinate, ``friction_sigma``; ``payload.mass`` [kg] and ``payload.com.x|y|z`` [m,
    the link's axes]: the unknown payload, ``payload``, the σ of its state θ in sigma's ``payload`` block)

The same estimate as a flat map of floats for plotting tools, on ``node.plot``: estimator.node.plot_map.

``status`` (every ``status_period_s`` and as the reply to the ``status`` command)::

    type "status", state (estimator.node.intake.Intake.state), uptime_s, t (newest accepted stamp or
    nil), coordinates, forces (names), sensors {id: {rate_hz, accepted, gaps, last_t}}, the counters of
    estimator.node.stats.NodeCounters, recoveries, skipping_s (wall seconds spent catching up,
    estimator.node.backlog), latency_ms {p50, p99, max}, estimator {counters},
    observability (nil until the estimator has started, then its start-up check:
    estimator.online.observability.ObservabilityReport.as_dict)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from estimator.online.interface import StepEstimate
from sensors.messages import MessageError, unpack  # noqa: F401 (unpack: the node's one way to read msgpack)


def plain(value: Any) -> Any:
    """numpy arrays and scalars (also nested in maps and sequences) as msgpack-ready lists and floats."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def estimate_message(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The ``estimate`` message of a step: ``type`` and its ``estimate_fields``."""
    return {"type": "estimate", **fields}


def estimate_fields(estimate: StepEstimate) -> dict[str, Any]:
    """A StepEstimate as a msgpack-ready map (the message and the log's ``estimate`` record share it)."""
    fields = {"step": int(estimate.step), "t": float(estimate.t),
              "q": plain(np.asarray(estimate.q, float)), "qd": plain(np.asarray(estimate.qd, float)),
              "qdd": plain(np.asarray(estimate.qdd, float)), "lam": plain(np.asarray(estimate.lam, float)),
              "forces": {str(k): float(v) for k, v in estimate.forces.items()},
              "latency_ms": 1e3 * float(estimate.latency), "update_steps": int(estimate.update_steps),
              "flags": [str(f) for f in estimate.flags]}
    if estimate.sigma is not None:
        fields["sigma"] = plain(estimate.sigma)
    if estimate.model:
        fields["model"] = {str(k): float(v) for k, v in estimate.model.items()}
    if estimate.wrenches:
        fields["wrenches"] = {str(k): plain(np.asarray(v, float)) for k, v in estimate.wrenches.items()}
    return fields


UNPACK_ERRORS = (MessageError,)  # what ``unpack`` (sensors.messages.unpack: bounded depth) raises on bad data
