"""Sensor factors beyond their Jacobians: noise models (datasheet σ, message cov, robust losses),
bias keys and bias factors, and the wrapped encoder residual."""

from __future__ import annotations

import gtsam
import numpy as np
import pytest
from conftest import MECHANISMS

from estimator.errors import MbstateError
from estimator.factors import keys
from estimator.mechanism_file import load_mechanism
from sensors.config import build_sensors

MECH = load_mechanism(MECHANISMS / "fourbar_crank.yaml")


def sensor(**entry):
    return build_sensors({"sensors": {"s": entry}}, MECH, "s.yaml").sensors[0]


def test_datasheet_sigma_and_cov_override() -> None:
    gyro = sensor(kind="gyroscope", body="coupler", rate=400, noise={"density": 1e-3, "quantum": 0.012})
    expected = np.sqrt(1e-6 * 400 + 0.012**2 / 12)  # N²·rate + Δ²/12
    assert gyro.noise_model().sigmas() == pytest.approx([expected], rel=1e-12)
    assert gyro.noise_model(np.array([[4e-4]])).sigmas() == pytest.approx([0.02], rel=1e-12)


@pytest.mark.parametrize("loss", ["huber", "cauchy"])
def test_robust_loss_downweights_outliers(loss: str) -> None:
    gyro = sensor(kind="gyroscope", body="coupler", rate=100, noise={"density": 0.01}, loss={"type": loss, "k": 1.0})
    model = gyro.noise_model()
    assert isinstance(model, gtsam.noiseModel.Robust)
    plain = sensor(kind="gyroscope", body="coupler", rate=100, noise={"density": 0.01})
    values = gtsam.Values()
    values.insert(keys.Q(0), MECH.q0)
    values.insert(keys.V(0), np.zeros(MECH.n))
    outlier = np.array([50.0])  # 500 σ
    robust_error = gyro.factors(outlier, 0)[0].error(values)
    assert robust_error < 0.01 * plain.factors(outlier, 0)[0].error(values)


def test_bias_keys_are_distinct_per_slot_and_step() -> None:
    seen = {keys.B(slot, k) for slot in range(4) for k in range(50)}
    assert len(seen) == 200 and not seen & {keys.Q(k) for k in range(50)}
    with pytest.raises(MbstateError, match="bias slot"):
        keys.B(keys.BIAS_SLOTS, 0)


def test_bias_prior_and_random_walk_sigmas() -> None:
    accel = sensor(kind="accelerometer", body="coupler", position=[1, 0], rate=500, bias_state=True,
                   noise={"density": 1e-3, "random_walk": 3e-3, "bias_sigma": 0.1})
    accel.slot = 3
    assert accel.keys_at(9)[-1] == keys.B(3, 9)
    assert accel.bias_prior(0).noiseModel().sigmas() == pytest.approx([0.1, 0.1])
    walk = accel.bias_walk(4, 9, 0.01)
    assert list(walk.keys()) == [keys.B(3, 4), keys.B(3, 9)]
    assert walk.noiseModel().sigmas() == pytest.approx([3e-3 * 0.1] * 2)  # K √dt


def test_encoder_residual_wraps_across_pi() -> None:
    encoder = sensor(kind="encoder", body="crank", counts=4096, rate=1000)
    q = MECH.q0.copy()
    q[:2] = [np.cos(3.1), np.sin(3.1)]  # crank at 3.1 rad
    error, _ = encoder.error_function(np.array([-3.1]))(q)  # the reading wrapped past −π
    assert error[0] == pytest.approx(6.2 - 2 * np.pi, abs=1e-12)
