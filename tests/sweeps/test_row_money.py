"""A sweep's best-rows table says each row's money in that row's currency and flags it over that
row's budget: with cost.currency or cost.budget as an axis, a row's are its axis values, as in the
full estimate of that row (the "Full estimate" button), not the base's."""

import re

import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.plan.compose import estimate
from reports import formatting as fmt
from sweeps import services

pytestmark = pytest.mark.django_db

AXES = {"cost.currency": ["USD", "CNY"], "cost.budget": [1e6, 1e12]}


@pytest.fixture
def page(base, monkeypatch, client):
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = services.create_sweep(data={"name": "money axes", "base": base, "axes": AXES}, owner=None)
    for i in range(sweep.chunks_total):
        services.run_chunk(sweep_id=sweep.pk, index=i, worker="test")
    sweep.refresh_from_db()
    assert sweep.status == "done"
    html = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    return sweep, html


def _first_table_rows(html: str) -> dict[int, str]:
    table = html[html.index("<table") : html.index("</table>")]
    return {
        int(m.group(2)): m.group(0)
        for m in re.finditer(r"<tr( class=\"[^\"]*\")?><td>(\d+)</td>.*?</tr>", table, re.S)
    }


def test_each_row_reads_in_its_own_currency_and_budget(page):
    sweep, html = page
    rows = _first_table_rows(html)
    assert sorted(rows) == [0, 1, 2, 3]
    axes = [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in sweep.axes]
    for index, row in rows.items():
        result = estimate(estimator_sweep.scenario_at(sweep.base, axes, index))["result"]
        currency = result["cost"]["currency"]
        assert currency == ("USD", "USD", "CNY", "CNY")[index]
        assert fmt.money(result["cost"]["capex"]["total"], currency) in row, index
        assert ("over budget" in row) is (not result["budget"]["within"]), index
    assert "over budget" in rows[0] and "over budget" in rows[2]  # capex tens of millions, budget 1e6
    assert "over budget" not in rows[1] and "over budget" not in rows[3]
    assert "¥" in rows[2] and "$" not in rows[2].split("</td>", 4)[-1].split("<form")[0]


def test_the_hint_names_no_single_budget_when_each_row_has_its_own(page, client):
    sweep, html = page
    assert "over their own budget, in their own currency" in html
    assert "over the budget of" not in html  # no base budget to name: each row has its own
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    assert "超出各自预算（按各自币种）" in zh
