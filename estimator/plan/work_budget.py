"""The work-budget checks that need the resolved scenario (the caps themselves: estimator.limits).

`check_work_budget(data)` validates and resolves a scenario and refuses one whose layout search
would enumerate more than limits.MAX_LAYOUT_CANDIDATES layouts (400 on `cluster.cards`), before
any search runs. The count is that of the planner's own layout problem (estimator.plan.compose's
`layout_problem`, estimator.layout.enumeration's axes): this module only counts, the rules live there.
It sits above plan's planning (it imports plan.compose; nothing that plans imports it), so the
callers are the entry points: the CLI, the web's one estimate path (reports.services.run_estimate)
and plan.count_curve (each count the report's cards chart plans).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from estimator import limits
from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.layout.enumeration import candidate_count
from estimator.plan.compose import layout_problem

if TYPE_CHECKING:  # annotations only: the book's pydantic models load where a book is parsed
    from estimator.contract.price_book import PriceBook

# The fabric changes bandwidths, not how many layouts there are: any one serves for counting.
_ANY_FABRIC = SimpleNamespace(cross_leaf_bandwidth_factor=1.0, nodes_per_leaf_group=math.inf)


def layout_candidates(resolved: Resolved, cards: int) -> int:
    """Layouts the search would enumerate for `resolved` at `cards` (product of the axis sizes)."""
    problem = layout_problem(resolved, cards, _ANY_FABRIC)  # type: ignore[arg-type]
    return candidate_count(problem)


def check_work_budget(data: Any, books: Mapping[str, PriceBook] | None = None) -> Resolved:
    """Validate and resolve `data`; raise ScenarioError if its layout search is over budget. With a
    deadline or a budget instead of cards, each size tried is bounded by the search's wall-clock
    budget (limits.SEARCH_SECONDS) instead."""
    resolved = resolve(validate_shape(data), books)
    cards = resolved.scenario.cluster.cards
    if cards is not None:
        _check_cards(resolved, cards, "cluster.cards")
    calibration = resolved.scenario.calibration
    if calibration is not None:  # the pilot's own layout search (estimator.plan.pilot)
        from estimator.plan.pilot import pilot_document  # only a scenario with a pilot needs it

        try:
            pilot = resolve(validate_shape(pilot_document(resolved.scenario)), None)
        except ScenarioError:
            return resolved  # planning reports the pilot's errors with their paths
        _check_cards(pilot, calibration.pilot.cards, "calibration.pilot.cards")
    return resolved


def _check_cards(resolved: Resolved, cards: int, field: str) -> None:
    count = layout_candidates(resolved, cards)
    if count > limits.MAX_LAYOUT_CANDIDATES:
        raise ScenarioError(
            f"{cards:,} cards give {count:,} parallel layouts to search; the limit is "
            f"{limits.MAX_LAYOUT_CANDIDATES:,}: fix some of parallelism.tp, pp, cp or ep, or "
            "choose a card count with fewer divisors",
            field,
        )
