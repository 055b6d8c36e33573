"""The cards-against-days chart's cost axis reads compact money in the plan's currency from its
first tick (CN¥0, CN¥100M; ¥0, ¥1亿), never CN¥0.00 (reports.charts.money_tick)."""

from __future__ import annotations

import pytest
from django.utils import translation

from estimator.plan.compose import estimate
from reports import charts, count_points

# the article's example (tests/web/test_pages.py ARTICLE_50M), planned for 30 days
SCENARIO = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cost": {"currency": "CNY", "budget": 5e7},
    "cluster": {"target_days": 30},
}


@pytest.fixture(scope="module")
def planned():
    result = estimate(SCENARIO)["result"]
    return result, count_points.points(SCENARIO, None, result)


def test_the_cost_line_is_in_the_plans_currency(planned):
    result, points = planned
    # the point at the plan's own size costs what its headline says (CNY, not USD or 10^n of it)
    (own,) = [p for p in points if p["cards"] == result["compute"]["cards"]]
    assert own["capex_in_currency"] == pytest.approx(result["cost"]["capex"]["total"])


@pytest.mark.parametrize(("lang", "first", "second"), [("en", "CN¥0", "CN¥100M"), ("zh-hans", "¥0", "¥1亿")])
def test_the_cost_axis_reads_compact_money(planned, lang, first, second):
    result, points = planned
    with translation.override(lang):
        axis = charts.cards_vs_days(result, points).layout.yaxis2
    assert axis.tickvals[:2] == (0, 100_000_000)
    assert axis.ticktext[:2] == (first, second)
    assert not any("0.00" in t for t in axis.ticktext)


def test_a_tick_of_fifty_million_yuan():
    with translation.override("en"):
        assert charts.money_tick(5e7, "CNY") == "CN¥50M"
    with translation.override("zh-hans"):
        assert charts.money_tick(5e7, "CNY") == "¥5000万"
