"""EstimatorConfig: defaults, reading the ``estimator:`` section, errors naming the key."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import yaml
from conftest import MECHANISMS, REPO

from estimator.constraints import constraint_values
from estimator.errors import MbstateError
from estimator.mechanism_file import build_mechanism, load_mechanism
from estimator.online.config import (AUTO, FILTER_JERK, MODEL_MEMORY, MODEL_STATES, STATES_LAG, WALK_STARTS,
                                     EstimatorConfig)
from estimator.online.startup import start_anchor
from estimator.section import Section


def read(data: dict) -> EstimatorConfig:
    return EstimatorConfig.from_section(Section("est.yaml", "estimator", data),
                                        load_mechanism(MECHANISMS / "fourbar_crank.yaml"))


def test_defaults_are_valid_and_empty_section_gives_them() -> None:
    assert read({}) == EstimatorConfig()
    assert EstimatorConfig().dt == pytest.approx(1e-3)


def test_the_readme_table_gives_the_defaults() -> None:
    """configs/estimator/README.md lists every estimator key with the default of EstimatorConfig."""
    text = (REPO / "configs" / "estimator" / "README.md").read_text()
    section = text.split("## `estimator`")[1].split("\n## ")[0]
    table = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, re.MULTILINE))
    defaults = {field.name: field.default for field in dataclasses.fields(EstimatorConfig)}
    assert set(table) == set(defaults)
    for key, default in defaults.items():
        documented = yaml.safe_load(table[key])
        if isinstance(documented, str) and re.fullmatch(r"[0-9.]+e-?[0-9]+", documented):
            documented = float(documented)  # YAML 1.1 reads 1e-3 as text
        if isinstance(documented, dict):
            documented = list(documented.items())  # a map key is kept as (name, value) pairs
        assert (tuple(documented) if isinstance(documented, list) else documented) == default, key


def test_auto_model_states_are_on_where_they_apply() -> None:
    """with_model_states: each auto size on for the smoother with the dynamics, process noise, no unknown
    forces and a window of 5 steps or more, where the mechanism has what the state acts on; a number or null as
    given."""
    assert read({}).gravity_sigma == AUTO and read({"mass_sigma": "auto"}).mass_sigma == AUTO
    every = dict(gravity=True, masses=True, lengths=True)
    sizes = {key: getattr(EstimatorConfig(rate=200.0).with_model_states(**every), key) for key in MODEL_STATES}
    assert sizes == MODEL_STATES
    for keys in (dict(unknown_forces=("motor",)), dict(dynamics=False), dict(kind="error_ekf"),
                 dict(acceleration_noise=0.0)):
        config = EstimatorConfig(rate=200.0, **keys)
        assert all(getattr(config.with_model_states(**every), key) is None for key in MODEL_STATES)
    bare = EstimatorConfig(rate=200.0).with_model_states(gravity=False, masses=False, lengths=False)
    assert (bare.gravity_sigma, bare.mass_sigma, bare.length_sigma, bare.friction_sigma) == (None, None, None, 1.0)
    window = [EstimatorConfig(rate=rate, lag=lag).with_model_states(**every).gravity_sigma
              for rate, lag in ((200.0, 10), (1000.0, 10), (1000.0, STATES_LAG), (1000.0, STATES_LAG - 1))]
    assert window == [0.2, 0.2, 0.2, None]  # a window of STATES_LAG steps or more
    given = EstimatorConfig(rate=200.0, gravity_sigma=0.5, mass_sigma=None).with_model_states(**every)
    assert (given.gravity_sigma, given.mass_sigma, given.length_sigma) == (0.5, None, MODEL_STATES["length_sigma"])


def test_relinearize_threshold_null_is_never() -> None:
    assert read({"relinearize_threshold": None}).relinearize_threshold is None
    assert read({"relinearize_threshold": 0.1}).relinearize_threshold == 0.1


def test_mass_sigma_is_null_or_a_number() -> None:
    assert read({"mass_sigma": None}).mass_sigma is None
    assert (read({"mass_sigma": 0.1, "mass_random_walk": 0}).mass_sigma, read({}).mass_random_walk) == (0.1, "auto")


def test_length_sigma_is_null_or_a_number() -> None:
    assert read({"length_sigma": None}).length_sigma is None
    assert (read({"length_sigma": 0.01, "length_random_walk": 0}).length_sigma, read({}).length_random_walk) == (0.01,
                                                                                                             "auto")


def test_friction_sigma_is_null_or_a_number_on_named_coordinates() -> None:
    assert read({"friction_sigma": None}).friction_sigma is None
    config = read({"friction_sigma": 0.5, "friction_coordinates": ["theta0", "x1"]})
    assert (config.friction_sigma, config.friction_coordinates, config.friction_random_walk) == (0.5, ("theta0", "x1"),
                                                                                                  "auto")


def test_an_auto_model_walk_moves_its_state_by_its_sigma_over_the_model_memory() -> None:
    """model_walk: size / √MODEL_MEMORY when auto (1e-4 for masses at 0.1 over 10⁶ s), the number when given."""
    config = read({"mass_sigma": 0.1, "gravity_sigma": 0.2, "gravity_random_walk": 0, "friction_sigma": 0.5})
    assert config.model_walk("mass_sigma") == pytest.approx(0.1 / np.sqrt(MODEL_MEMORY)) == pytest.approx(1e-4)
    assert (config.model_walk("gravity_sigma"), config.model_walk("friction_sigma")) == (0.0, 0.5e-3)


def test_force_noise_maps_coordinates_or_actuators_to_densities() -> None:
    assert read({"force_noise": {"theta0": 0.3, "motor": 1}}).force_noise == (("theta0", 0.3), ("motor", 1.0))
    assert read({}).force_noise == ()


def test_keys_are_read_with_their_types() -> None:
    config = read({"rate": 500, "lag": 12, "unknown_forces": ["motor"], "dynamics": False, "factorization": "CHOLESKY",
                   "force_random_walk": 3.5, "publish_sigmas": True, "latency_budget_ms": 2})
    assert (config.rate, config.lag, config.unknown_forces, config.dynamics) == (500.0, 12, ("motor",), False)
    assert (config.factorization, config.force_random_walk, config.publish_sigmas) == ("CHOLESKY", 3.5, True)
    assert isinstance(config.lag, int) and config.latency_budget_ms == 2.0


@pytest.mark.parametrize("data, message", [
    ({"rat": 100}, "estimator: unknown key rat"),
    ({"rate": -1}, "estimator.rate: must be a positive number"),
    ({"lag": 2.5}, "estimator.lag: must be a whole number"),
    ({"lag": 0}, "estimator.lag: must be at least 1 step"),
    ({"relinearize_threshold": -1}, "estimator.relinearize_threshold: must be null or at least 0"),
    ({"dynamics": "yes"}, "estimator.dynamics: must be true or false"),
    ({"factorization": "LU"}, "estimator.factorization: must be one of CHOLESKY, QR"),
    ({"unknown_forces": ["brake"]}, "estimator.unknown_forces: unknown actuator 'brake' (known: motor)"),
    ({"unknown_forces": "motor"}, "estimator.unknown_forces: must be a list of actuator names"),
    ({"unknown_forces": ["motor", "motor"]}, "estimator.unknown_forces: an actuator is repeated"),
    ({"delay_steps": 1.0}, "estimator.delay_steps: must be in [0, 1)"),
    ({"integrator_order": 4}, "estimator.integrator_order: must be 2 or 3"),
    ({"integrator_order": 3, "lag": 1}, "estimator.lag: integrator order 3 needs a lag of at least 2"),
    ({"recover_fraction": 0}, "estimator.recover_fraction: must be in (0, 1]"),
    ({"mass_sigma": 0}, "estimator.mass_sigma: must be auto, null or a positive number"),
    ({"mass_random_walk": -1}, "estimator.mass_random_walk: must be auto or at least 0"),
    ({"length_sigma": -0.01}, "estimator.length_sigma: must be auto, null or a positive number"),
    ({"length_random_walk": -1}, "estimator.length_random_walk: must be auto or at least 0"),
    ({"friction_sigma": 0}, "estimator.friction_sigma: must be auto, null or a positive number"),
    ({"friction_random_walk": -1}, "estimator.friction_random_walk: must be auto or at least 0"),
    ({"gravity_random_walk": "slow"}, "estimator.gravity_random_walk: must be auto or a number, got 'slow'"),
    ({"dynamics_sigma": 0}, "estimator.dynamics_sigma: must be auto or a positive number"),
    ({"guess_sigma": "wide"}, "estimator.guess_sigma: must be auto or a number, got 'wide'"),
    ({"friction_coordinates": "theta0"}, "estimator.friction_coordinates: must be a list of coordinate names"),
    ({"friction_coordinates": ["elbow"]}, "estimator.friction_coordinates: unknown coordinate 'elbow' (known: x1,"),
    ({"friction_coordinates": ["x1", "x1"]}, "estimator.friction_coordinates: a coordinate is repeated: x1, x1"),
    ({"force_noise": 0.3}, "estimator.force_noise: must be a map of coordinate or actuator names to densities"),
    ({"force_noise": {"elbow": 0.3}}, "estimator.force_noise: unknown coordinate or actuator 'elbow' (known: x1,"),
    ({"force_noise": {"theta0": -1}}, "estimator.force_noise.theta0: must be at least 0"),
    ({"dynamics": False, "gravity_sigma": 0.2}, "estimator.gravity_sigma: needs the dynamics (dynamics: true)"),
    ({"dynamics": False, "mass_sigma": 0.1}, "estimator.mass_sigma: needs the dynamics"),
    ({"dynamics": False, "friction_sigma": 1.0}, "estimator.friction_sigma: needs the dynamics"),
    ({"dynamics": False, "force_noise": {"theta0": 0.3}}, "estimator.force_noise: needs the dynamics"),
])
def test_errors_name_the_file_and_key(data: dict, message: str) -> None:
    with pytest.raises(MbstateError, match="^est.yaml: " + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        read(data)


def test_initial_state_is_a_map_of_coordinate_values() -> None:
    assert read({"initial_state": {"theta0": 0.5}}).initial_state == (("theta0", 0.5),)
    with pytest.raises(MbstateError, match=r"estimator\.initial_state: unknown coordinate 'nope'"):
        read({"initial_state": {"nope": 1.0}})
    with pytest.raises(MbstateError, match=r"estimator\.initial_state\.theta0: must be a finite number"):
        read({"initial_state": {"theta0": "x"}})
    with pytest.raises(MbstateError, match=r"estimator\.initial_state: must be a map"):
        read({"initial_state": [1.0]})


def test_initial_velocity_is_a_map_of_coordinate_velocities_or_rest() -> None:
    assert read({"initial_velocity": {"theta0": -1.5}}).initial_velocity == (("theta0", -1.5),)
    rest = read({"initial_velocity": "rest"}).initial_velocity
    assert [name for name, _ in rest] == list(load_mechanism(MECHANISMS / "fourbar_crank.yaml").coordinate_names)
    assert all(value == 0.0 for _, value in rest)
    with pytest.raises(MbstateError, match=r"estimator\.initial_velocity: unknown state 'still' \(known: rest\)"):
        read({"initial_velocity": "still"})
    with pytest.raises(MbstateError, match=r"estimator\.initial_velocity: unknown coordinate 'nope'"):
        read({"initial_velocity": {"nope": 1.0}})
    with pytest.raises(MbstateError, match=r"estimator\.initial_velocity\.theta0: must be a finite number"):
        read({"initial_velocity": {"theta0": float("nan")}})


def test_initial_state_names_a_configuration_of_the_mechanism_file() -> None:
    document = yaml.safe_load((MECHANISMS / "fourbar_crank.yaml").read_text())
    document["configurations"] = {"raised": {"theta0": "pi/2"}}
    mech = build_mechanism(document, "fourbar_crank.yaml")
    section = Section("est.yaml", "estimator", {"initial_state": "raised"})
    config = EstimatorConfig.from_section(section, mech)
    assert config.initial_state == (("theta0", pytest.approx(1.5707963267948966)),)
    anchor = start_anchor(mech, config.initial_state)
    assert anchor[mech.coordinate_names.index("theta0")] == pytest.approx(np.pi / 2)
    assert np.max(np.abs(constraint_values(mech, anchor))) < 1e-10
    with pytest.raises(MbstateError, match=r"estimator\.initial_state: unknown configuration 'folded' \(the "
                                           r"mechanism file's configurations: raised\)"):
        EstimatorConfig.from_section(Section("est.yaml", "estimator", {"initial_state": "folded"}), mech)
    document["configurations"] = {"bad": {"nope": 1.0}}
    with pytest.raises(MbstateError, match=r"configurations\.bad: unknown key 'nope'"):
        build_mechanism(document, "fourbar_crank.yaml")


def test_force_rate_sets_the_random_walk_density() -> None:
    config = read({"force_rate": 8.0})
    assert config.force_rate == 8.0 and config.force_walk == pytest.approx(2.0)  # √0.0625 × 8
    assert read({}).force_walk == WALK_STARTS["force_random_walk"] and read({}).adapts_force_walk  # auto: its start
    assert read({"force_random_walk": 1.5}).force_walk == 1.5 and not read({"force_random_walk": 1.5}).adapts_force_walk
    assert read({"jerk_random_walk": "auto"}).jerk_walk == WALK_STARTS["jerk_random_walk"]
    # the null_jerk filter does not match its density to the motion: auto is its own FILTER_JERK
    assert read({}).filter_jerk_walk == FILTER_JERK and read({"jerk_random_walk": 2.0}).filter_jerk_walk == 2.0
    with pytest.raises(MbstateError, match=r"estimator\.jerk_random_walk: must be auto or a positive number"):
        read({"jerk_random_walk": 0.0})
    for key in ("jerk_random_walk", "acceleration_noise", "gravity_sigma"):  # a word other than auto: one line
        with pytest.raises(MbstateError, match=rf"estimator\.{key}: must be auto or a number, got 'fast'"):
            read({key: "fast"})
    assert read({}).acceleration_noise == "auto" and read({}).acceleration_density == 0.3  # the filters' value
    assert read({"acceleration_noise": 0.05}).acceleration_density == 0.05
    with pytest.raises(MbstateError, match=r"estimator\.acceleration_noise: must be auto or at least 0"):
        read({"acceleration_noise": -1.0})
    with pytest.raises(MbstateError, match=r"estimator\.force_rate: give force_rate or force_random_walk, not both"):
        read({"force_rate": 8.0, "force_random_walk": 1.0})
    with pytest.raises(MbstateError, match=r"estimator\.force_rate: must be null or a positive number"):
        read({"force_rate": -1.0})
