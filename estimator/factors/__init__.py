"""GTSAM factors over vector variables: pure numpy error functions with analytic Jacobians.

Every error function has the signature ``fn(<parameters>, *vectors, jac=True)`` and returns
``(error, jacobians)``: the unwhitened error and, when ``jac``, one Jacobian per vector (else None).
Bind the parameters with ``functools.partial`` and turn the result into a GTSAM factor with
``estimator.factors.adapter.gtsam_factor``; the keys live in ``estimator.factors.keys``.
"""
