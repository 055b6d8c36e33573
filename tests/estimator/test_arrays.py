"""estimator.arrays' stand-ins for numpy functions that import numpy.ma (issue 27, cold start):
the same numbers as numpy's own, to the last bit, and the values worked by hand."""

import numpy as np
import pytest

from estimator.arrays import percentiles, unique_sorted


def test_unique_sorted_by_hand():
    assert unique_sorted(np.array([5, 3, 5, 1, 3])).tolist() == [1, 3, 5]
    assert unique_sorted(np.array([[2, 2], [7, 0]])).tolist() == [0, 2, 7]  # flattened, as np.unique
    assert unique_sorted(np.array([], dtype=np.int64)).tolist() == []


@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_unique_sorted_is_np_unique(n):
    x = np.random.default_rng(n).integers(-50, 50, size=n)
    out = unique_sorted(x)
    assert out.dtype == np.unique(x).dtype and np.array_equal(out, np.unique(x))


def test_percentiles_by_hand():
    # sorted 10, 20, 30, 40, 50: the 10th percentile sits at index 0.4 (0.4 of the way 10 -> 20),
    # the median at index 2, the 90th at index 3.6; 0 and 100 are the ends
    x = np.array([30.0, 10.0, 50.0, 20.0, 40.0])
    assert percentiles(x, [10, 50, 90, 0, 100]).tolist() == pytest.approx([14.0, 30.0, 46.0, 10.0, 50.0])


@pytest.mark.parametrize("n", [1, 2, 3, 10, 999, 10_000])
def test_percentiles_are_np_percentile_to_the_bit(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        x = rng.standard_normal(n) * rng.uniform(0.1, 1e6) + rng.uniform(-1e3, 1e3)
        for q in ([10, 50, 90], [0, 100], [33.3, 66.7, 99.99, 0.01], np.linspace(0, 100, 41)):
            assert np.array_equal(percentiles(x, q), np.percentile(x, q))


def test_percentiles_leave_other_samples_to_numpy():
    with_nan = np.array([1.0, np.nan, 3.0])
    assert np.isnan(percentiles(with_nan, [50])).all()  # numpy's answer: NaN propagates
    ints = np.array([4, 1, 3])
    assert np.array_equal(percentiles(ints, [10, 50]), np.percentile(ints, [10, 50]))
