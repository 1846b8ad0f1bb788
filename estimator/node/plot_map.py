"""A state as one flat map of named floats, for the plotting tools of the field.

The node publishes each estimate in this form on ``node.plot`` as two ZeroMQ frames, the topic
``estimate`` and the msgpack map, which PlotJuggler's ZeroMQ subscriber and msgpack parser plot with no
code; ``mbstate log export --format mcap`` writes a log's truth and estimate records in the same form
(estimator.cli.log_mcap), so a plot of the live stream and one of the recording have the same series.

Keys, by the time-series convention of docs/formats.md (``t`` is ``timestamp``, the name PlotJuggler takes
the time from)::

    timestamp                      t, the step's sensor time [s]
    q.<coord>, qd.<coord>, qdd.<coord>   each coordinate's value, velocity, acceleration
    Q.<coord>                      each force the record has, named by its actuator's coordinate (by
                                   the actuator's name where actuators share a coordinate); an
                                   estimate: the estimated ones; truth: every actuator
    lambda.<k>                     multiplier of constraint row k
    W.<frame>.<axis>               an external wrench on a named frame (axes mx, my, mz, fx, fy, fz;
                                   estimator.timeseries.wrench_columns)
    step, latency_ms, update_steps an estimate's (estimator.node.publishing)
    q.<coord>+2sigma, q.<coord>-2sigma, and the same for qd, Q and W   an estimate with σ: its 2σ band
    model.<name>                   an estimate's model-error states

Every value is a float. Why flat, and floats only: PlotJuggler's msgpack parser names a nested value
by its path (``q[4]``: an index, not a name) and skips text and ext types; named keys give named series
(``estimate/q.theta0``), and the estimate's text (its flags) stays on the node's main output. The keys
are made once per mechanism; a map then costs a few dict insertions per value (docs/performance.md, The plot stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from estimator.model_protocol import Model, actuators, constraint_count
from estimator.timeseries import wrench_columns

TOPIC = b"estimate"  # the ZeroMQ topic frame of the node's plot stream
COUNTS = ("step", "latency_ms", "update_steps")  # an estimate's numbers besides its state


class PlotMap:
    """The flat map of a state record (module docstring) for a mechanism's ``coordinates``, ``constraints``
    rows and ``actuators`` (each actuator's name and the coordinate it acts on, in the mechanism's order)."""

    def __init__(self, coordinates: Sequence[str], constraints: int, actuators: Sequence[tuple[str, str]]) -> None:
        self.q, self.qd, self.qdd = ([f"{block}.{name}" for name in coordinates] for block in ("q", "qd", "qdd"))
        self.lam = [f"lambda.{k}" for k in range(constraints)]
        shared = [on for _, on in actuators]
        self.forces = {name: f"Q.{on if shared.count(on) == 1 else name}" for name, on in actuators}
        self.f = list(self.forces.values())
        self.bands = {"q": _bands(self.q), "qd": _bands(self.qd)}
        self.force_bands = dict(zip(self.forces, _bands(self.f)))

    @classmethod
    def for_mechanism(cls, mech: Model) -> PlotMap:
        """The map of ``mech``'s estimates (the node's plot stream), a planar or a spatial model."""
        names = mech.coordinate_names
        return cls(names, constraint_count(mech), [(name, names[on]) for name, on in actuators(mech)])

    def __call__(self, record: Mapping[str, Any]) -> dict[str, float]:
        """The flat map of a truth or estimate record, or of the node's estimate map
        (estimator.node.publishing.estimate_fields): vectors as lists of floats, as they are there."""
        flat = {"timestamp": record["t"]}
        flat.update(zip(self.q, record["q"]))
        flat.update(zip(self.qd, record["qd"]))
        flat.update(zip(self.qdd, record["qdd"]))
        forces = record.get("forces")
        if forces is None:
            flat.update(zip(self.f, record["f"]))
        else:
            for name, value in forces.items():
                flat[self.forces[name]] = value
        flat.update(zip(self.lam, record["lam"]))
        for key in COUNTS:
            if key in record:
                flat[key] = float(record[key])
        for frame, wrench in (record.get("wrenches") or {}).items():
            flat.update(zip(wrench_columns(frame), wrench))
        if sigma := record.get("sigma"):
            self._add_bands(flat, record, sigma)
        if model := record.get("model"):
            flat.update((f"model.{name}", value) for name, value in model.items())
        return flat

    def _add_bands(self, flat: dict[str, float], record: Mapping[str, Any], sigma: Mapping[str, Any]) -> None:
        """value ± 2σ of each block of ``sigma`` (σ of the forces in the order of the record's ``forces``)."""
        for block in ("q", "qd"):
            for (high, low), value, s in zip(self.bands[block], record[block], sigma.get(block, ())):
                flat[high], flat[low] = value + 2.0 * s, value - 2.0 * s
        for (name, value), s in zip(record.get("forces", {}).items(), sigma.get("forces", ())):
            high, low = self.force_bands[name]
            flat[high], flat[low] = value + 2.0 * s, value - 2.0 * s
        for frame, wrench in (record.get("wrenches") or {}).items():
            for (high, low), value, s in zip(_bands(wrench_columns(frame)), wrench, sigma.get(f"wrench.{frame}", ())):
                flat[high], flat[low] = value + 2.0 * s, value - 2.0 * s


def _bands(keys: Sequence[str]) -> list[tuple[str, str]]:
    return [(f"{key}+2sigma", f"{key}-2sigma") for key in keys]
