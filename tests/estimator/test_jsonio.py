"""estimator.jsonio.to_jsonable: numpy values and non-finite floats become plain JSON values, the
plain leaves (str, int, bool, None, finite float) stay the same objects."""

import math

import numpy as np

from estimator.jsonio import to_jsonable


def test_plain_leaves_stay_as_they_are():
    for leaf in ("x", 3, True, False, None, 2.5, -0.0):
        out = to_jsonable(leaf)
        assert out is leaf


def test_non_finite_floats_become_none_plain_or_numpy():
    for value in (math.inf, -math.inf, math.nan, np.float64("inf"), np.float32("nan")):
        assert to_jsonable(value) is None


def test_numpy_values_become_python_values_inside_containers():
    doc = {1: (np.int64(7), np.bool_(True)), "a": [np.float64(0.5), np.array([1, 2])], "b": {"c": "d"}}
    out = to_jsonable(doc)
    assert out == {"1": [7, True], "a": [0.5, [1, 2]], "b": {"c": "d"}}
    assert type(out["1"][0]) is int and type(out["1"][1]) is bool and type(out["a"][0]) is float
