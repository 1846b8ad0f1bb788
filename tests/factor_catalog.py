"""Every error function of the factors for one mechanism, with the variables it connects: the
product's (estimator.factors, estimator.dynamics) and the numpy reference forms (reference_forms).

Used by the shared Jacobian contract test (tests/estimator/factors/test_factor_jacobians.py) and the
linearization benchmark (scripts/bench_factors.py). A variable is named by its kind (``q``, ``v``,
``a``, ``l``, ``f``, ``zdd``, ``x``, ``xg``, ``xgm``, ``xgml``, ``xgmlc``, ``xl``: q, q̇, q̈, λ, F, z̈, the online
estimator's stacked state [q; q̇; q̈; F; b; λ] with ONLINE_BIAS bias entries, the same with the gravity
error g after F, with g and the mass error μ of each body with mass after F, with g, μ and the length
error ℓ of each body with a distance row after F, with g, μ, ℓ and the friction c of the coordinates
of friction_coordinates after F, and with ℓ alone after F,
estimator.factors.estimation_state) with ``+`` for the next step and ``-`` for the previous one:
``("q", "q+", "v-", "v", "v+")``.
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
from estimator.factors.dynamics_factors import actuator_selection
from estimator.factors.estimation_state import EstimationLayout, dynamics_rows, kinematic_rows
from estimator.factors.independent_coordinates import choose_independent_coordinates, reduced_dynamics_error
from estimator.factors.integrators import trapezoidal_error
from estimator.factors.multistep import adams_moulton_error
from estimator.factors.step_bundle import dependent_step_error, independent_step_error
from estimator.lengths import body_length_terms
from estimator.mass import body_mass_terms
from estimator.model import Mechanism

KEY_OF: dict[str, Callable[[int], int]] = {"q": keys.Q, "v": keys.V, "a": keys.A, "l": keys.L, "f": keys.F,
                                           "zdd": lambda k: gtsam.symbol("x", k), "x": keys.X, "xg": keys.X,
                                           "xgm": keys.X, "xgml": keys.X, "xgmlc": keys.X, "xl": keys.X}
ONLINE_BIAS = 2  # bias entries of the stacked state x (one sensor's)


def friction_coordinates(n: int) -> tuple[int, ...]:
    """The coordinates of the friction states c in the stacked state x of n coordinates: the first and the last."""
    return (0, n - 1)


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
        FactorSpec("dependent_step", partial(dependent_step_error, mech, np.arange(mech.m), None),
                   ("q", "v", "a", "l")),
        FactorSpec("independent_step", partial(independent_step_error, ic), ("q", "v", "a")),
    ]
    if mech.actuators:
        selection = actuator_selection(mech)
        # every constraint row kept (S = all) so that λ has m entries like the other λ-form factors
        rows = tuple(range(mech.m))
        online = EstimationLayout(mech.n, rows, tuple(range(len(mech.actuators))), (ONLINE_BIAS,))
        with_gravity = EstimationLayout(mech.n, rows, online.forces, (ONLINE_BIAS,), gravity=True)
        gravity_selection = np.column_stack((selection, mech.gravity_z[:mech.n]))
        masses = body_mass_terms(mech)
        with_masses = EstimationLayout(mech.n, rows, online.forces, (ONLINE_BIAS,), gravity=True,
                                       masses=len(masses.names))
        lengths = body_length_terms(mech, rows)
        with_lengths = EstimationLayout(mech.n, rows, online.forces, (ONLINE_BIAS,), gravity=True,
                                        masses=len(masses.names), lengths=len(lengths.names))
        lengths_only = EstimationLayout(mech.n, rows, online.forces, (ONLINE_BIAS,), lengths=len(lengths.names))
        with_friction = EstimationLayout(mech.n, rows, online.forces, (ONLINE_BIAS,), gravity=True,
                                         masses=len(masses.names), lengths=len(lengths.names),
                                         frictions=friction_coordinates(mech.n))
        specs += [
            FactorSpec("inverse_dynamics", partial(inverse_dynamics_error, mech, selection), ("q", "v", "a", "l", "f")),
            FactorSpec("driven_step", partial(dependent_step_error, mech, np.arange(mech.m), selection),
                       ("q", "v", "a", "l", "f")),
            FactorSpec("online_dynamics_rows", one_block(partial(dynamics_rows, mech, online, selection, None, None, None)),
                       ("x",)),
            FactorSpec("online_dynamics_rows_gravity",
                       one_block(partial(dynamics_rows, mech, with_gravity, gravity_selection, None, None, None)),
                       ("xg",)),
            FactorSpec("online_dynamics_rows_masses",
                       one_block(partial(dynamics_rows, mech, with_masses, gravity_selection, masses, None, None)),
                       ("xgm",)),
            FactorSpec("online_dynamics_rows_lengths",
                       one_block(partial(dynamics_rows, mech, with_lengths, gravity_selection, masses, lengths, None)),
                       ("xgml",)),
            FactorSpec("online_dynamics_rows_friction",
                       one_block(partial(dynamics_rows, mech, with_friction, gravity_selection, masses, lengths, None)),
                       ("xgmlc",)),
            FactorSpec("online_kinematic_rows", one_block(partial(kinematic_rows, mech, np.array(rows), online, None)),
                       ("x",)),
            FactorSpec("online_kinematic_rows_lengths",
                       one_block(partial(kinematic_rows, mech, np.array(rows), lengths_only, lengths)), ("xl",)),
        ]
    return specs


def one_block(fn: Callable) -> ErrorFunction:
    """An error function of one stacked state whose Jacobian is one matrix, as a list of one block."""

    def wrapped(x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
        error, jacobian = fn(x, jac=jac)
        return error, [jacobian] if jac else None

    return wrapped
