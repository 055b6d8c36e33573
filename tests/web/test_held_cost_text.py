"""The report says what the run's cost and energy cover: the wall clock with failures, when they are
counted (engine 2.45.0, docs/goodput.md#what-the-run-costs), in the reader's language."""

from __future__ import annotations

import copy

from django.utils import translation

from estimator.plan.compose import estimate
from reports import formatting as f
from reports.summary import headline, layout_label

SCENARIO = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 512},
    "efficiency": {"mfu": 0.4},
}


def _why(result: dict, key: str) -> str:
    return next(item["why"] for item in headline(SCENARIO, result) if item["key"] == key)


def test_the_cost_and_power_rows_name_the_held_days():
    result = estimate(copy.deepcopy(SCENARIO))["result"]
    days = f.days(result["goodput"]["wall_clock_days"])
    hours = f.big(result["cost"]["card_hours"])
    with translation.override("en"):
        for key in ("capex", "power"):
            assert f"for the {days} the cluster is held, failures counted ({hours} card-hours" in _why(
                result, key
            )
    with translation.override("zh-hans"):
        assert "计入故障" in _why(result, "capex")


def test_no_held_sentence_without_failures_or_for_an_older_result():
    free = estimate({**copy.deepcopy(SCENARIO), "reliability": {"failures": False}})["result"]
    old = estimate(copy.deepcopy(SCENARIO))["result"]
    # a result stored before 2.45.0 has no assumption.held-time: its cost covered the computing alone
    old["assumptions"] = [a for a in old["assumptions"] if a["code"] != "assumption.held-time"]
    with translation.override("en"):
        for result in (free, old):
            assert "the cluster is held" not in _why(result, "capex")
            assert "the cluster is held" not in _why(result, "power")


def test_the_layout_label_names_context_parallelism():
    par = {"tp": 8, "pp": 2, "dp": 8, "ep": 1}
    assert layout_label({"parallelism": {**par, "cp": 8}}) == "TP=8 · PP=2 · CP=8 · DP=8 · EP=1"
    assert layout_label({"parallelism": {**par, "cp": 1}}) == "TP=8 · PP=2 · DP=8 · EP=1"
