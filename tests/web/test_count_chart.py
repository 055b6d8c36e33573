"""The report's "cards against days and cost" chart draws planned points only (reports.charts.
cards_vs_days over reports.count_points): a refused count is a gap with its reason in the hover,
in English and Chinese; a stored estimate today's engine does not plan as stored gets no chart."""

import json
import re

import pytest
from django.utils import translation

from reports import charts, count_points, pages

pytestmark = pytest.mark.django_db

RESULT = {"compute": {"cards": 64, "mfu": 0.5}, "cost": {"currency": "USD", "capex": {"total": 2.0e6}}}
COUNTS = [
    {"cards": 16, "refusal_code": "count-no-layout", "refusal_params": {"cards": 16}, "refusal_message": "x"},
    {"cards": 32, "wall_clock_days": 20.0, "mfu": 0.5, "capex_in_currency": 1.0e6, "refusal_code": ""},
    {"cards": 64, "wall_clock_days": 11.0, "mfu": 0.45, "capex_in_currency": 2.0e6, "refusal_code": ""},
    {
        "cards": 128,
        "refusal_code": "count-no-fabric",
        "refusal_params": {"cards": 128},
        "refusal_message": "y",
    },
]


def _trace(fig, name):
    (trace,) = [t for t in fig.data if t.name == name]
    return trace


def test_planned_points_and_gaps_with_their_reason():
    with translation.override("en"):
        fig = charts.cards_vs_days(RESULT, COUNTS)
    title = fig.layout.title.text
    assert title == "Cards against days and cost, each size planned" and "MFU" not in title
    days = _trace(fig, "Days")
    assert list(days.x) == [16, 32, 64, 128]
    assert list(days.y) == [None, 20.0, 11.0, None]  # refused counts: gaps, no number
    assert list(_trace(fig, "Cluster cost").y) == [None, 1.0e6, 2.0e6, None]
    assert days.customdata[2] == "64 cards: 11 days, MFU 45.0%, cluster cost $2M"
    refused = _trace(fig, "No plan")
    assert list(refused.x) == [16, 128]
    assert refused.customdata[0] == "16 cards: no plan, no parallel layout fits in HBM"
    assert "network cannot connect" in refused.customdata[1]
    assert fig.layout.xaxis.type == "log"


def test_the_reasons_in_chinese():
    with translation.override("zh-hans"):
        fig = charts.cards_vs_days(RESULT, COUNTS)
    assert fig.layout.title.text == "卡数与天数、造价（每个规模各自规划）"
    refused = _trace(fig, "无法规划")
    assert refused.customdata[0] == "16 张卡：无法规划，没有任何并行布局能放进 HBM"
    assert "该网络连接不了" in refused.customdata[1]


def test_no_points_no_chart():
    assert charts.cards_vs_days(RESULT, None) is None
    assert charts.cards_vs_days(RESULT, []) is None
    assert charts.cards_vs_days(RESULT, [COUNTS[0]]) is None  # nothing planned: nothing to draw


def _figure(html, dom_id):
    match = re.search(rf'<script id="{dom_id}-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1)) if match else None


def test_the_report_draws_the_plan_at_its_own_count(client, make_estimate):
    est = make_estimate()  # Llama 3.1 8B on 64 Ascend 910B2
    fig = _figure(client.get(f"/r/{est.share_token}/").content.decode(), "chart-cards-days")
    days = next(t for t in fig["data"] if t["name"] == "Days")
    star = next(t for t in fig["data"] if t["name"] == "This plan")
    own = days["x"].index(64)
    # the point at the plan's count is the stored headline's days with failures
    assert days["y"][own] == star["y"][0] == est.result["goodput"]["wall_clock_days_p50"]
    assert len(days["x"]) <= 9 and all(c % 8 == 0 for c in days["x"])  # whole 8-card servers
    assert min(days["x"]) < 64 < max(days["x"])


def test_a_report_todays_engine_does_not_reproduce_gets_no_chart(client, make_estimate):
    est = make_estimate()
    est.result["compute"]["mfu"] = est.result["compute"]["mfu"] * 1.1  # as an older engine had it
    est.save()
    assert count_points.points(est.input, est.price_book, est.result) == []
    html = client.get(f"/r/{est.share_token}/").content.decode()
    assert _figure(html, "chart-cards-days") is None
    assert _figure(html, "chart-step-time") is not None  # the other charts stay


def test_points_are_planned_once_for_every_language(client, make_estimate, monkeypatch):
    calls = []
    real = count_points.points

    def counting(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(count_points, "points", counting)
    est = make_estimate()
    for lang in ("en", "zh-hans"):
        with translation.override(lang):
            pages.report_figures(est)
    assert len(calls) == 1


LLAMA_405B_256 = {  # 405B on 256 H100: 0.25 x 256 = 64 cards hold 5.12 TB < the 6.48 TB of its state
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 1e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 256},
}


def test_the_api_gives_the_points_the_report_draws(api_client, client, make_estimate):
    est = make_estimate(data=LLAMA_405B_256)
    body = api_client.get(f"/api/v1/reports/{est.share_token}/cards").json()
    assert body["cards"] == 256 and body["reproduced"] is True
    fig = _figure(client.get(f"/r/{est.share_token}/").content.decode(), "chart-cards-days")
    days = next(t for t in fig["data"] if t["name"] == "Days")
    assert [p["cards"] for p in body["points"]] == days["x"]
    assert [p["wall_clock_days"] for p in body["points"]] == days["y"]
    own = next(p for p in body["points"] if p["cards"] == 256)
    stored = api_client.get(f"/api/v1/reports/{est.share_token}").json()
    assert own["capex"] == stored["amounts"]["cost.capex.total"]  # the same money as the report's
    assert own["wall_clock_days"] == est.result["goodput"]["wall_clock_days_p50"]
    low = body["points"][0]
    assert low["cards"] == 64 and low["planned"] is False and low["wall_clock_days"] is None
    assert low["capex"] is None and low["refusal"]["code"] == "count-no-layout"
    assert low["refusal"]["params"] == {"cards": 64}
    assert low["refusal"]["message"] == "no parallel layout fits in HBM on 64 cards"  # the core's English


def test_the_api_says_when_the_stored_plan_is_not_reproduced(api_client, make_estimate):
    est = make_estimate()
    est.result["cost"]["capex"]["total"] *= 1.01
    est.save()
    body = api_client.get(f"/api/v1/reports/{est.share_token}/cards").json()
    assert body == {"cards": 64, "reproduced": False, "points": []}
    assert api_client.get("/api/v1/reports/nosuchtoken/cards").status_code == 404
