"""Money at the edge (reports.money): decimal strings rounded half-even to the currency's minor
unit (rates two places more), with their ISO 4217 code; every amount of an estimate in `amounts`."""

from __future__ import annotations

import pytest

from reports.money import decimal_amount, money


@pytest.mark.parametrize(
    ("value", "currency", "kind", "expected"),
    [
        (8643780.0, "USD", "total", "8643780.00"),
        (2.675, "USD", "total", "2.68"),  # repr "2.675", half-even: 7 is odd, so up
        (2.665, "USD", "total", "2.66"),  # repr "2.665": 6 is even, so it stays
        (0.5760000000000001, "CNY", "rate", "0.5760"),  # float noise gone; 2 + 2 places
        (1234.5, "JPY", "total", "1234"),  # no minor unit; half-even to the even 1234
        (-12.5, "USD", "total", "-12.50"),
    ],
)
def test_decimal_amounts(value, currency, kind, expected):
    assert decimal_amount(value, currency, kind) == expected


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), True, "12"])
def test_no_amount_without_a_finite_number(value):
    assert money(value, "USD") is None


@pytest.mark.django_db
def test_an_estimate_carries_every_amount_with_its_currency(api_client, scenario):
    cny = {**scenario, "cost": {"currency": "CNY"}}
    body = api_client.post("/api/v1/estimates", cny, format="json").json()
    assert body["currency"] == "CNY"
    amounts = body["amounts"]
    assert {a["currency"] for a in amounts.values()} == {"CNY"}
    total = body["result"]["cost"]["capex"]["total"]
    assert amounts["cost.capex.total"]["amount"] == f"{total:.2f}"
    parts = ("compute", "network", "scaleup", "storage")
    assert {f"cost.capex.{p}" for p in parts} <= set(amounts)
    per_hour = body["result"]["cost"]["cloud_per_card_hour"]
    assert amounts["cost.cloud_per_card_hour"]["amount"] == f"{per_hour:.4f}"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("axes", "currency"),
    [
        ({"cluster.cards": [64, 128]}, "CNY"),  # every row in the base's currency
        ({"cost.currency": ["USD", "CNY"]}, None),  # swept: each row's is in its own column
    ],
)
def test_a_sweep_names_the_currency_of_its_amounts(scenario, axes, currency):
    from sweeps import selectors, services

    base = {**scenario, "cost": {"currency": "CNY"}}
    sweep = services.create_sweep(data={"base": base, "axes": axes}, client_ip="127.0.0.1")
    assert selectors.status_payload(sweep=sweep)["currency"] == currency
