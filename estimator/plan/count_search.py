"""The fewest whole units at which a quantity that falls and then rises with the count is at most a
limit, or the count where it is lowest when no count reaches the limit: the deadline sizing with an
MFU given (the wall clock with failures counted falls as cards are added until interruptions, which
grow with the cards, outweigh them; the chance of missing the deadline likewise). Vectorized over
rows (a sweep's scenarios), each with its own range: every round evaluates GRID points of each
unsettled row's bracket in one call. Exact for a unimodal quantity (falling, then rising, plateaus
aside). Units: counts of whole units (the caller's multiple of cards).

`f(rows, counts)` takes two equal-length integer arrays (an index into the rows, a count of units)
and returns the quantity at each pair."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
Quantity = Callable[[IntArray, IntArray], npt.NDArray[np.float64]]

GRID = 32  # points per row and round: a bracket narrows about GRID / 2 times a round


def smallest_at_most(
    f: Quantity, lo: IntArray, hi: IntArray, limit: npt.ArrayLike
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Per row: (the smallest count in [lo, hi] where f <= limit, True), or, where no count of the
    range gets there, (the count where f is lowest, False). f is unimodal on each range."""
    best, value = _lowest(f, lo, hi)
    met = np.asarray(value <= np.broadcast_to(limit, lo.shape))
    out = best.copy()
    if met.any():
        at = np.flatnonzero(met)
        out[at] = first_at_most(
            lambda i, k: f(at[i], k), lo[at], best[at], np.broadcast_to(limit, lo.shape)[at]
        )
    return out, met


def lowest(f: Quantity, lo: IntArray, hi: IntArray) -> IntArray:
    """Per row, the count in [lo, hi] where the unimodal f is lowest (the first of equals): the
    bracket narrows to the grid points either side of the grid's lowest until it holds at most GRID
    counts, which are all evaluated."""
    return _lowest(f, lo, hi)[0]


def _lowest(f: Quantity, lo: IntArray, hi: IntArray) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """lowest's counts and f there."""
    lo, hi = np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
    while True:
        wide = np.flatnonzero(hi - lo > GRID)
        if wide.size == 0:
            break
        grid = _grid(lo[wide], hi[wide])
        j = np.argmin(_values(f, wide, grid), axis=1)
        at = np.arange(wide.size)
        lo[wide] = grid[at, np.maximum(j - 1, 0)]
        hi[wide] = grid[at, np.minimum(j + 1, GRID - 1)]
    counts, values = _every_count(f, lo, hi)
    rows, j = np.arange(lo.size), np.argmin(values, axis=1)
    return counts[rows, j], values[rows, j]


def first_at_most(f: Quantity, lo: IntArray, hi: IntArray, limit: npt.ArrayLike) -> IntArray:
    """Per row, the smallest count in [lo, hi] where f <= limit, given f(hi) <= limit and f not
    rising on [lo, hi] (the falling side of a unimodal f): the bracket narrows to the last grid
    point above the limit and the first at most it."""
    lo, hi = np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
    limit = np.broadcast_to(np.asarray(limit, dtype=float), lo.shape)
    while True:
        wide = np.flatnonzero(hi - lo > GRID)
        if wide.size == 0:
            break
        grid = _grid(lo[wide], hi[wide])
        ok = _values(f, wide, grid) <= limit[wide, None]
        ok[:, -1] = True  # the bracket's top meets
        j = np.argmax(ok, axis=1)
        at = np.arange(wide.size)
        lo[wide] = grid[at, np.maximum(j - 1, 0)]
        hi[wide] = grid[at, j]
    counts, values = _every_count(f, lo, hi)
    ok = values <= limit[:, None]
    ok[np.arange(lo.size), (hi - lo)] = True
    out: IntArray = counts[np.arange(lo.size), np.argmax(ok, axis=1)]
    return out


def _grid(lo: IntArray, hi: IntArray) -> IntArray:
    """GRID strictly rising counts from lo to hi per row (hi - lo > GRID), geometric where the
    range spans a large ratio (the quantities change with the count's logarithm), at least one
    apart."""
    points = np.floor(np.geomspace(np.maximum(lo, 1), hi, GRID, axis=1)).astype(np.int64)
    points[:, 0] = lo
    step = np.arange(GRID)
    points = np.maximum.accumulate(points - step, axis=1) + step  # at least one apart
    points[:, -1] = hi
    return np.minimum(points, hi[:, None])


def _values(f: Quantity, rows: IntArray, counts: IntArray) -> npt.NDArray[np.float64]:
    """f at every count of each row's grid (rows: which rows, counts: one row of counts each)."""
    width = counts.shape[1]
    return np.asarray(f(np.repeat(rows, width), counts.ravel()), dtype=float).reshape(rows.size, width)


def _every_count(f: Quantity, lo: IntArray, hi: IntArray) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Every count of each row's bracket (at most GRID + 1 of them) and f there, +inf past hi."""
    width = int((hi - lo).max(initial=0)) + 1
    counts = lo[:, None] + np.arange(width)[None, :]
    past = counts > hi[:, None]
    counts = np.minimum(counts, hi[:, None])
    values = _values(f, np.arange(lo.size), counts)
    return counts, np.where(past, np.inf, values)
