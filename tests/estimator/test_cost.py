"""Capex, owned vs cloud cost, break-even (estimator/money/cost.py)."""

import numpy as np
import pytest

from estimator.errors import ScenarioError
from estimator.money.cost import (
    DEFAULT_DEPRECIATION_YEARS,
    HOURS_PER_MONTH,
    CapexBill,
    RunningPrices,
    break_even_months,
    capex_usd,
    cost,
    owned_usd_per_card_hour,
)

# One HGX/DGX-class H100 node, Freakonomics-sheet price (reference section 4, Aug 2024): $310,000
# with 8 GPUs and 8 x 400G NICs; 6.2 kW IT, PUE 1.2 -> 7.44 kW facility; $0.10/kWh; 4-year life.
NODE_BILL = CapexBill(cards=8, nodes=1, server_price_usd=310_000.0)
NODE_RUNNING = {"electricity_usd_per_kwh": 0.10, "depreciation_years": 4}


def node_cost(hours, **running):
    """The node above over `hours`, with its running prices changed by `running`."""
    prices = RunningPrices(**{**NODE_RUNNING, **running})
    return cost(NODE_BILL, hours, it_w=6200.0, facility_w=7440.0, running=prices)


def test_capex_by_category_hand_computed():
    c = capex_usd(
        CapexBill(
            nodes=4,
            server_price_usd=310_000,
            switches=2,
            switch_price_usd=36_000,
            transceivers=64,
            transceiver_price_usd=700,
            cables=32,
            cable_price_usd=100,
            nic_ports=0,
            nic_port_price_usd=1_000,
            drives=10,
            drive_price_usd=2_000,
            storage_nodes=2,
            storage_node_price_usd=20_000,
        )
    )
    assert c["compute"] == 1_240_000
    assert c["network"] == 72_000 + 44_800 + 3_200
    assert c["storage"] == 20_000 + 40_000
    assert c["total"] == 1_240_000 + 120_000 + 60_000


def test_cards_priced_separately():
    c = capex_usd(CapexBill(nodes=2, server_price_usd=50_000, cards=16, card_price_usd=25_000))
    assert c["compute"] == 2 * 50_000 + 16 * 25_000


def test_owned_per_card_hour_and_run_hand_computed():
    r = node_cost(720, cloud_usd_per_card_hour=2.5, cloud_reserved_usd_per_card_hour=1.8)
    dep_h = 310_000 / (4 * 8760)  # 8.847 USD/h
    energy_h = 7.44 * 0.10  # 0.744 USD/h
    per_card_hour = (dep_h + energy_h) / 8
    d = r.to_dict()
    assert d["owned_per_card_hour"] == pytest.approx(per_card_hour)  # ~1.20 USD
    assert d["run"]["owned"] == pytest.approx(8 * 720 * per_card_hour)
    assert d["run"]["owned_breakdown"]["energy"] == pytest.approx(720 * energy_h)
    assert d["run"]["owned_breakdown"]["depreciation"] == pytest.approx(720 * dep_h)
    assert d["run"]["cloud"] == pytest.approx(8 * 720 * 2.5)
    assert d["run"]["cloud_reserved"] == pytest.approx(8 * 720 * 1.8)
    assert d["capex"]["total"] == 310_000
    assert d["card_hours"] == 8 * 720


def test_break_even_months_hand_computed():
    r = node_cost(720, cloud_usd_per_card_hour=2.5)
    monthly_cloud = 8 * HOURS_PER_MONTH * 2.5  # 14,600
    monthly_opex = 7.44 * 0.10 * HOURS_PER_MONTH  # 543.12
    expected = 310_000 / (monthly_cloud - monthly_opex)  # ~22 months
    assert r.to_dict()["cloud_break_even_months"] == pytest.approx(expected)
    assert 20 < expected < 24


def test_break_even_at_the_utilization_the_owned_cost_assumes():
    """At utilization 0.9 renting pays for the busy hours only, and energy is drawn only then; colo
    and maintenance are paid every month. By hand, the node above with colo 150 USD per IT kW-month
    (6.2 kW: 930 USD a month): cloud 0.9 x 14,600 = 13,140, energy 0.9 x 543.12 = 488.81, so
    310,000 / (13,140 - 488.81 - 930) = 26.45 months (before: 310,000 / (14,600 - 543.12 - 930) =
    23.62, continuous use beside an owned cost per card-hour spread over 90 % busy hours)."""
    r = node_cost(720, cloud_usd_per_card_hour=2.5, utilization=0.9, colo_usd_per_kw_month=150.0)
    expected = 310_000 / (0.9 * 14_600 - 0.9 * 543.12 - 930.0)
    assert expected == pytest.approx(26.45, abs=0.01)
    assert r.to_dict()["cloud_break_even_months"] == pytest.approx(expected)


def test_break_even_never_when_cloud_is_cheaper_than_running():
    r = node_cost(10, cloud_usd_per_card_hour=0.05)
    assert r.to_dict()["cloud_break_even_months"] is None
    assert np.isinf(break_even_months(1e6, 8, 0.0, 100.0))


def test_no_cloud_price_gives_none():
    d = node_cost(10).to_dict()
    assert d["run"]["cloud"] is None and d["cloud_break_even_months"] is None


def test_cny_converts_money_not_months():
    usd = node_cost(720, cloud_usd_per_card_hour=2.5).to_dict()
    cny = node_cost(720, cloud_usd_per_card_hour=2.5, currency="CNY", usd_to_cny=7.0).to_dict()
    assert cny["currency"] == "CNY"
    assert cny["capex"]["total"] == pytest.approx(7.0 * usd["capex"]["total"])
    assert cny["run"]["owned"] == pytest.approx(7.0 * usd["run"]["owned"])
    assert cny["owned_per_card_hour"] == pytest.approx(7.0 * usd["owned_per_card_hour"])
    assert cny["cloud_break_even_months"] == pytest.approx(usd["cloud_break_even_months"])


def test_lower_utilization_raises_owned_cost_and_colo_counts():
    base = node_cost(100).to_dict()["owned_per_card_hour"]
    half = node_cost(100, utilization=0.5).to_dict()["owned_per_card_hour"]
    colo = node_cost(100, colo_usd_per_kw_month=200).to_dict()
    assert half > base
    assert colo["owned_per_card_hour"] == pytest.approx(base + 6.2 * 200 / HOURS_PER_MONTH / 8)
    assert colo["run"]["owned_breakdown"]["facility"] == pytest.approx(100 * 6.2 * 200 / HOURS_PER_MONTH)


def test_default_depreciation_is_four_years():
    assert DEFAULT_DEPRECIATION_YEARS == 4
    a = owned_usd_per_card_hour(310_000, 8, 0.0)
    assert a == pytest.approx(310_000 / (4 * 8760) / 8)


def test_broadcasts_over_sweep_sized_arrays():
    """Half a million rows in one call (its speed is bench/core_vectorized.py's figure)."""
    n = 500_000
    rng = np.random.default_rng(0)
    cards = rng.integers(1, 2000, n) * 8
    r = cost(
        CapexBill(
            cards=cards,
            nodes=cards / 8,
            server_price_usd=250_000,
            switches=cards / 32,
            switch_price_usd=36_000,
            transceivers=cards * 2,
            transceiver_price_usd=700,
        ),
        hours=rng.uniform(10, 2000, n),
        it_w=cards * 800.0,
        facility_w=cards * 1040.0,
        running=RunningPrices(
            electricity_usd_per_kwh=rng.uniform(0.05, 0.2, n),
            cloud_usd_per_card_hour=rng.uniform(1.5, 4.0, n),
        ),
    )
    assert r.run_owned_usd.shape == (n,) and r.cloud_break_even_months.shape == (n,)
    small = cost(
        CapexBill(cards=np.array([8, 16]), nodes=np.array([1, 2]), server_price_usd=310_000),
        hours=10,
        it_w=np.array([6e3, 12e3]),
        facility_w=np.array([7e3, 14e3]),
        running=RunningPrices(cloud_usd_per_card_hour=0.01),
    )
    assert small.to_dict()["cloud_break_even_months"] == [None, None]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"currency": "EUR"}, "cost.currency"),
        ({"currency": "CNY", "usd_to_cny": 0}, "cost.usd_to_cny"),
        ({"depreciation_years": 0}, "cost.depreciation_years"),
        ({"utilization": 1.5}, "cost.utilization"),
        ({"electricity_usd_per_kwh": -0.1}, "cost.electricity_per_kwh"),
    ],
)
def test_invalid_inputs_name_the_field(kwargs, field):
    with pytest.raises(ScenarioError) as e:
        node_cost(10, **kwargs)
    assert e.value.errors[0].field == field
