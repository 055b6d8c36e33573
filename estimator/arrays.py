"""Array types of the vectorized core: every model function takes floats or arrays of candidates."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]  # counts: cards, drives, switches
# a number or an array of numbers (candidates broadcast together; integer arrays too)
Num = npt.NDArray[Any] | float


def arr(x: npt.ArrayLike) -> FloatArray:
    """x as a float array (numpy's ufuncs are untyped in the stubs; this pins the result type)."""
    return np.asarray(x, dtype=float)
