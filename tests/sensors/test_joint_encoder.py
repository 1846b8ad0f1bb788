"""Joint encoders of a URDF (sensors.joint_encoder) on the test tree's prismatic, continuous and
revolute joints: h against the joint coordinate, ∂h/∂q against central differences, the wrap of an
angle and not of a displacement, the counts' quantum, and how single- and multi-turn devices
report. Seeded."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MECHANISMS, central_difference

from estimator.errors import MbstateError
from estimator.spatial.model import load_spatial
from sensors.base import State
from sensors.config import build_sensors

TREE = load_spatial(MECHANISMS / "urdf" / "test_tree.urdf")
CONFIG = {
    "lift": {"kind": "encoder", "joint": "lift", "units": "m", "resolution": 1e-5, "zero": 0.1, "rate": 1000},
    "turntable": {"kind": "encoder", "joint": "turntable", "counts": 4096, "turns": "multi", "rate": 1000},
    "shoulder": {"kind": "encoder", "joint": "left_shoulder", "zero": 0.3, "rate": 500, "noise": {"density": 1e-4}},
}
# h is linear in q away from the wrap: central differences (step 1e-6) are exact but for round-off
STEP, TOLERANCE = 1e-6, 1e-8


def sensors():
    return build_sensors({"sensors": CONFIG}, TREE, "tree.yaml").sensors


@pytest.mark.parametrize("seed", range(3))
def test_measurement_and_jacobian(seed) -> None:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, TREE.dof)
    for sensor in sensors():
        joint = TREE.joint_names.index(CONFIG[sensor.params.name]["joint"])
        value, (jac,) = sensor.measurement(q)
        assert value[0] == pytest.approx(q[joint] - CONFIG[sensor.params.name].get("zero", 0.0), abs=1e-15)
        numeric = central_difference(lambda x: sensor.measurement(x, jac=False)[0], q, STEP)
        np.testing.assert_allclose(jac, numeric, rtol=0, atol=TOLERANCE)
        state = State(t=0.0, q=q, qd=np.zeros(TREE.dof), qdd=np.zeros(TREE.dof), lam=np.zeros(0), f=np.zeros(6))
        assert sensor.measure(state) == pytest.approx(value)


def test_angles_wrap_and_displacements_do_not() -> None:
    lift, turntable, shoulder = sensors()
    assert (lift.wraps, turntable.wraps, shoulder.wraps) == (False, True, True)
    assert (lift.params.units, turntable.params.units) == ("m", "rad")
    assert lift.params.noise.quantum == 1e-5 and turntable.params.noise.quantum == pytest.approx(2 * np.pi / 4096)
    q = np.zeros(TREE.dof)
    q[TREE.joint_names.index("turntable")] = 4.0
    q[TREE.joint_names.index("lift")] = 4.0
    assert turntable.measurement(q, jac=False)[0][0] == pytest.approx(4.0 - 2 * np.pi)
    assert lift.measurement(q, jac=False)[0][0] == pytest.approx(3.9)
    climbing = np.linspace(0.0, 8.0, 50)[:, None]
    np.testing.assert_allclose(turntable.present(climbing), climbing, atol=1e-12)  # multi-turn: unwrapped
    assert np.max(shoulder.present(climbing)) <= np.pi  # single-turn: wrapped


def test_a_urdf_refuses_planar_keys() -> None:
    with pytest.raises(MbstateError, match="sensors.imu.body: a sensor of a URDF is mounted by link"):
        build_sensors({"sensors": {"imu": {"kind": "accelerometer", "body": 0, "position": [0, 0], "rate": 100}}},
                      TREE, "tree.yaml")
    with pytest.raises(MbstateError, match="sensors.lift.resolution"):
        build_sensors({"sensors": {"lift": {**CONFIG["lift"], "resolution": -1.0}}}, TREE, "tree.yaml")
    with pytest.raises(MbstateError, match="sensors.turntable: unknown key resolution"):
        build_sensors({"sensors": {"turntable": {**CONFIG["turntable"], "resolution": 1e-3}}}, TREE, "tree.yaml")
