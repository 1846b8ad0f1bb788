"""The payload state's configuration (EstimatorConfig ``payload``, ``payload_*``) and what the estimator
publishes of it; its rows are tested in tests/estimator/spatial/test_payload.py, its estimate against a
true payload in tests/replay/test_lab_urdf.py."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, REPO

from estimator.errors import MbstateError
from estimator.model_protocol import load_model
from estimator.online.config import MODEL_MEMORY, EstimatorConfig
from estimator.online.estimator import OnlineEstimator
from estimator.online.interface import PAYLOAD_KEYS
from estimator.section import Section
from estimator.spatial.payload import STATES, payload_terms, point_mass, with_payload
from estimator.spatial.tangent import mean_length
from replay.clocks import FixedClock
from replay.simulation import forward_truth
from sensors.config import load_sensors
from sensors.virtual import simulate_readings

PANDA = MECHANISMS / "urdf" / "panda.urdf"


def read(data: dict, mechanism=PANDA) -> EstimatorConfig:
    return EstimatorConfig.from_section(Section("est.yaml", "estimator", data), load_model(mechanism))


@pytest.mark.parametrize("data, message", (
    ({"payload": "gripper"}, "estimator.payload: no link 'gripper' in panda"),
    ({"payload": "panda_link0"}, "estimator.payload: link 'panda_link0' is on the fixed base"),
    ({"payload": 3}, "estimator.payload: must be text"),
    ({"payload": "panda_link7", "kind": "null_jerk"}, "estimator.payload: must be null with a filter"),
    ({"payload": "panda_link7", "dynamics": False}, "estimator.payload: needs the dynamics"),
    ({"payload": "panda_link7", "payload_mass_sigma": 0}, "estimator.payload_mass_sigma: must be auto or a positive"),
    ({"payload_random_walk": "slow"}, "estimator.payload_random_walk: must be auto or a number"),
    ({"payload_random_walk": -1}, "estimator.payload_random_walk: must be auto or at least 0"),
))
def test_bad_payload_keys_are_one_line_naming_the_key(data: dict, message: str) -> None:
    with pytest.raises(MbstateError, match=message):
        read(data)


def test_a_planar_model_refuses_a_payload() -> None:
    with pytest.raises(MbstateError, match="estimator.payload: a payload state needs a spatial model"):
        read({"payload": "crank"}, MECHANISMS / "fourbar.yaml")


def test_auto_sizes_from_the_link_and_explicit_numbers_win() -> None:
    model = load_model(PANDA)
    terms = payload_terms(model, "panda_link7")
    sigmas, walks = read({"payload": "panda_link7"}).payload_sigmas(terms.body_mass, terms.reach)
    mass, reach = model.mass[6], mean_length(model)
    np.testing.assert_allclose(sigmas, [mass] + [mass * reach] * 3 + [mass * reach ** 2] * 6)
    np.testing.assert_allclose(walks, sigmas / np.sqrt(MODEL_MEMORY))  # the model-error states' walk
    config = read({"payload": "panda_link7", "payload_mass_sigma": 0.5, "payload_offset_sigma": 0.1,
                   "payload_random_walk": 0.01})
    sigmas, walks = config.payload_sigmas(terms.body_mass, terms.reach)
    np.testing.assert_allclose(sigmas, [0.5] + [0.05] * 3 + [0.005] * 6)
    np.testing.assert_allclose(walks, 0.01 * sigmas)


def test_the_estimates_publish_the_payload_and_its_sigma() -> None:
    """0.2 s of the Panda released from its ready pose with a payload, encoders and link IMUs: every
    estimate carries m and c under PAYLOAD_KEYS and, with publish_sigmas, the σ of θ in sigma['payload']."""
    model = load_model(PANDA)
    ready = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    truth_model = with_payload(model, "panda_link7", point_mass(0.15, np.array([0.0, 0.0, 0.1])))
    sensors = load_sensors(REPO / "configs" / "sensors" / "matrix" / "panda_imu.yaml", truth_model)
    truth = forward_truth(truth_model, ready, np.zeros(7), 1e-3, 0.2)
    estimator = OnlineEstimator(model, load_sensors(REPO / "configs" / "sensors" / "matrix" / "panda_imu.yaml", model),
                                EstimatorConfig(payload="panda_link7", publish_sigmas=True), FixedClock())
    estimates = []
    for reading in simulate_readings(sensors.sensors, truth, 1):
        estimator.add(reading)
        estimates += estimator.advance(reading.t)
    estimates += estimator.advance(truth.t[-1], final=True)
    assert len(estimates) > 100
    assert all(set(PAYLOAD_KEYS) <= set(e.model) and e.sigma["payload"].shape == (STATES,) for e in estimates)
    assert np.all(np.isfinite([e.model["payload.mass"] for e in estimates]))
    assert estimates[-1].sigma["payload"][0] < estimates[0].sigma["payload"][0]  # the readings see m
