"""Array types of the vectorized core: every model function takes floats or arrays of candidates."""

from __future__ import annotations

from collections.abc import Sequence
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


def unique_sorted(x: npt.ArrayLike) -> npt.NDArray[Any]:
    """The distinct values of x, flattened and sorted: `np.unique(x)` for the core's integer
    arrays (no NaN, no mask). np.unique's plain form asks numpy.ma whether x is masked, which
    imports numpy.ma (about 7 ms of a cold `python -m estimator plan`, issue 27); this is the same
    sort and neighbour comparison without it."""
    a = np.sort(np.asarray(x).ravel())
    keep = np.ones(a.size, dtype=bool)
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def percentiles(x: npt.NDArray[Any], q: Sequence[float] | FloatArray) -> FloatArray:
    """`np.percentile(x, q)` of a sample (numpy's default "linear" method: Hyndman & Fan 1996,
    type 7; the value at the virtual index (n - 1)·q/100 of the sorted sample, interpolated
    between its two neighbours), computed with numpy's own arithmetic so the numbers are the same
    to the last bit. np.percentile partitions the sample at np.unique of those indexes, which
    imports numpy.ma (about 7 ms of a cold `python -m estimator plan`, issue 27); this partitions
    at the indexes itself, the smallest and the largest (np.partition puts NaN last, as a sort
    does): the same values at those places as a full sort, at an eighth of its cost for 10,000
    draws. Anything but a finite, non-empty float sample goes to np.percentile itself."""
    flat = np.asarray(x).ravel()
    quant = np.true_divide(arr(q), 100)
    n = flat.size
    if flat.dtype != np.float64 or n == 0 or quant.ndim != 1 or (quant < 0).any() or (quant > 1).any():
        return arr(np.percentile(x, q))
    virtual = (n - 1) * quant  # numpy's "linear" get_virtual_index
    below = np.floor(virtual)
    above = below + 1
    top = virtual >= n - 1  # numpy's _get_indexes: the last value on both sides
    below[top], above[top] = -1, -1
    low, high = below.astype(np.intp), above.astype(np.intp)
    kth = sorted({0, n - 1, *(low % n).tolist(), *(high % n).tolist()})  # np.unique imports numpy.ma
    a = np.partition(flat, kth)
    if not (np.isfinite(a[0]) and np.isfinite(a[-1])):  # an infinity or a NaN (last, as sort puts it)
        return arr(np.percentile(x, q))
    t = virtual - low  # numpy's _get_gamma
    lo, hi = a[low], a[high]
    diff = hi - lo  # numpy's _lerp: from the nearer neighbour
    out = lo + diff * t
    np.subtract(hi, diff * (1 - t), out=out, where=t >= 0.5)
    return arr(out)
