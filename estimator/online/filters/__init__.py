"""Filter baselines behind the online estimator's interface (``estimator.kind``): the errorEKF
(error_ekf), on the manifold tools of manifold, run by online_filter."""
