"""Budget-sized sweeps on the web: accepted by the API in the base and on an axis, each row (its
page, its CSV) what the row's estimate plans for its budget, the row a budget buys nothing for with
that reason, and the work-budget refusal, in English and Chinese."""

from __future__ import annotations

import json

import pytest
from django.utils import translation

from estimator.contract import sweep as estimator_sweep
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate
from reports import messages
from sweeps import selectors as sweep_selectors
from sweeps import services as sweep_services
from tests.web.sweep_runs import BUILDER_BASE, run_sweep, zh_only

BUDGETED = {  # tests/estimator/test_budget.py's article example, 50 M CNY
    "name": "70B 按预算",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"budget": 5e7},
    "cost": {"currency": "CNY"},
}
BUYS_NOTHING_ZH = "无方案：该预算买不起最小的集群"


@pytest.fixture
def budget_sweep(monkeypatch, client):
    """BUDGETED over three budgets (1,000 CNY buys no server), run in process, and its page in
    English and Chinese."""
    data = {"name": "b", "base": BUDGETED, "axes": {"cluster.budget": [1e3, 5e7, 5e8]}}
    return run_sweep(monkeypatch, client, data)


@pytest.mark.django_db
def test_each_row_is_the_plan_its_budget_buys(budget_sweep):
    # the most 50 M CNY buys, 264 cards, train slower than 256 (tests/estimator/test_budget.py)
    sweep, en, zh = budget_sweep
    axes = [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in sweep.axes]
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    col = {name: page["columns"].index(name) for name in page["columns"]}
    rows = page["rows"]
    with pytest.raises(ScenarioError) as refused:
        estimate(estimator_sweep.scenario_at(sweep.base, axes, 0))
    assert refused.value.errors[0].code == "budget-buys-no-cluster"
    assert rows[0][col["ok"]] is False and rows[0][col["compute.cards"]] is None
    # the row's reason: estimate()'s code, about the smallest cluster (one server of 8 cards)
    assert rows[0][col["reason_code"]] == "budget-buys-no-cluster" and rows[0][col["reason_cards"]] == 8
    assert [rows[i][col["reason_code"]] for i in (1, 2)] == ["", ""]
    for index in (1, 2):
        result = estimate(estimator_sweep.scenario_at(sweep.base, axes, index))["result"]
        row = rows[index]
        assert row[col["compute.cards"]] == result["compute"]["cards"]
        assert row[col["cost.capex.total"]] == pytest.approx(result["cost"]["capex"]["total"], rel=1e-9)
        assert row[col["goodput.wall_clock_days"]] == pytest.approx(
            result["goodput"]["wall_clock_days"], rel=1e-9
        )
        assert row[col["budget.affords.most_cards"]] == result["budget"]["affords"]["most_cards"]
    assert rows[1][col["compute.cards"]] == 256 and rows[1][col["budget.affords.most_cards"]] == 264
    assert "no plan: the budget does not buy the smallest cluster" in en
    assert BUYS_NOTHING_ZH in zh


@pytest.mark.django_db
def test_the_csv_of_a_budget_sweep_says_what_the_budget_buys_beyond_the_plan(budget_sweep, client):
    sweep, _, _ = budget_sweep
    url = f"/api/v1/sweeps/shared/{sweep.share_token}/results?format=csv"
    lines = b"".join(client.get(url).streaming_content).decode().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    assert [r["compute.cards"] for r in rows][1:] == ["256.0", "2560.0"]
    assert rows[1]["budget.affords.most_cards"] == "264.0"


@pytest.mark.django_db
def test_a_budget_sweep_asking_too_many_searches_is_refused_in_both_languages(client):
    # 101 token values x 100 budgets: 10,100 searches, past limits.MAX_SWEEP_BUDGET_SIZINGS (10,000)
    axes = {
        "training.tokens": {"start": 1e11, "stop": 2e11, "step": 1e9},
        "cluster.budget": {"start": 1e7, "stop": 1e9, "step": 1e7},
    }
    with pytest.raises(ScenarioError) as info:
        sweep_services.create_sweep(data={"name": "b", "base": BUDGETED, "axes": axes}, owner=None)
    (err,) = info.value.errors
    assert (err.field, err.code) == ("axes", "too-many-budget-sizings")
    with translation.override("en"):
        assert messages.scenario_error(err) == (
            "sizing by budget searches each of the 10,100 combinations of the axes other than running "
            "prices; the limit is 10,000 per sweep: sweep fewer values"
        )
    with translation.override("zh-hans"):
        zh = messages.scenario_error(err)
        zh_only(zh)
        assert "10,100" in zh and "10,000" in zh
    with translation.override("zh-hans"):
        zh_only(messages.row_reason("budget-buys-no-cluster"))
    data = {"name": "b", "base": json.dumps(BUDGETED), "axes": json.dumps(axes)}
    html = client.post("/zh-hans/sweeps/", data).content.decode()
    assert "按预算确定规模要对运行价格以外各扫描轴的 10,100 种组合逐一搜索" in html


@pytest.mark.django_db
def test_the_sweep_builder_sizes_by_a_budget_as_the_estimate_form_does(client):
    from sweeps.builder import SweepBuilderForm

    html = client.get("/zh-hans/sweeps/").content.decode()
    assert 'value="budget"' in html
    fields = {
        **BUILDER_BASE,
        "sizing": "budget",
        "budget": "5000万",
        "axis1_field": "cluster.budget",
        "axis1_list": "5000万, 1亿",
    }
    form = SweepBuilderForm(fields)
    assert form.is_valid(), form.errors
    request = form.request()
    # the budget sizes the cluster: cluster.budget, not the flag cost.budget
    assert request["base"]["cluster"] == {"budget": 5e7} and "budget" not in request["base"]["cost"]
    assert request["axes"] == {"cluster.budget": [5e7, 1e8]}
    by_deadline = SweepBuilderForm({**fields, "sizing": "deadline", "target_days": "30"})
    assert by_deadline.is_valid(), by_deadline.errors
    assert by_deadline.request()["base"]["cost"]["budget"] == 5e7  # a deadline's budget flags rows
    with translation.override("zh-hans"):
        missing = SweepBuilderForm({**fields, "budget": ""})
        assert not missing.is_valid()
        zh_only(missing.errors["budget"][0])


@pytest.mark.django_db
def test_the_best_tables_say_what_a_budget_buys_beyond_the_plan(budget_sweep):
    # 50 M CNY buys at most 264 cards, which train slower than the 256 planned
    # (tests/estimator/test_budget.py); 500 M CNY at most 2,680 = 335 servers, about
    # 500 M / (49.3 M / 33 servers) = 334.7 servers (the network sets the exact edge; the row's own
    # estimate says 2,680, test_each_row_is_the_plan_its_budget_buys), planned 2,560.
    # Each best table lists both rows, each with its own sentence; 1,000 CNY plans nothing.
    sweep, en, zh = budget_sweep
    page = sweep_selectors.result_page(sweep=sweep, page=1, page_size=10)
    most = [row[page["columns"].index("budget.affords.most_cards")] for row in page["rows"]]
    assert most == [None, 264, 2680]
    tables = en.count('<table class="best')
    assert tables >= 1
    assert en.count("It buys up to 264 cards, but those train slower.") == tables
    assert en.count("It buys up to 2,680 cards, but those train slower.") == tables
    assert en.count("It buys up to") == 2 * tables
    assert zh.count("它最多可买 264 张卡，但那样训练更慢。") == tables
    assert zh.count("它最多可买 2,680 张卡，但那样训练更慢。") == tables
    assert "It buys up to" not in zh


def test_a_row_without_the_count_shows_no_sentence():
    # NaN where the plan already takes the most cards the budget buys; None where nothing planned
    from sweeps.pages import _most_cards

    assert _most_cards(float("nan")) is None and _most_cards(None) is None
    assert _most_cards("264") is None and _most_cards(264.0) == "264"
