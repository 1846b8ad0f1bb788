"""The mass-error states of a URDF model (EstimatorConfig ``mass_sigma``; estimator.spatial.link_masses):
whether they keep the model's total mass.

A common factor of every link's inertia scales the whole inverse dynamics: beside unknown drive forces
and with readings of the motion only, it is not seen (the planar design keeps the total,
estimator.mass). A joint torque or force-torque sensor reads the joint wrenches themselves, which carry
that factor: with one, the states leave the total free (P = I).
"""

from __future__ import annotations

from collections.abc import Sequence

from estimator.mass import BodyMassTerms
from estimator.spatial.link_masses import LinkMassTerms
from sensors.base import Sensor

LOAD_KINDS = ("joint_torque", "force_torque")  # the sensor kinds that read a joint wrench


def mass_terms(masses: BodyMassTerms | LinkMassTerms | None, sensors: Sequence[Sensor]
               ) -> BodyMassTerms | LinkMassTerms | None:
    """``masses``, a URDF model's with the total free when a sensor of LOAD_KINDS reads a joint wrench."""
    if isinstance(masses, LinkMassTerms) and any(s.params.kind in LOAD_KINDS for s in sensors):
        return masses.with_total(True)
    return masses
