"""Prior on a vector variable: e = x − x̄."""

from __future__ import annotations

import numpy as np

from estimator.factors.identity import scaled_identity


def prior_error(mean: np.ndarray, x: np.ndarray, jac: bool = True) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """e = x − mean; ∂e/∂x = I."""
    return x - mean, [scaled_identity(x.shape[0])] if jac else None
