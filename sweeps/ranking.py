"""One currency per ranking: how a sweep's rows are ranked by money (sweeps.digests: best rows,
ranges, Pareto fronts, the sample, heatmap cells). Pure functions of arrays and stored rows.

A sweep over cost.currency has rows in USD and rows in CNY, whose amounts are not compared as
numbers (1,000,000 CNY is about 139,000 USD). Every amount of a plan is its USD figure times one
rate, the row's cost.exchange_rate (contract.resolve: cost.usd_to_cny or the catalog's; a price book
in CNY converted into USD by the same kind of rate, contract.book_pricing.usd_per_unit), so such a
sweep ranks each row's amount in USD, divided by its own rate, and its summary says so (RANKED_IN:
"USD"); the rows themselves keep their own currency. A sweep in one currency ranks as it is."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

CURRENCY_FIELD = "cost.currency"
RATE = "cost.exchange_rate"  # the core's column: units of the row's currency per USD
MONEY_METRICS = ("cost.run.owned", "cost.run.cloud", "cost.capex.total")
RANKED_IN = "ranked_in"  # the summary's currency of its money rankings where the currency is swept


def mixed_currencies(axes: Iterable[Any]) -> bool:
    """Whether the rows are in more than one currency (cost.currency is an axis)."""
    return any(a.field == CURRENCY_FIELD for a in axes)


def ranked(arrays: dict[str, np.ndarray], metric: str, mixed: bool) -> np.ndarray:
    """The values `metric` is ranked by: a money metric of rows in several currencies in USD (its
    amount / the row's RATE), else as it is (and where the rows carry no rate: chunks stored before
    the core gave it)."""
    values = arrays[metric].astype(np.float64)
    if mixed and metric in MONEY_METRICS and RATE in arrays:
        with np.errstate(divide="ignore", invalid="ignore"):  # rows not planned have no rate (NaN)
            return np.asarray(values / arrays[RATE].astype(np.float64))
    return values


def rank_key(row: dict, metric: str, mixed: bool) -> float:
    """The ranking value of a stored best row (as `ranked`): inf where it has none."""
    value = row.get(metric)
    if value is None:
        return math.inf
    if mixed and metric in MONEY_METRICS:
        rate = row.get(RATE, 1.0)  # stored before the core gave it: as it is, as `ranked`
        return float(value) / float(rate) if rate else math.inf
    return float(value)


def best_first(rows: list[dict], metric: str, mixed: bool) -> list[dict]:
    """Stored best rows in ranking order (rank_key, then the scenario index)."""

    def key(row: dict) -> tuple[float, int]:
        return rank_key(row, metric, mixed), int(row["index"])

    return sorted(rows, key=key)
