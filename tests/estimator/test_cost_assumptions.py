"""Every running-cost default that moves a plan's money is an assumption row with its source and
date (plan.sections.assumptions): PUE, depreciation, the fleet utilization and, in CNY, the
exchange rate every figure was converted at."""

from __future__ import annotations

from typing import Any

import pytest

from estimator.plan.compose import estimate

QWEN_CNY = {
    "model": {"preset": "qwen3-8b"},
    "training": {"tokens": 2e12, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910b3"},
    "cluster": {"cards": 256},
    "efficiency": {"mfu": 0.4},
    "reliability": {"failures": False},
    "cost": {"currency": "CNY"},
}


def rows(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    result = estimate(doc)["result"]
    return result, {a["code"].removeprefix("assumption."): a for a in result["assumptions"]}


def test_utilization_and_exchange_rate_are_rows_with_the_catalogs_source_and_date() -> None:
    """catalog/defaults.toml: utilization 0.9 (as of 2026-11), USD/CNY 7.2 (2025-06), PUE 1.3 from
    the Uptime Institute (2024-06), depreciation 4 years (2026-05): each row carries the figure and
    that source with its date (before: no utilization or exchange-rate row; PUE and depreciation
    sourced "catalog defaults / scenario"). The utilization is the one the cost used: the owned
    depreciation of a run of H hours on capex C is C x H / (4 years x 8,760 h x 0.9), checked on
    the plan's own figures (hours without failures: the computing time)."""
    result, row = rows(QWEN_CNY)
    assert row["utilization"]["value"] == 0.9 and "(2026-11)" in row["utilization"]["source"]
    assert row["exchange-rate"]["value"] == 7.2 and row["exchange-rate"]["unit"] == "CNY/USD"
    assert "(2025-06)" in row["exchange-rate"]["source"]
    assert "Uptime Institute" in row["pue"]["source"] and "(2024-06)" in row["pue"]["source"]
    assert "(2026-05)" in row["depreciation"]["source"]
    cost, hours = result["cost"], result["power"]["hours"]
    dep = cost["capex"]["total"] * hours / (4 * 8760 * 0.9)
    assert cost["run"]["owned_breakdown"]["depreciation"] == pytest.approx(dep, rel=1e-12)


def test_given_figures_are_sourced_to_the_scenario_and_usd_has_no_exchange_row() -> None:
    """cost.utilization 0.75 and cost.pue 1.1 given: their rows say "scenario input" (source code
    source.scenario); in USD there is no conversion, so no exchange-rate row."""
    doc = {**QWEN_CNY, "cost": {"utilization": 0.75, "pue": 1.1}}
    _, row = rows(doc)
    assert row["utilization"]["value"] == 0.75 and row["utilization"]["source"] == "scenario input"
    assert row["pue"]["value"] == 1.1 and row["pue"]["source_code"] == "source.scenario"
    assert "exchange-rate" not in row


def test_the_monte_carlos_price_triangles_are_in_the_sections_currency() -> None:
    """uncertainty.currency CNY states its triangles in CNY, as its costs and the cost section: the
    Ascend 910C's cloud price 2.00 USD per card-hour [U], drawn +-20 % (1.60-2.40), at 7.2 CNY/USD
    is 11.52 / 14.40 / 17.28 CNY; the capex's likely value is cost.capex.total and the electricity's
    0.08 USD x 7.2 = 0.576 CNY/kWh (before: the USD figures under "currency": "CNY")."""
    doc = {**QWEN_CNY, "hardware": {"accelerator": "ascend-910c"}}
    result = estimate(doc)["result"]
    mc = result["uncertainty"]
    assert mc["currency"] == "CNY"
    assert mc["inputs"]["cloud_price_per_card_hour"] == pytest.approx([11.52, 14.4, 17.28])
    assert mc["inputs"]["capex"][1] == pytest.approx(result["cost"]["capex"]["total"])
    assert mc["inputs"]["electricity_per_kwh"][1] == pytest.approx(0.576)
    assert mc["inputs"]["mfu"][1] == pytest.approx(0.4)


def test_a_given_mfu_without_a_range_names_the_assumed_spread() -> None:
    """MFU 0.4 given without efficiency.mfu_range: the Monte Carlo draws 0.3 / 0.4 / 0.5 (0.4 x
    (1 -+ 0.25)), so the row says 0.25 and that it is no evidence; with a range given, or with the
    MFU predicted, there is no such row (before: the spread was in no row)."""
    _, row = rows(QWEN_CNY)
    assert row["mfu-spread"]["value"] == 0.25
    assert row["mfu-spread"]["source_code"] == "source.mfu-spread-assumed"
    result = estimate(QWEN_CNY)["result"]
    assert result["uncertainty"]["inputs"]["mfu"] == pytest.approx([0.3, 0.4, 0.5])
    ranged = {**QWEN_CNY, "efficiency": {"mfu": 0.4, "mfu_range": [0.35, 0.45]}}
    assert "mfu-spread" not in rows(ranged)[1]
