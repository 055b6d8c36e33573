"""Budget sizing (cluster.budget), the budget block and the probability of missing a deadline."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.money.budget import deadline_miss_probability, largest_within, status, triangular_cdf
from estimator.plan.compose import estimate

# The source article's example (errata applied), priced in CNY with a 50 M CNY budget (issue 11).
ARTICLE = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cost": {"currency": "CNY"},
}
BUDGET = 50e6


def test_largest_within_takes_the_largest_affordable_size():
    sizes = np.array([8, 16, 24, 32])
    assert largest_within(sizes, np.array([1.0, 2.0, 3.0, 4.0]), 3.0) == 2  # 3.0 <= 3.0 fits
    assert largest_within(sizes, np.array([1.0, 2.0, 3.0, 4.0]), 2.99) == 1
    assert largest_within(sizes, np.array([5.0, 6.0, 7.0, 8.0]), 4.0) is None


def test_status_over_and_within():
    assert status(87.0, 50.0) == {
        "budget": 50.0,
        "capex": 87.0,
        "within": False,
        "over_by": 37.0,
        "headroom": 0.0,
        "share": 87.0 / 50.0,
    }
    assert status(40.0, 50.0)["within"] and status(40.0, 50.0)["headroom"] == 10.0


def test_triangular_cdf_by_hand():
    # Triangular(0, 0.5, 1): F(0.25) = 0.25^2 / (1 x 0.5) = 0.125; F(mode) = 0.5; F(0.75) = 1 - 0.125
    assert triangular_cdf([0.0, 0.25, 0.5, 0.75, 1.0], 0, 0.5, 1) == pytest.approx([0, 0.125, 0.5, 0.875, 1])


def test_deadline_on_the_likely_mfu_is_an_even_chance():
    """Issue 11: '80% likely between 26.3 and 34.7 days' for a 30-day deadline is about an even
    chance of missing it. With MFU +-25% around the likely value and the plan at 30.0 days at the
    likely MFU, the run is late when MFU < likely: F(mode) = 0.25 / 0.5 = 0.5."""
    assert deadline_miss_probability(30.0, 30.0, 0.39, 0.52, 0.65) == pytest.approx(0.5)
    # 24 days at the likely MFU: late only when MFU < 0.8 x likely = 0.416; (0.026^2) / (0.26 x 0.13)
    assert deadline_miss_probability(24.0, 30.0, 0.39, 0.52, 0.65) == pytest.approx(0.026**2 / (0.26 * 0.13))
    assert deadline_miss_probability(10.0, 30.0, 0.39, 0.52, 0.65) == 0.0


def test_sizing_by_budget_returns_the_largest_plan_within_budget():
    out = estimate({**ARTICLE, "cluster": {"budget": BUDGET}})["result"]
    cards, per_node = out["compute"]["cards"], out["compute"]["cards_per_node"]
    assert out["cost"]["capex"]["total"] <= BUDGET
    assert out["budget"]["within"] and out["budget"]["sized_by_budget"]
    bigger = estimate({**ARTICLE, "cluster": {"cards": cards + per_node}})["result"]
    assert bigger["cost"]["capex"]["total"] > BUDGET  # one more server breaks the budget
    # its days: the same work at its own cards and MFU (card-hours / 24 / cards)
    assert out["compute"]["wall_clock_days"] == pytest.approx(
        out["compute"]["accelerator_hours"] / 24 / cards
    )


def test_over_budget_plan_says_by_how_much_and_what_the_budget_buys():
    out = estimate({**ARTICLE, "cost": {"currency": "CNY", "budget": BUDGET}, "cluster": {"target_days": 30}})
    r = out["result"]
    b = r["budget"]
    assert not b["within"]
    assert b["over_by"] == pytest.approx(r["cost"]["capex"]["total"] - BUDGET)
    by_budget = estimate({**ARTICLE, "cluster": {"budget": BUDGET}})["result"]
    assert b["affords"]["capex"] <= BUDGET
    # one number per question: what the budget buys is the budget-sized plan, cards, capex and days
    # (its days with failures counted; compute_days without them)
    assert b["affords"]["cards"] == by_budget["compute"]["cards"]
    assert b["affords"]["capex"] == by_budget["cost"]["capex"]["total"]
    assert b["affords"]["days"] == by_budget["goodput"]["wall_clock_days"]
    assert b["affords"]["compute_days"] == by_budget["compute"]["wall_clock_days"]
    # sized with the fewest cards that meet the deadline with failures counted (29.3 of 30 days with
    # engine 2.16.0): the run is late when MFU < likely x days / target, the triangle's CDF there
    days = r["goodput"]["wall_clock_days"]
    assert r["compute"]["wall_clock_days"] < days <= 30.0
    lo, likely, hi = r["uncertainty"]["inputs"]["mfu"]
    x = likely * days / 30.0
    cdf = (
        (x - lo) ** 2 / ((hi - lo) * (likely - lo))
        if x <= likely
        else 1 - (hi - x) ** 2 / ((hi - lo) * (hi - likely))
    )
    assert r["compute"]["deadline_miss_probability"] == pytest.approx(cdf, rel=1e-9)
    assert 0.2 < cdf < 0.7  # one sizing step of slack: the miss is far from unlikely


def test_budget_too_small_and_two_sizings_are_rejected():
    with pytest.raises(ScenarioError) as exc:
        estimate({**ARTICLE, "cluster": {"budget": 1000}})
    assert exc.value.errors[0].field == "cluster.budget"
    with pytest.raises(ScenarioError) as exc:
        estimate({**ARTICLE, "cluster": {"budget": BUDGET, "cards": 64}})
    assert exc.value.errors[0].field == "cluster"


@pytest.mark.parametrize("sizing", [{"target_days": 30}, {"target_days": 5}, {"budget": BUDGET}])
def test_what_50m_cny_buys_is_one_figure_in_every_report(sizing):
    """Issue 20: the article's 70B example with a 50 M CNY budget said 54.8 days (30-day plan's
    block), 64.9 (5-day plan's block) and 57.5 (the budget-sized plan). Now each block is the
    budget-sized plan: 264 cards (33 Atlas 800T A2 at ~1.49 M CNY each: 33 x 1.49 M = 49.3 M <= 50 M,
    34 would cost 50.8 M), and the same days everywhere."""
    cost = {"currency": "CNY", "budget": BUDGET}
    by_budget = estimate({**ARTICLE, "cost": cost, "cluster": {"budget": BUDGET}})["result"]
    out = estimate({**ARTICLE, "cost": cost, "cluster": sizing})["result"]
    affords = out["budget"]["affords"]
    assert affords["cards"] == 264 and affords["nodes"] == 33
    # the budget-sized plan's days with failures counted; its compute days are its own work on its
    # own cards
    assert affords["days"] == by_budget["goodput"]["wall_clock_days"]
    assert affords["compute_days"] == by_budget["compute"]["wall_clock_days"]
    assert affords["compute_days"] == pytest.approx(by_budget["compute"]["accelerator_hours"] / 24 / 264)
