"""The layout search's wall-clock budget (estimator.limits.SEARCH_SECONDS): past it the search ranks
the layouts it has timed and says so; within it, chunked timing changes nothing."""

import pytest

from estimator.layout import search as layout
from estimator.plan.compose import estimate

SCENARIO = {
    "model": {"preset": "deepseek-v3"},
    "training": {"tokens": 1e12, "seq_len": 4096},
    "hardware": {"accelerator": "h800-sxm"},
    "cluster": {"cards": 2048},
}


def test_chunked_timing_equals_one_pass(monkeypatch):
    whole = estimate(SCENARIO)["result"]["parallelism"]
    monkeypatch.setattr(layout, "SEARCH_CHUNK", 997)  # many chunks, budget not reached
    chunked = estimate(SCENARIO)["result"]["parallelism"]
    assert chunked == whole


def test_budget_spent_returns_the_best_timed_so_far_with_a_warning(monkeypatch):
    monkeypatch.setattr(layout, "SEARCH_CHUNK", 1000)
    monkeypatch.setattr(layout, "SEARCH_SECONDS", 0.0)  # stop after the first chunk
    out = estimate(SCENARIO)["result"]
    warning = next(w for w in out["warnings"] if w["code"] == "layout-search-timed-out")
    assert warning["params"]["timed"] == 1000
    assert warning["params"]["feasible"] > 1000
    assert out["parallelism"] is not None and out["memory"]["fits"] is True
    # the layout shown is the best of the first 1,000 that fit, never better than the full search's
    monkeypatch.setattr(layout, "SEARCH_SECONDS", 1e9)
    full = estimate(SCENARIO)["result"]["parallelism"]
    assert out["parallelism"]["tokens_per_s"] <= full["tokens_per_s"] * 1.02 + 1e-9
    assert not any(w["code"] == "layout-search-timed-out" for w in estimate(SCENARIO)["result"]["warnings"])


def test_the_search_budget_is_stated():
    from estimator import limits

    assert pytest.approx(2.0) == limits.SEARCH_SECONDS
