"""scripts/causal_reference.py: the released scenario it fits, and its fits on the literature's four-bar
recovering the truth's start and gravity from one second of coupler gyroscope readings, with a freed
mechanism parameter and with priors; its instants and run-weighted RMSE."""

from __future__ import annotations

import math

import numpy as np

from conftest import REPO, load_script
from replay.lab.suite import load_suite

causal_reference = load_script("causal_reference")

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


def test_the_released_model_takes_the_parameters_given() -> None:
    model = causal_reference.released(SCENARIO, 1.1, 9.0, {"coupler_mass": 9.0}).model_mechanism()
    assert [b.mass for b in model.bodies] == [2.0, 9.0, 5.0]


def test_a_freed_parameter_the_model_has_right_stays_right_and_the_start_and_gravity_are_found() -> None:
    priors = causal_reference.Priors(parameters={"coupler_mass": 0.1})
    last = causal_reference.causal_fits(SUITE, SCENARIO, "coupler_gyro", 1, [0.5, 1.0], priors)[-1]
    assert abs(last.start - math.pi / 3) < 1e-3
    assert abs(last.gravity - 9.81) < 0.02
    assert abs(last.parameters["coupler_mass"] - 8.0) < 0.08  # 1 % of the mass; its prior σ is 10 %
    assert abs(last.error) < 1e-3


def test_a_tight_prior_holds_the_start_at_the_models() -> None:
    model_start = math.pi / 3 + math.pi / 16
    fit = causal_reference.causal_fits(SUITE, SCENARIO, "coupler_gyro", 1, [0.5],
                                       causal_reference.Priors(start=1e-9))[-1]
    assert abs(fit.start - model_start) < 1e-6
    assert abs(fit.error) > 0.05  # the start π/16 off is not corrected


def test_the_instants_are_finer_before_after_and_the_run_rmse_weighs_each_by_its_span() -> None:
    times = causal_reference.instants(3.0, 1.0, 0.5, 0.25)
    assert np.allclose(times, [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0])
    fits = [causal_reference.Fit(t, 0.0, 0.0, e) for t, e in ((1.0, 3.0), (4.0, 1.0))]
    assert math.isclose(causal_reference.rmse_over_run(fits), math.sqrt((1 * 9 + 3 * 1) / 4))


def test_a_scenario_it_cannot_fit_is_one_line_and_exit_2(capsys) -> None:
    for argv in (["--scenario", "no_such"], ["--set", "no_such"], ["--every", "0"], ["--every-before", "-1"],
                 ["--free", "coupler_mass"], ["--free", "coupler_mass=0"], ["--free", "no_such=0.1"],
                 ["--free", "start=0.1"], ["--start-sigma", "0"]):
        try:
            causal_reference.main(argv)
        except SystemExit as stop:
            assert stop.code == 2
        else:
            raise AssertionError(f"{argv}: no exit")
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
