"""A lab suite file (``mbstate lab SUITE.yaml``; every key in configs/lab/README.md): scenarios × sensor
sets × estimators × seeds, read and checked here; every problem is one MbstateError naming the key.

A scenario is the three-simulation method of the observer literature: the truth (a mechanism file,
released from rest at ``initial``), readings simulated from it, and an estimator given a model with
deliberate errors (``model``: gravity, other parameter values of the mechanism file, a start offset
of named coordinates held while the estimator's start pose is assembled). ``truth.friction`` gives the
truth a viscous friction its file (and so the model) lacks.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from estimator.argument_types import LONGEST_SIMULATION_S
from estimator.errors import MbstateError
from estimator.mechanism_file import build_mechanism
from estimator.spatial.model import is_urdf
from estimator.model import Mechanism
from estimator.online.config import EstimatorConfig
from estimator.online.startup import start_anchor
from estimator.section import Section
from estimator.yaml_file import read_yaml


@dataclass(frozen=True)
class Scenario:
    """One truth and the estimator's model of it (module docstring); ``sensor_sets``: name → sensor file."""

    name: str
    mechanism: Path
    initial: dict[str, float]
    scored: tuple[str, ...]
    gravity: tuple[float, float] | None
    parameters: dict[str, float]
    offset: dict[str, float]
    sensor_sets: dict[str, Path]
    friction: dict[str, float] = dataclasses.field(default_factory=dict)

    def truth_mechanism(self) -> Mechanism:
        """The mechanism file as written, with a damper of c on each coordinate of ``friction`` (a
        torsional spring of no stiffness: Q = −c q̇ there), drawn at its release pose (``initial`` held)."""
        document = read_yaml(self.mechanism)
        if self.friction:
            document = copy.deepcopy(document)
            document["forces"] = [*(document.get("forces") or []),
                                  *({"type": "torsional_spring", "coordinate": name, "k": 0.0, "c": c,
                                     "name": f"truth_friction_{name}"} for name, c in self.friction.items())]
        mech = build_mechanism(document, str(self.mechanism))
        return dataclasses.replace(mech, q0=start_anchor(mech, tuple(self.initial.items())))

    def model_mechanism(self) -> Mechanism:
        """The estimator's model: the file with ``parameters`` and ``gravity`` replaced, drawn at the release
        pose moved by ``offset`` (its start-up anchor)."""
        document = copy.deepcopy(read_yaml(self.mechanism))
        known = document.get("parameters") or {}
        for name, value in self.parameters.items():
            if name not in known:
                raise MbstateError(f"scenario {self.name}: model.parameters.{name}: not a parameter of "
                                   f"{self.mechanism} (known: {', '.join(known) or 'none'})")
            known[name] = value
        if self.gravity is not None:
            document["gravity"] = list(self.gravity)
        mech = build_mechanism(document, f"{self.mechanism} (model of {self.name})")
        start = {**self.initial}
        truth = self.truth_mechanism()
        for name, value in self.offset.items():
            start[name] = float(truth.q0[truth.coordinate_names.index(name)]) + value
        return dataclasses.replace(mech, q0=start_anchor(mech, tuple(start.items())))


@dataclass(frozen=True)
class Suite:
    """The suite file, loaded: ``estimators`` maps a name to its EstimatorConfig (``base`` keys, then its own)."""

    source: Path
    description: str
    duration: float
    after: float
    seeds: tuple[int, ...]
    scenarios: dict[str, Scenario]
    estimators: dict[str, EstimatorConfig]
    settings: dict[str, dict[str, Any]]  # the estimators' sections as written (base merged)

    def cells(self, scenarios: Sequence[str] = (), estimators: Sequence[str] = ()) -> list[Cell]:
        """Every scenario × sensor set × estimator × seed of the chosen scenarios and estimators (all when
        empty), in file order."""
        for kind, chosen, known in (("scenario", scenarios, self.scenarios), ("estimator", estimators,
                                                                              self.estimators)):
            unknown = [name for name in chosen if name not in known]
            if unknown:
                raise MbstateError(f"unknown {kind} {unknown[0]!r} (known: {', '.join(known)})")
        return [Cell(s.name, set_name, estimator, seed) for s in self.scenarios.values()
                if not scenarios or s.name in scenarios for set_name in s.sensor_sets
                for estimator in self.estimators if not estimators or estimator in estimators for seed in self.seeds]


@dataclass(frozen=True)
class Cell:
    scenario: str
    sensor_set: str
    estimator: str
    seed: int

    def label(self) -> str:
        return f"{self.scenario} {self.sensor_set} {self.estimator} seed {self.seed}"


def _scenario(section: Section, name: str, base: Path) -> Scenario:
    mechanism = base / section.text("mechanism")
    if not mechanism.is_file():
        raise section.error("mechanism", f"file not found: {mechanism}")
    if is_urdf(mechanism):
        raise section.error("mechanism", f"{mechanism}: a URDF in a lab suite is not supported yet (the scenarios' "
                                         "model errors edit a planar mechanism file)")
    scored = section.raw("scored")
    if not isinstance(scored, list) or not scored or not all(isinstance(s, str) for s in scored):
        raise section.error("scored", f"must be a list of coordinate names, got {scored!r}")
    model = section.section("model", {})
    gravity = tuple(model.numbers("gravity", 2)) if model.has("gravity") else None
    parameters, offset = model.number_map("parameters"), model.number_map("offset")
    model.finish()
    truth_section = section.section("truth", {})
    friction = truth_section.number_map("friction")
    truth_section.finish()
    sets = section.section("sensors")
    sensor_sets = {str(k): base / sets.text(k) for k in sets.data}
    sets.finish()
    for key, path in sensor_sets.items():
        if not path.is_file():
            raise sets.error(key, f"file not found: {path}")
    scenario = Scenario(name, mechanism, section.number_map("initial"), tuple(scored), gravity, parameters, offset,
                        sensor_sets)
    section.finish()
    truth = scenario.truth_mechanism()
    for key, coordinates in (("scored", scenario.scored), ("model.offset", scenario.offset),
                             ("truth.friction", friction)):
        for coordinate in coordinates:
            if coordinate not in truth.coordinate_names:
                raise section.error(key, f"unknown coordinate {coordinate!r} (known: "
                                         f"{', '.join(truth.coordinate_names)})")
    for coordinate, c in friction.items():
        if not c >= 0.0:
            raise section.error(f"truth.friction.{coordinate}", f"must be at least 0 [N·m·s/rad or N·s/m], got {c:g}")
    return dataclasses.replace(scenario, friction=friction)


def load_suite(path: str | Path) -> Suite:
    """Read and check a suite file (configs/lab/README.md)."""
    path = Path(path)
    top = Section(str(path), "(top)", read_yaml(path))
    base = path.parent
    scenarios_section = top.section("scenarios")
    scenarios = {str(n): _scenario(scenarios_section.section(n), str(n), base) for n in scenarios_section.data}
    scenarios_section.finish()
    if not scenarios:
        raise top.error("scenarios", "needs at least one scenario")
    common = top.raw("base", {}) or {}
    if not isinstance(common, dict):
        raise top.error("base", "must map estimator keys to values")
    estimators_section = top.raw("estimators")
    if not isinstance(estimators_section, dict) or not estimators_section:
        raise top.error("estimators", "must map estimator names to their estimator sections (at least one)")
    mech = next(iter(scenarios.values())).truth_mechanism()
    settings, estimators = {}, {}
    for name, own in estimators_section.items():
        if not isinstance(own, dict):
            raise top.error(f"estimators.{name}", "must map estimator keys to values")
        settings[str(name)] = {**common, **own}
        estimators[str(name)] = EstimatorConfig.from_section(Section(str(path), f"estimators.{name}",
                                                                     settings[str(name)]), mech)
    seeds = top.raw("seeds", [1])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise top.error("seeds", f"must be a list of non-negative integers, got {seeds!r}")
    suite = Suite(path, top.text("description", ""),
                  top.number("duration", positive=True, maximum=LONGEST_SIMULATION_S),
                  top.number("after", 0.0, minimum=0.0), tuple(seeds), scenarios, estimators, settings)
    top.finish()
    return suite
