"""Price books in the core: a book's prices replace the catalog's by exactly the amounts changed."""

from __future__ import annotations

import json

import pytest

from estimator.__main__ import main
from estimator.contract.price_book import parse_book, parse_prices, parse_reference
from estimator.errors import ScenarioError
from estimator.plan.compose import estimate

# 64 H100 on DGX H100 (8 cards per node: 8 nodes), MFU fixed so the layout search cannot move time.
BASE = {
    "model": {"preset": "llama-3.1-8b"},
    "training": {"tokens": 1e11},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"cards": 64},
    "efficiency": {"mfu": 0.4},
}
REF = "acme/negotiated"


def book(prices: dict, currency: str = "USD", version: int = 2) -> dict:
    return {
        "name": "Negotiated",
        "version": version,
        "currency": currency,
        "price_date": "2026-11-01",
        "prices": prices,
    }


def with_book(extra_cost: dict | None = None) -> dict:
    return {**BASE, "cost": {"price_book": REF, **(extra_cost or {})}}


def test_server_and_electricity_from_the_book_differ_by_hand_computed_amounts():
    # catalog: DGX H100 chassis 70,000 USD + 8 x 27,500 per H100; electricity 0.08 USD/kWh.
    prices = {"servers": {"dgx-h100": 80_000}, "electricity_per_kwh": 0.11}
    default = estimate(BASE)["result"]
    priced = estimate(with_book(), {REF: parse_book(book(prices))})["result"]
    # 8 nodes x (80,000 - 70,000) more chassis money: 80,000 more compute capex, nothing else
    assert priced["cost"]["capex"]["compute"] - default["cost"]["capex"]["compute"] == pytest.approx(80_000)
    assert priced["cost"]["capex"]["network"] == default["cost"]["capex"]["network"]
    assert priced["cost"]["capex"]["storage"] == default["cost"]["capex"]["storage"]
    # energy: facility kWh of the run x (0.11 - 0.08)
    kwh = default["power"]["facility_w"] * default["power"]["hours"] / 1000
    d_energy = (
        priced["cost"]["run"]["owned_breakdown"]["energy"]
        - default["cost"]["run"]["owned_breakdown"]["energy"]
    )
    assert d_energy == pytest.approx(kwh * 0.03, rel=1e-9)
    assert priced["compute"]["wall_clock_days"] == default["compute"]["wall_clock_days"]


def test_the_report_names_the_book_among_its_assumptions():
    result = estimate(with_book(), {REF: parse_book(book({"switches": {}}))})["result"]
    row = next(a for a in result["assumptions"] if a["code"] == "assumption.price-book")
    assert row["params"] == {"book": "Negotiated", "version": 2, "date": "2026-11-01", "currency": "USD"}
    assert "price-book" not in json.dumps(estimate(BASE)["result"]["assumptions"])


def test_card_price_and_cloud_rates_from_the_book():
    prices = {"accelerators": {"h100-sxm": 20_000}, "cloud": {"h100-sxm": {"on_demand": 2.0}}}
    default = estimate(BASE)["result"]["cost"]
    priced = estimate(with_book(), {REF: parse_book(book(prices))})["result"]["cost"]
    # 64 cards x (20,000 - 27,500)
    assert priced["capex"]["compute"] - default["capex"]["compute"] == pytest.approx(64 * -7_500)
    assert priced["cloud_per_card_hour"] == 2.0
    assert priced["cloud_reserved_per_card_hour"] == default["cloud_reserved_per_card_hour"]


def test_explicit_scenario_prices_win_over_the_book():
    prices = {"servers": {"dgx-h100": 80_000}, "electricity_per_kwh": 0.11}
    scenario = with_book({"server_price": 300_000, "electricity_per_kwh": 0.05})
    cost = estimate(scenario, {REF: parse_book(book(prices))})["result"]["cost"]
    assert cost["capex"]["compute"] == pytest.approx(8 * 300_000)
    assert cost["electricity_per_kwh"] == pytest.approx(0.05)


def test_a_cny_book_converts_at_the_scenario_rate():
    # 720,000 CNY at 7.2 CNY/USD = 100,000 USD per chassis, 30,000 more than the catalog per node
    prices = {"servers": {"dgx-h100": 720_000}}
    default = estimate(BASE)["result"]["cost"]
    priced = estimate(with_book(), {REF: parse_book(book(prices, "CNY"))})["result"]["cost"]
    assert priced["capex"]["compute"] - default["capex"]["compute"] == pytest.approx(8 * 30_000)


def test_a_scenario_naming_a_book_nobody_supplied_is_refused_on_its_field():
    with pytest.raises(ScenarioError) as exc:
        estimate(with_book())
    assert exc.value.errors[0].field == "cost.price_book"


@pytest.mark.parametrize("ref", ["acme", "acme/", "/book", "Acme/book", "acme/book@0", "acme/book@x"])
def test_malformed_references_are_refused(ref):
    with pytest.raises(ScenarioError) as exc:
        estimate({**BASE, "cost": {"price_book": ref}}, {})
    assert exc.value.errors[0].field == "cost.price_book"


def test_reference_parts():
    assert parse_reference("acme/list@12") == ("acme", "list", 12)
    assert parse_reference("acme/list") == ("acme", "list", None)


@pytest.mark.parametrize(
    ("prices", "field"),
    [
        ({"switches": {"no-such-switch": 1}}, "prices.switches.no-such-switch"),  # at the unknown id
        ({"servers": {"dgx-h100": -1}}, "prices.servers.dgx-h100"),
        ({"servers": {"dgx-h100": "10"}}, "prices.servers.dgx-h100"),
        ({"electricity_per_kwh": 1e9}, "prices.electricity_per_kwh"),
        ({"cloud": {"h100-sxm": {"spot": 1}}}, "prices.cloud.h100-sxm.spot"),
        ({"racks": {}}, "prices.racks"),
    ],
)
def test_bad_price_documents_name_the_field(prices, field):
    with pytest.raises(ScenarioError) as exc:
        parse_prices(prices)
    assert exc.value.errors[0].field == field


def test_cli_takes_a_local_price_book_file(tmp_path, capsys):
    scenario, prices = tmp_path / "s.json", tmp_path / "book.json"
    scenario.write_text(json.dumps(with_book()))
    prices.write_text(json.dumps(book({"servers": {"dgx-h100": 80_000}})))
    assert main(["plan", str(scenario), "--price-book", str(prices)]) == 0
    out = json.loads(capsys.readouterr().out)
    # 8 x (80,000 + 8 x 27,500)
    assert out["result"]["cost"]["capex"]["compute"] == pytest.approx(8 * 300_000)


def test_cli_without_the_book_exits_2_with_one_line(tmp_path, capsys):
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(with_book()))
    assert main(["plan", str(scenario)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cost.price_book:") and "\n" not in err
