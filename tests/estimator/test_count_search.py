"""plan.count_search against brute force: on unimodal quantities (falling, then rising) over
integer counts, the smallest count at most a limit (or the count of the lowest value where none
is) equals the one found by evaluating every count of the range."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.plan.count_search import GRID, first_at_most, lowest, smallest_at_most


def _vee(centre: np.ndarray, slope_left: np.ndarray, slope_right: np.ndarray):
    """f(row, k): a V with its lowest point at centre[row] (value 1), falling at slope_left
    before it and rising at slope_right after it; calls are counted."""
    calls = []

    def f(rows: np.ndarray, k: np.ndarray) -> np.ndarray:
        calls.append(k.size)
        c = centre[rows]
        return 1.0 + np.where(k < c, (c - k) * slope_left[rows], (k - c) * slope_right[rows])

    return f, calls


def _brute(f, lo: int, hi: int, row: int, limit: float) -> tuple[int, bool]:
    k = np.arange(lo, hi + 1)
    v = f(np.full(k.size, row), k)
    meets = np.flatnonzero(v <= limit)
    if meets.size:
        return int(k[meets[0]]), True
    return int(k[np.argmin(v)]), False


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 5_000),  # lo
            st.integers(0, 200_000),  # range width
            st.floats(0.0, 1.2),  # centre as a share of the range
            st.floats(1e-6, 1.0),  # slopes
            st.floats(1e-6, 1.0),
            st.floats(0.5, 3.0),  # limit (the lowest value is 1)
        ),
        min_size=1,
        max_size=4,
    )
)
def test_smallest_at_most_is_the_brute_force_answer(rows):
    lo = np.array([r[0] for r in rows], dtype=np.int64)
    hi = lo + np.array([r[1] for r in rows], dtype=np.int64)
    centre = lo + np.array([r[1] * r[2] for r in rows])
    f, _ = _vee(centre, np.array([r[3] for r in rows]), np.array([r[4] for r in rows]))
    limit = np.array([r[5] for r in rows])
    found, met = smallest_at_most(f, lo, hi, limit)
    for i in range(len(rows)):
        if rows[i][1] > 60_000:  # brute force only on ranges it can afford; the others by their values
            v = f(np.array([i, i]), np.array([found[i], max(found[i] - 1, lo[i])]))
            if met[i]:
                assert v[0] <= limit[i] and (found[i] == lo[i] or v[1] > limit[i])
            continue
        assert (int(found[i]), bool(met[i])) == _brute(f, int(lo[i]), int(hi[i]), i, float(limit[i]))


def test_the_lowest_of_a_vee_is_its_point_and_costs_a_few_rounds():
    # hand: a V over 1 .. 131,072 units with its point at 54,321 -> lowest is 54,321
    f, calls = _vee(np.array([54_321.0]), np.array([1e-4]), np.array([3e-4]))
    assert lowest(f, np.array([1]), np.array([131_072])).tolist() == [54_321]
    assert len(calls) <= 8 and sum(calls) <= 8 * (GRID + 1)


def test_the_first_count_at_most_the_limit_on_the_falling_side():
    # hand: f(k) = 1 + (1000 - k) / 100 on [1, 1000]; f <= 3 from k = 800 on
    f, _ = _vee(np.array([1000.0]), np.array([0.01]), np.array([0.01]))
    assert first_at_most(f, np.array([1]), np.array([1000]), 3.0).tolist() == [800]
    # the bracket's bottom meets already: it is the answer
    assert first_at_most(f, np.array([900]), np.array([1000]), 3.0).tolist() == [900]


def test_no_count_meets_gives_the_lowest_and_false():
    f, _ = _vee(np.array([500.0]), np.array([0.01]), np.array([0.01]))
    found, met = smallest_at_most(f, np.array([1]), np.array([10_000]), 0.5)  # the lowest value is 1
    assert found.tolist() == [500] and met.tolist() == [False]
