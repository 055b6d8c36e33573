"""The planned points of a stored estimate's "cards against days and cost" chart
(estimator.plan.count_curve.plan_counts), computed when its report is drawn and cached with its
figures (reports.pages.report_counts): the stored input with its stored price book, planned at
round sizes around the stored card count by today's engine.

They are drawn only where today's engine plans the stored count as the stored result says (the
same cards, headline days with failures, MFU and capex): a report stored by an older engine or
catalog whose figures have moved since gets no chart rather than points that disagree with its own
headline (its "Recompute with today's catalog" shows today's figures)."""

from __future__ import annotations

import logging
import math
from typing import Any

from estimator.dotted import get_path as dig
from estimator.errors import ScenarioError
from estimator.plan.count_curve import plan_counts

from . import goodput
from .services import books_for, core_errors

logger = logging.getLogger(__name__)

# relative difference within which a re-planned figure is the stored one (JSON float round trip)
SAME_RELATIVE = 1e-9


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=SAME_RELATIVE, abs_tol=0.0)


def agrees(point: dict[str, Any], result: dict[str, Any]) -> bool:
    """The point at the plan's own count has the stored result's headline figures: cards, days with
    failures (reports.goodput.days_with_failures), MFU and the cluster's capex."""
    return (
        point.get("cards") == dig(result, "compute.cards")
        and _same(point.get("wall_clock_days"), goodput.days_with_failures(result))
        and _same(point.get("mfu"), dig(result, "compute.mfu"))
        and _same(point.get("capex_in_currency"), dig(result, "cost.capex.total"))
    )


def points(data: Any, price_book: dict[str, Any] | None, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The planned points (CountPoint.to_dict, ascending cards) of the estimate whose input is
    `data`, stored book document `price_book` and stored result `result`; [] where the input is
    refused today or today's plan at the stored count is not the stored one (module docstring)."""
    cards = dig(result, "compute.cards")
    if not isinstance(cards, int) or isinstance(cards, bool) or cards < 1:
        return []
    try:
        with core_errors():
            planned = plan_counts(data, cards, books_for(data=data, document=price_book))
    except ScenarioError as exc:
        logger.info("no planned counts for a stored estimate: %s", exc)
        return []
    out = [p.to_dict() for p in planned]
    own = next((p for p in out if p["cards"] == cards), None)
    if own is None or not agrees(own, result):
        logger.info("no planned counts: today's plan of %s cards is not the stored one", cards)
        return []
    return out
