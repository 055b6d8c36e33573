"""The headline's cluster-cost line and the budget block at the top of the report say one thing:
within the budget or over it by how much, both from the result's budget section (money.budget.status),
not a second comparison of their own. A budget the cluster's capex meets to float noise (a budget
typed as the capex a sweep's CSV printed) is within it in the block, so the line must not read
"over by $0"."""

from __future__ import annotations

import copy

from django.utils import translation

from estimator.plan.compose import estimate
from reports import formatting as f
from reports.summary import headline

SCENARIO = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 512},
    "efficiency": {"mfu": 0.4},
}


def _capex_why(scenario: dict, result: dict) -> str:
    with translation.override("en"):
        return next(item["why"] for item in headline(scenario, result) if item["key"] == "capex")


def test_a_budget_met_to_float_noise_reads_within_as_the_block_does():
    capex = estimate(copy.deepcopy(SCENARIO))["result"]["cost"]["capex"]["total"]
    scenario = {**SCENARIO, "cost": {"budget": capex * (1 - 1e-15)}}  # a few ulps below the capex
    result = estimate(copy.deepcopy(scenario))["result"]
    assert result["cost"]["capex"]["total"] > result["budget"]["budget"]  # above it by float noise
    assert result["budget"]["within"] is True  # the block: within (money.budget.status)
    why = _capex_why(scenario, result)
    assert f"Within the budget of {f.money(result['budget']['budget'], 'USD')}." in why
    assert "Over the budget" not in why


def test_over_the_budget_says_by_the_result_s_over_by():
    scenario = {**SCENARIO, "cost": {"budget": 1e6}}
    result = estimate(copy.deepcopy(scenario))["result"]
    assert result["budget"]["within"] is False
    over = result["cost"]["capex"]["total"] - 1e6  # by hand: capex minus the budget
    assert f"by {f.money(over, 'USD')}." in _capex_why(scenario, result)
