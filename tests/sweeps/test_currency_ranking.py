"""A sweep over cost.currency ranks its rows' costs in USD (sweeps.ranking), each at its own plan's
exchange rate, on the page, in the summary and in the chart, and shows each row in its own currency;
each row stays its own estimate."""

import json

import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.plan.compose import estimate
from sweeps import services

pytestmark = pytest.mark.django_db

# rows: 0 USD x 512 cards, 1 USD x 1,024, 2 CNY x 512, 3 CNY x 1,024 (the last axis fastest)
AXES = {"cost.currency": ["USD", "CNY"], "cluster.cards": [512, 1024]}
CAPEX = "cost.capex.total"


@pytest.fixture
def sweep(base, monkeypatch):
    # a server price of 300,000 in each row's own currency: 300,000 CNY is 41,667 USD at 7.2
    base = {**base, "cost": {"server_price": 300_000}}
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    made = services.create_sweep(data={"name": "currencies", "base": base, "axes": AXES}, owner=None)
    for i in range(made.chunks_total):
        services.run_chunk(sweep_id=made.pk, index=i, worker="test")
    made.refresh_from_db()
    assert made.status == "done", made.error
    return made


def _capex(sweep, index: int) -> tuple[float, float]:
    axes = [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in sweep.axes]
    cost = estimate(estimator_sweep.scenario_at(sweep.base, axes, index))["result"]["cost"]
    return cost["capex"]["total"], cost["exchange_rate"]


def test_the_cluster_cost_ranks_in_usd_not_as_numbers(sweep):
    # 64 servers at 300,000 USD are 19.2 M USD of servers; at 300,000 CNY they are 19.2 M CNY =
    # 2.67 M USD, and 128 of them 5.33 M USD: both CNY rows cost less than either USD row in USD,
    # although as numbers the CNY rows are larger (their network too is in CNY, x 7.2)
    capex = {i: _capex(sweep, i) for i in range(4)}
    assert capex[0][1] == 1.0 and capex[2][1] == 7.2
    assert capex[2][0] > capex[0][0]  # as numbers, CNY 512 cards > USD 512 cards
    usd = {i: total / rate for i, (total, rate) in capex.items()}
    assert usd[2] < usd[3] < usd[0] < usd[1]
    summary = sweep.summary
    assert summary["ranked_in"] == "USD"
    best = summary["best"][CAPEX]
    assert [r["index"] for r in best] == [2, 3, 0, 1]
    assert best[0][CAPEX] == pytest.approx(capex[2][0], rel=1e-5)  # the row keeps its own CNY amount
    assert summary["range"][CAPEX] == pytest.approx([usd[2], usd[1]], rel=1e-5)


def test_the_page_says_the_costs_rank_in_usd_in_both_languages(sweep, client):
    en = client.get(f"/sweeps/{sweep.share_token}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "rank and draw their costs in USD, each converted at its own plan" in en
    zh = client.get(f"/zh-hans/sweeps/{sweep.share_token}/").content.decode()
    assert "按 USD 对成本排序和绘图" in zh
    # the chart's cost axis is in US dollars, its points each row's cost in USD
    start = en.index('id="pareto-data"')
    figure = json.loads(en[en.index(">", start) + 1 : en.index("</script>", start)])
    assert (
        "US$" in figure["layout"]["yaxis"]["title"]["text"]
        or "$" in figure["layout"]["yaxis"]["title"]["text"]
    )
    usd = sorted(total / rate for total, rate in (_capex(sweep, i) for i in range(4)))
    assert usd[0] < 6e6  # a CNY row's cluster is under 6 M USD: the y axis is not in CNY
