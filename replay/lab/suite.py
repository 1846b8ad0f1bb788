"""A lab suite file (``mbstate lab SUITE.yaml``; every key in configs/lab/README.md): scenarios × sensor
sets × estimators × seeds, read and checked here; every problem is one MbstateError naming the key.

A scenario is the three-simulation method of the observer literature: the truth (a mechanism file,
released at ``initial``), readings simulated from it, and an estimator given a model with
deliberate errors (``model``: a start offset of named coordinates held while the estimator's start pose
is assembled; a planar file's gravity and other parameter values; a URDF's link masses scaled).
``truth.friction`` gives a planar truth a viscous friction its file (and so the model) lacks,
``truth.payload`` a URDF truth a point mass on a link that its file lacks; a URDF truth may start with
the joint rates ``initial_velocity`` (a planar one is released from rest).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from estimator.argument_types import LONGEST_SIMULATION_S
from estimator.errors import MbstateError
from estimator.mechanism_file import build_mechanism
from estimator.model_protocol import Model, drawn_at, start_configuration
from estimator.online.config import EstimatorConfig
from estimator.online.startup import start_anchor
from estimator.section import Section
from estimator.spatial.model import is_urdf, load_spatial
from estimator.spatial.payload import payload_terms, point_mass, with_payload
from estimator.yaml_file import read_yaml


@dataclass(frozen=True)
class PayloadTruth:
    """A point mass ``mass`` [kg] at ``com`` [m, the link's axes] on link ``link`` of a URDF truth."""

    link: str
    mass: float
    com: tuple[float, ...]


@dataclass(frozen=True)
class Scenario:
    """One truth and the estimator's model of it (module docstring); ``sensor_sets``: name → sensor file;
    ``velocity``: the truth's start joint rates, ``payload`` and ``mass_factor`` (every link's mass and
    inertia in the model, times it): a URDF's."""

    name: str
    mechanism: Path
    initial: dict[str, float]
    scored: tuple[str, ...]
    gravity: tuple[float, float] | None
    parameters: dict[str, float]
    offset: dict[str, float]
    sensor_sets: dict[str, Path]
    friction: dict[str, float] = field(default_factory=dict)
    velocity: dict[str, float] = field(default_factory=dict)
    payload: PayloadTruth | None = None
    mass_factor: float | None = None

    def start_velocity(self, truth: Model) -> np.ndarray:
        """q̇ of the truth at its release (zero but for ``velocity``)."""
        return np.array([self.velocity.get(name, 0.0) for name in truth.coordinate_names])

    def truth_mechanism(self) -> Model:
        """The mechanism file as written, with a damper of c on each coordinate of ``friction`` (a
        torsional spring of no stiffness: Q = −c q̇ there), drawn at its release pose (``initial`` held); a
        URDF with the ``payload``, a point mass, merged into its link (estimator.spatial.payload.with_payload)."""
        if is_urdf(self.mechanism):
            model = load_spatial(self.mechanism)
            if self.payload is not None:
                model = with_payload(model, self.payload.link, point_mass(self.payload.mass, np.array(self.payload.com)))
            return drawn_at(model, start_anchor(model, tuple(self.initial.items())))
        document = read_yaml(self.mechanism)
        if self.friction:
            document = copy.deepcopy(document)
            document["forces"] = [*(document.get("forces") or []),
                                  *({"type": "torsional_spring", "coordinate": name, "k": 0.0, "c": c,
                                     "name": f"truth_friction_{name}"} for name, c in self.friction.items())]
        mech = build_mechanism(document, str(self.mechanism))
        return dataclasses.replace(mech, q0=start_anchor(mech, tuple(self.initial.items())))

    def model_mechanism(self) -> Model:
        """The estimator's model: the file with ``parameters`` and ``gravity`` replaced (a URDF's link masses
        and inertias times ``mass_factor``), drawn at the release pose moved by ``offset`` (its start-up
        anchor)."""
        if is_urdf(self.mechanism):
            model = load_spatial(self.mechanism)
            if self.mass_factor is not None:
                model = dataclasses.replace(model, inertia=model.inertia * self.mass_factor,
                                            mass=model.mass * self.mass_factor)
            return drawn_at(model, start_anchor(model, self._start()))
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
        return drawn_at(mech, start_anchor(mech, self._start()))

    def _start(self) -> tuple[tuple[str, float], ...]:
        """The coordinates held at the model's start: ``initial``, and the truth's release pose moved by
        ``offset`` on the offset ones."""
        start = {**self.initial}
        truth = self.truth_mechanism()
        q0 = start_configuration(truth)
        for name, value in self.offset.items():
            start[name] = float(q0[truth.coordinate_names.index(name)]) + value
        return tuple(start.items())


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
    urdf = is_urdf(mechanism)
    scored = section.raw("scored")
    if not isinstance(scored, list) or not scored or not all(isinstance(s, str) for s in scored):
        raise section.error("scored", f"must be a list of coordinate names, got {scored!r}")
    model = section.section("model", {})
    truth_section = section.section("truth", {})
    _refuse(section, [("model.gravity", model.has("gravity")), ("model.parameters", model.has("parameters")),
                      ("truth.friction", truth_section.has("friction"))] if urdf else
            [("model.mass_factor", model.has("mass_factor")), ("truth.payload", truth_section.has("payload")),
             ("initial_velocity", section.has("initial_velocity"))], urdf)
    gravity = tuple(model.numbers("gravity", 2)) if model.has("gravity") else None
    parameters, offset = model.number_map("parameters"), model.number_map("offset")
    mass_factor = model.number("mass_factor", positive=True) if model.has("mass_factor") else None
    model.finish()
    friction = truth_section.number_map("friction")
    payload = _payload(truth_section.section("payload"), mechanism) if truth_section.has("payload") else None
    truth_section.finish()
    sets = section.section("sensors")
    sensor_sets = {str(k): base / sets.text(k) for k in sets.data}
    sets.finish()
    for key, path in sensor_sets.items():
        if not path.is_file():
            raise sets.error(key, f"file not found: {path}")
    scenario = Scenario(name, mechanism, section.number_map("initial"), tuple(scored), gravity, parameters, offset,
                        sensor_sets, velocity=section.number_map("initial_velocity"), payload=payload,
                        mass_factor=mass_factor)
    section.finish()
    names = (load_spatial(mechanism) if urdf else build_mechanism(read_yaml(mechanism), str(mechanism))).coordinate_names
    for key, coordinates in (("scored", scenario.scored), ("model.offset", scenario.offset),
                             ("truth.friction", friction), ("initial", scenario.initial),
                             ("initial_velocity", scenario.velocity)):
        for coordinate in coordinates:
            if coordinate not in names:
                raise section.error(key, f"unknown coordinate {coordinate!r} (known: {', '.join(names)})")
    for coordinate, c in friction.items():
        if not c >= 0.0:
            raise section.error(f"truth.friction.{coordinate}", f"must be at least 0 [N·m·s/rad or N·s/m], got {c:g}")
    return dataclasses.replace(scenario, friction=friction)


def _refuse(section: Section, given: list[tuple[str, bool]], urdf: bool) -> None:
    """One error for the first key ``given`` (key, present) that the scenario's kind of file does not take."""
    for key, present in given:
        if present:
            raise section.error(key, "a planar mechanism file's key, not a URDF's" if urdf
                                else "a URDF's key, not a planar mechanism file's")


def _payload(section: Section, mechanism: Path) -> PayloadTruth:
    """``truth.payload``: {link, mass [kg] > 0, com [m] (3 numbers, the link's axes)} on a moving link."""
    link = section.text("link")
    try:
        payload_terms(load_spatial(mechanism), link)
    except MbstateError as exc:
        raise section.error("link", str(exc).partition("estimator.payload: ")[2]) from None
    payload = PayloadTruth(link, section.number("mass", positive=True), tuple(section.numbers("com", 3)))
    section.finish()
    return payload


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
