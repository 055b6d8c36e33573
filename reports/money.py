"""Money at the edge: the core computes amounts as floats (numpy, vectorized); what leaves the
product (API bodies, CSV, Excel headers) carries them as decimal strings with their ISO 4217
currency. This module is the one place that converts.

A total is rounded to the currency's minor unit (CLDR, through Babel: 2 for USD and CNY, 0 for
JPY); a rate (per card-hour, per kWh) keeps two more places, since 7.488 CNY per card-hour is a
price, not a rounding error. Rounding is half-even on the float's shortest repr (Decimal(repr(x))),
so 0.5760000000000001 becomes "0.576000", never the binary expansion of the float.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal
from numbers import Real
from typing import Any, Literal

from babel.numbers import get_currency_precision

from estimator.dotted import get_path
from estimator.money.rollup import SUMMARY_FIELDS

Kind = Literal["total", "rate"]
RATE_EXTRA_PLACES = 2

# Every amount of a result, by dotted path, in the result's currency (cost.currency); a missing
# path (no budget, no uncertainty) is left out. Unit prices of catalog parts are `*_usd` fields in
# US dollars, named so, and not repeated here.
RESULT_AMOUNTS: tuple[tuple[str, Kind], ...] = (
    ("cost.capex.total", "total"),
    ("cost.capex.compute", "total"),
    ("cost.capex.network", "total"),
    ("cost.capex.scaleup", "total"),
    ("cost.capex.storage", "total"),
    ("cost.run.owned", "total"),
    ("cost.run.cloud", "total"),
    ("cost.run.cloud_reserved", "total"),
    ("cost.run.owned_breakdown.depreciation", "total"),
    ("cost.run.owned_breakdown.energy", "total"),
    ("cost.run.owned_breakdown.facility", "total"),
    ("cost.monthly_owned_opex", "total"),
    ("cost.budget", "total"),
    ("cost.owned_per_card_hour", "rate"),
    ("cost.cloud_per_card_hour", "rate"),
    ("cost.cloud_reserved_per_card_hour", "rate"),
    ("cost.electricity_per_kwh", "rate"),
    *((f"uncertainty.{m}.{q}", "total") for m in ("cost_owned", "cost_cloud") for q in ("p10", "p50", "p90")),
    ("budget.budget", "total"),
    ("budget.capex", "total"),
    ("budget.over_by", "total"),
    ("budget.headroom", "total"),
    ("budget.affords.capex", "total"),
    ("goodput.spares.capex", "total"),
)
# The sweep's columns that are amounts (in the sweep row's currency), with their kind: the result's
# amounts (RESULT_AMOUNTS) among the fields a sweep row carries (estimator.plan.batch: SUMMARY_FIELDS).
SWEEP_AMOUNT_KINDS: dict[str, Kind] = {path: kind for path, kind in RESULT_AMOUNTS if path in SUMMARY_FIELDS}
SWEEP_AMOUNT_COLUMNS = frozenset(SWEEP_AMOUNT_KINDS)


def places(currency: str, kind: Kind = "total") -> int:
    return get_currency_precision(currency) + (RATE_EXTRA_PLACES if kind == "rate" else 0)


def decimal_amount(value: Any, currency: str, kind: Kind = "total") -> str | None:
    """The amount as a decimal string ("8643780.00"); None for a missing or non-finite value."""
    if not isinstance(value, Real) or isinstance(value, bool) or not math.isfinite(float(value)):
        return None
    exponent = Decimal(1).scaleb(-places(currency, kind))
    return str(Decimal(repr(float(value))).quantize(exponent, rounding=ROUND_HALF_EVEN))


def money(value: Any, currency: str, kind: Kind = "total") -> dict[str, str] | None:
    """{"amount": "8643780.00", "currency": "USD"}, or None without an amount."""
    amount = decimal_amount(value, currency, kind)
    return None if amount is None else {"amount": amount, "currency": currency}


def result_currency(result: dict) -> str:
    return get_path(result, "cost.currency") or "USD"


def result_amounts(result: dict) -> dict[str, dict[str, str]]:
    """Every amount of a stored result: {dotted path: money}."""
    currency = result_currency(result)
    out = {}
    for path, kind in RESULT_AMOUNTS:
        found = money(get_path(result, path), currency, kind)
        if found is not None:
            out[path] = found
    return out


def header(label: str, currency: str) -> str:
    """A column header of an amount: "Cluster cost (USD)"."""
    return f"{label} ({currency})"
