"""A sweep axis's values as the reader reads them: tokens in 万/亿 (zh) or B/T (en), money in the
sweep's currency, a chance of meeting the deadline in percent as the builder asks it, card counts
with separators; anything else as the scenario writes it. The page's tables, heatmaps and headers
and the names of the estimates a sweep row opens all take their values from here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import formatting as f

BIG = {"training.tokens", "training.global_batch_tokens", "model.params"}
COUNTS = {"cluster.cards", "network.switch_ports", "training.seq_len"}
MONEY = {
    "cluster.budget",
    "cost.budget",
    "cost.server_price",
    "cost.switch_price",
    "cost.transceiver_price",
    "cost.cloud_price_per_card_hour",
    "cost.cloud_reserved_price_per_card_hour",
    "cost.electricity_per_kwh",
}
PERCENT = {"cluster.deadline_confidence"}  # a fraction the builder asks in percent (sweeps.builder)


def _number(field: str, currency: str) -> Callable[[float], str] | None:
    if field in BIG:
        return f.big
    if field in COUNTS:
        return f.count
    if field in MONEY:
        return lambda v: f.money(v, currency)
    if field in PERCENT:
        return _percent
    if field == "cluster.target_days":
        return f.days
    return None


def _percent(fraction: float) -> str:
    """0.5 -> 50%, 0.975 -> 97.5%: the fewest decimals (up to 3) that write the percent typed."""
    decimals = next((d for d in range(3) if round(fraction * 100, d) == round(fraction * 100, 9)), 3)
    return f.percent(fraction, decimals)


def axis_value(field: str, value: Any, currency: str = "USD") -> str:
    """One value of the axis `field` in the reader's language (strings and booleans as written)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    shown = _number(field, currency)
    return shown(value) if shown else f.auto(value)


def axis_values(field: str, values: Sequence[Any], currency: str = "USD") -> list[str]:
    """The axis's values as axis_value writes them, or as written where two would read alike
    (1.5T and 1.504T at three figures): a chart's categories must stay one per value."""
    shown = [axis_value(field, v, currency) for v in values]
    return shown if len(set(shown)) == len(set(map(str, values))) else [str(v) for v in values]
