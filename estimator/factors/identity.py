"""Cached read-only identity blocks for the linear factors' constant Jacobians."""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def scaled_identity(n: int, scale: float = 1.0) -> np.ndarray:
    """scale · I (n x n), read-only: shared by every call, copied by GTSAM."""
    block = scale * np.eye(n)
    block.flags.writeable = False
    return block
