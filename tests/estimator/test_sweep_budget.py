"""Sweeps sized by budget (cluster.budget, in the base or on an axis): every row is what estimate()
plans for that row's scenario (plan.batch_budget: the fastest cluster the budget buys), "the budget
buys more than the plan takes" included, a price axis changes what a budget buys, and the searches a
sweep may ask are capped (limits.MAX_SWEEP_BUDGET_SIZINGS)."""

from __future__ import annotations

import numpy as np
import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.dotted import get_path
from estimator.errors import ScenarioError
from estimator.limits import MAX_SWEEP_BUDGET_SIZINGS
from estimator.model.compute import SECONDS_PER_DAY
from estimator.plan.batch import GOODPUT_FIELDS, LAYOUT_FIELDS, SUMMARY_FIELDS, evaluate_columns
from estimator.plan.batch_budget import MOST_CARDS_FIELD
from estimator.plan.batch_reasons import BUYS_NOTHING, REASONS
from estimator.plan.compose import estimate

# tests/estimator/test_budget.py's article example: Llama 3.1 70B, 500B tokens on Ascend 910B2, CNY
ARTICLE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cost": {"currency": "CNY"},
    "cluster": {"budget": 50e6},
}
BUDGET = 50e6
ASCEND_910B2_BF16_PEAK = 354e12  # FLOP/s, the catalog's dense BF16 peak
LLAMA_405B = {  # MFU predicted, failures counted
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"target_days": 30},
}


def _rows(base: dict, axes: dict) -> tuple[list[dict], dict]:
    """Each row's scenario (estimator.contract.sweep.scenario_at, what "Full estimate" plans) and the
    sweep path's columns for all of them."""
    _, doc, parsed = estimator_sweep.validate_sweep({"name": "b", "base": base, "axes": axes})
    total = estimator_sweep.scenario_count(parsed)
    scenarios = [estimator_sweep.scenario_at(doc, parsed, i) for i in range(total)]
    return scenarios, evaluate_columns(doc, estimator_sweep.decode(parsed, 0, total))


def _assert_rows_are_estimates(base: dict, axes: dict) -> tuple[list[str | None], dict]:
    """Every row equals estimate() of its scenario: the summary, goodput and layout figures and the
    most the budget buys; a row estimate() refuses has no figures and that refusal's reason. Returns
    each row's refusal code (None where it plans) and the columns."""
    scenarios, out = _rows(base, axes)
    codes: list[str | None] = []
    for i, scenario in enumerate(scenarios):
        try:
            result = estimate(scenario)["result"]
        except ScenarioError as exc:
            codes.append(exc.errors[0].code)
            assert not out["ok"][i], i
            assert np.isnan(out["compute.cards"][i]) and np.isnan(out[MOST_CARDS_FIELD][i]), i
            continue
        codes.append(None)
        assert out["ok"][i], (i, out["error"][i])
        for f in (*SUMMARY_FIELDS, *GOODPUT_FIELDS):
            assert out[f][i] == pytest.approx(get_path(result, f), rel=1e-9), (i, f)
        for f in LAYOUT_FIELDS:
            if f != "parallelism.recompute" and not np.isnan(out[f][i]):
                assert out[f][i] == get_path(result, f), (i, f)
        most = result["budget"]["affords"].get("most_cards")
        assert (np.isnan(out[MOST_CARDS_FIELD][i]) and most is None) or out[MOST_CARDS_FIELD][i] == most, i
    return codes, out


def test_a_server_price_axis_changes_what_the_budget_buys_as_computed_by_hand():
    # An MFU of 0.4 given, failures off: the budget buys the most whole servers whose capex fits (the
    # fastest at one MFU). At 1.5 M CNY a server 29 servers cost 43.5 M, with their network (5.34 M)
    # and storage (0.38 M) 49.22 M <= 50 M; a 30th adds 1.5 M and the network and storage never
    # shrink as servers are added: >= 45.0 + 5.34 + 0.38 = 50.72 M > 50 M. At 2 M: 22 servers, 44 M,
    # and 23 x 2 M alone with that network is 51.4 M. At 5 M: 9 servers, 45 M; 10 are 50 M alone.
    # The electricity price changes no capex: the same cards at both.
    base = {**ARTICLE, "efficiency": {"mfu": 0.4}, "reliability": {"failures": False}}
    axes = {"cost.server_price": [1.5e6, 2e6, 5e6], "cost.electricity_per_kwh": [0.5, 1.0]}
    _, out = _rows(base, axes)
    assert out["ok"].all()
    assert out["compute.nodes"].tolist() == [29, 29, 22, 22, 9, 9]
    assert out["compute.cards"].tolist() == [232, 232, 176, 176, 72, 72]  # 8 cards a server
    price = np.repeat([1.5e6, 2e6, 5e6], 2)
    assert out["cost.capex.compute"] == pytest.approx(out["compute.nodes"] * price, rel=1e-12)
    assert (out["cost.capex.total"] <= BUDGET).all()
    rest = out["cost.capex.network"] + out["cost.capex.storage"]
    assert ((out["compute.nodes"] + 1) * price + rest > BUDGET).all()
    # the days at the MFU given: training FLOP / (cards x 354 TFLOP/s x 0.4), 85.9 days on 232 cards
    days = out["compute.training_flop"] / (
        out["compute.cards"] * ASCEND_910B2_BF16_PEAK * 0.4 * SECONDS_PER_DAY
    )
    assert out["compute.wall_clock_days"] == pytest.approx(days, rel=1e-12)
    assert out["compute.wall_clock_days"][0] == pytest.approx(85.92, abs=0.01)
    assert np.isnan(out[MOST_CARDS_FIELD]).all()  # at one MFU the most it buys is the fastest


def test_rows_are_the_fastest_cluster_the_budget_buys_as_estimate_plans_them():
    # Llama 3.1 405B on H100, MFU predicted, failures counted: 0.1, 0.5 and 2 G USD, two server
    # prices; a 1,000 USD budget buys no server (estimate()'s budget-buys-no-cluster)
    axes = {"cluster.budget": [1e3, 1e8, 5e8, 2e9], "cost.server_price": [250_000, 400_000]}
    codes, out = _assert_rows_are_estimates(LLAMA_405B, axes)
    assert codes == ["budget-buys-no-cluster"] * 2 + [None] * 6
    assert out["reason_code"].tolist()[:2] == [BUYS_NOTHING] * 2  # estimate()'s code
    assert out["error"][0] == out["error"][1] == REASONS[BUYS_NOTHING]
    assert out["reason_cards"][:2].tolist() == [8.0, 8.0]  # the smallest cluster: one 8-card server
    assert np.isnan(out["compute.deadline_miss_probability"]).all()  # no deadline, no chance of missing it
    # the plan takes fewer cards than the most the budget buys where they train faster, and a
    # dearer server buys fewer cards
    planned = out["ok"]
    assert (out[MOST_CARDS_FIELD][planned] > out["compute.cards"][planned]).all()
    assert out[MOST_CARDS_FIELD][2] > out[MOST_CARDS_FIELD][3]


def test_budget_rows_with_an_mfu_and_tokens_swept_are_estimates():
    axes = {"training.tokens": [5e11, 2e12], "efficiency.mfu": [0.3, 0.45], "cluster.budget": [5e7, 5e8]}
    codes, _ = _assert_rows_are_estimates(ARTICLE, axes)
    assert codes == [None] * 8


def test_a_budget_axis_replaces_the_deadline_and_the_cards_replace_the_budget():
    base = {**LLAMA_405B, "cluster": {"target_days": 30, "deadline_confidence": 0.9}}
    _, doc, _ = estimator_sweep.validate_sweep({"name": "b", "base": base, "axes": {"cluster.budget": [1e8]}})
    assert doc["cluster"] == {}
    _, doc, _ = estimator_sweep.validate_sweep(
        {"name": "c", "base": ARTICLE, "axes": {"cluster.cards": [64]}}
    )
    assert doc["cluster"] == {}
    with pytest.raises(ScenarioError) as err:
        estimator_sweep.validate_sweep(
            {"name": "c", "base": ARTICLE, "axes": {"cluster.cards": [64], "cluster.budget": [1e8]}}
        )
    assert err.value.errors[0].field == "axes.cluster.cards"


def test_the_budget_searches_a_sweep_asks_are_within_the_work_budget():
    # 101 token counts x 100 budgets = 10,100 searches > 10,000; running prices add rows, not searches
    # (100 x 100 x 3 = 10,000 searches), a server price adds searches (100 x 100 x 2 = 20,000)
    tokens = {"start": 1e12, "stop": 2e12, "step": 1e10}  # 101 values
    budgets = {"start": 1e7, "stop": 1e9, "step": 1e7}  # 100 values
    assert MAX_SWEEP_BUDGET_SIZINGS == 10_000

    def refusal(axes: dict) -> tuple:
        with pytest.raises(ScenarioError) as err:
            estimator_sweep.validate_sweep({"name": "b", "base": ARTICLE, "axes": axes})
        (e,) = err.value.errors
        return e.field, e.code, e.params

    assert refusal({"training.tokens": tokens, "cluster.budget": budgets}) == (
        "axes",
        "too-many-budget-sizings",
        {"sizings": 10_100, "max_sizings": 10_000},
    )
    fewer = {**tokens, "stop": 1.99e12}  # 100 values
    running = {"cost.electricity_per_kwh": [0.5, 1.0, 2.0]}
    _, doc, axes = estimator_sweep.validate_sweep(
        {
            "name": "b",
            "base": ARTICLE,
            "axes": {"training.tokens": fewer, "cluster.budget": budgets, **running},
        }
    )
    assert estimator_sweep.budget_sizings(doc, axes) == 10_000
    assert estimator_sweep.scenario_count(axes) == 30_000
    servers = {"cost.server_price": [1.5e6, 2e6]}
    assert refusal({"training.tokens": fewer, "cluster.budget": budgets, **servers})[2] == {
        "sizings": 20_000,
        "max_sizings": 10_000,
    }
    # sized by cards or by deadline: no budget search
    by_cards = {**ARTICLE, "cluster": {"cards": 64}}
    _, doc, axes = estimator_sweep.validate_sweep(
        {"name": "b", "base": by_cards, "axes": {"training.tokens": tokens}}
    )
    assert estimator_sweep.budget_sizings(doc, axes) == 0 == estimator_sweep.searched_sizings(doc, axes)
