"""scripts/causal_reference.py: the released scenario it fits, and its fits on the literature's four-bar
recovering the truth's start and gravity from one second of coupler gyroscope readings."""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np

from conftest import REPO
from replay.lab.suite import load_suite

SCRIPT = REPO / "scripts" / "causal_reference.py"
spec = importlib.util.spec_from_file_location("causal_reference", SCRIPT)
causal_reference = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = causal_reference  # its dataclass looks its module up
spec.loader.exec_module(causal_reference)

SUITE = load_suite(REPO / "configs" / "lab" / "fourbar_benchmark.yaml")
SCENARIO = SUITE.scenarios["gravity_error"]


def test_the_released_model_starts_where_asked_with_gravity_of_that_size_along_the_models() -> None:
    model = causal_reference.released(SCENARIO, 1.1, 9.0).model_mechanism()
    crank = model.coordinate_names.index("crank")
    assert math.isclose(model.q0[crank], 1.1, abs_tol=1e-12)
    assert np.allclose(model.gravity, [0.0, -9.0])


def test_one_second_of_coupler_gyroscope_readings_gives_the_truths_start_and_gravity() -> None:
    fits = causal_reference.causal_fits(SUITE, SCENARIO, "coupler_gyro", 1, [0.5, 1.0])
    last = fits[-1]
    assert abs(last.start - math.pi / 3) < 1e-3  # the model's start is π/16 off
    assert abs(last.gravity - 9.81) < 0.01  # the model's gravity is 8.81
    assert abs(last.error) < 1e-3


def test_a_scenario_it_cannot_fit_is_one_line_and_exit_2(capsys) -> None:
    for argv in (["--scenario", "no_such"], ["--set", "no_such"], ["--every", "0"]):
        try:
            causal_reference.main(argv)
        except SystemExit as stop:
            assert stop.code == 2
        else:
            raise AssertionError(f"{argv}: no exit")
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
