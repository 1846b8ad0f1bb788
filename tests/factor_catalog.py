"""Every error function of the factors for one mechanism, with the variables it connects: the
product's (estimator.factors, estimator.dynamics) and the numpy reference forms (reference_forms).

Used by the shared Jacobian contract test (tests/estimator/factors/test_factor_jacobians.py) and the
linearization benchmark (scripts/bench_factors.py). A variable is named by its kind (``q``, ``v``,
``a``, ``l``, ``f``, ``zdd``: q, q̇, q̈, λ, F, z̈) with ``+`` for the next step and ``-`` for the
previous one: ``("q", "q+", "v-", "v", "v+")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import gtsam
import numpy as np
from reference_forms import (acceleration_constraint_error, forward_dynamics_error, inverse_dynamics_error,
                             multiplier_dynamics_error, position_constraint_error, prior_error,
                             velocity_constraint_error)

from estimator.factors import keys
from estimator.factors.adapter import ErrorFunction
from estimator.factors.drive_factors import driven_step_error
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.independent_coordinates import choose_independent_coordinates, reduced_dynamics_error
from estimator.factors.integrators import trapezoidal_error
from estimator.factors.multistep import adams_moulton_error
from estimator.factors.step_bundle import dependent_step_error, independent_step_error
from estimator.model import Mechanism

KEY_OF: dict[str, Callable[[int], int]] = {"q": keys.Q, "v": keys.V, "a": keys.A, "l": keys.L, "f": keys.F,
                                           "zdd": lambda k: gtsam.symbol("x", k)}


@dataclass(frozen=True)
class FactorSpec:
    """A named error function and the kinds of the variables it takes, in order."""

    name: str
    fn: ErrorFunction
    variables: tuple[str, ...]

    def keys(self, k: int) -> list[int]:
        """GTSAM keys of the variables when the factor belongs to step k."""
        return [KEY_OF[v.rstrip("+-")](k + v.count("+") - v.count("-")) for v in self.variables]


def factor_catalog(mech: Mechanism, q_assembled: np.ndarray, dt: float) -> list[FactorSpec]:
    """All factors for ``mech``; independent coordinates and rows are chosen at ``q_assembled``,
    inverse dynamics only if the mechanism has actuators."""
    ic = choose_independent_coordinates(mech, q_assembled)
    specs = [
        FactorSpec("prior", partial(prior_error, q_assembled), ("q",)),
        FactorSpec("trapezoidal", partial(trapezoidal_error, dt), ("q", "q+", "v", "v+")),
        FactorSpec("position_constraint", partial(position_constraint_error, mech), ("q",)),
        FactorSpec("velocity_constraint", partial(velocity_constraint_error, mech), ("q", "v")),
        FactorSpec("acceleration_constraint", partial(acceleration_constraint_error, mech), ("q", "v", "a")),
        FactorSpec("multiplier_dynamics", partial(multiplier_dynamics_error, mech), ("q", "v", "a", "l")),
        FactorSpec("forward_dynamics", partial(forward_dynamics_error, mech, ic.rows), ("q", "v", "a")),
        FactorSpec("reduced_dynamics", partial(reduced_dynamics_error, ic), ("q", "v", "zdd")),
        FactorSpec("adams_moulton3", partial(adams_moulton_error, 3, dt), ("q", "q+", "v-", "v", "v+")),
        FactorSpec("adams_moulton4_z", partial(adams_moulton_error, 4, dt, selection=ic.picker),
                   ("q", "q+", "v--", "v-", "v", "v+")),
        FactorSpec("dependent_step", partial(dependent_step_error, mech, np.arange(mech.m)), ("q", "v", "a", "l")),
        FactorSpec("independent_step", partial(independent_step_error, ic), ("q", "v", "a")),
    ]
    if mech.actuators:
        selection = actuator_selection(mech)
        specs += [
            FactorSpec("inverse_dynamics", partial(inverse_dynamics_error, mech, selection), ("q", "v", "a", "l", "f")),
            # every constraint row kept (S = all) so that λ has m entries like the other λ-form factors
            FactorSpec("driven_step", partial(driven_step_error, mech, np.arange(mech.m),
                                              np.array([act.coordinate for act in mech.actuators])),
                       ("q", "v", "a", "l", "f")),
        ]
    return specs
