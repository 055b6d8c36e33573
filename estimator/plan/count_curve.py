"""The same scenario planned at round cluster sizes around a plan's card count: what the report's
"cards against days and cost" chart draws. Every point is a plan (no figure without a plan): the
scenario with `cluster.cards` set to the point's count (no deadline or budget sizing), its layout
searched as a plan at that count searches it, all counts in one vectorized call
(plan.batch.evaluate_columns, the sweeps' path, equal to plan.estimate() row by row). A count the
engine cannot plan is a refusal with its code, never a number.

The counts: the plan's own, and for each ratio of RATIOS the round size (plan.deadline.candidate_sizes:
whole nodes or supernodes and whole replicas, the node count 2^a·3^b·5^c, as a deadline sizes a
cluster) nearest to ratio × cards on a log scale; at most len(RATIOS) + 1 points, each within the
work budget of a plan at that count (plan.work_budget: a count over it is refused), so bounded work.

Per point: cards; days, the headline's days (result.goodput.wall_clock_days_p50: with failures
where the scenario counts them, else the days of computing, as the plan's own headline); the days
of computing alone; MFU; the cluster's capex (result.cost.capex.total, in the plan's currency).
Units: cards, days, the cost's currency.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from estimator import limits
from estimator.contract.price_book import PriceBook
from estimator.contract.resolve import Resolved, resolve
from estimator.contract.scenario import validate_shape
from estimator.errors import ScenarioError
from estimator.plan import batch, batch_reasons
from estimator.plan.deadline import candidate_sizes
from estimator.plan.pilot import fit_pilot
from estimator.plan.problem import cards_multiple, fabric_for, problem_at
from estimator.plan.work_budget import layout_candidates

# ratios of the plan's cards the other points stand near (about 0.25x to 4x, geometric)
RATIOS = (0.25, 0.35, 0.5, 0.7, 1.4, 2.0, 2.8, 4.0)

# refusal codes of a chart's count (reports.plural_texts renders them; params: cards), from the
# batch's reason codes (plan.batch_reasons) of the same count
NO_LAYOUT = "count-no-layout"  # no layout passes the rules and fits in HBM (the batch's no-feasible-layout)
NO_FABRIC = "count-no-fabric"  # the network cannot connect that many cards (cluster.network.design_fabric)
NEVER_FINISHES = "count-never-finishes"  # interruptions outrun the progress (run-never-finishes)
NOT_PLANNED = "count-not-planned"  # the fixed layout does not divide the cards (contract's parallelism)
OVER_WORK_BUDGET = (
    "count-over-work-budget"  # more layouts to search than a plan may (limits.MAX_LAYOUT_CANDIDATES)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CountPoint:
    """One planned count: its figures, or the refusal's code with its params and English default."""

    cards: int
    wall_clock_days: float | None = None  # the headline's days (with failures where counted)
    compute_days: float | None = None  # days of computing alone
    mfu: float | None = None
    capex_in_currency: float | None = None  # result.cost.capex.total at this count
    refusal_code: str = ""
    refusal_params: Mapping[str, Any] = field(default_factory=dict)
    refusal_message: str = ""  # the English default

    @property
    def planned(self) -> bool:
        return not self.refusal_code

    def to_dict(self) -> dict[str, Any]:
        return {
            "cards": self.cards,
            "wall_clock_days": self.wall_clock_days,
            "compute_days": self.compute_days,
            "mfu": self.mfu,
            "capex_in_currency": self.capex_in_currency,
            "refusal_code": self.refusal_code,
            "refusal_params": dict(self.refusal_params),
            "refusal_message": self.refusal_message,
        }


def counts_around(sizes: np.ndarray, cards: int, ratios: Sequence[float] = RATIOS) -> list[int]:
    """`cards` and, per ratio, the size of `sizes` (sorted, > 0) nearest to ratio × cards on a log
    scale (the lower of two as near), without repeats, ascending."""
    logs = np.log(sizes.astype(np.float64))
    picked = {int(cards)}
    for k in ratios:
        i = int(np.argmin(np.abs(logs - np.log(k * cards))))
        picked.add(int(sizes[i]))
    return sorted(picked)


def fixed_cards_scenario(data: Mapping[str, Any], cards: int) -> dict[str, Any]:
    """The scenario `data` sized by a card count: `cluster` is {"cards": cards}, no deadline, budget
    or chance of meeting a deadline (they size the cluster, which the count now does)."""
    doc = copy.deepcopy(dict(data))
    doc["cluster"] = {"cards": int(cards)}
    return doc


def plan_counts(
    data: Mapping[str, Any], cards: int, books: Mapping[str, PriceBook] | None = None
) -> list[CountPoint]:
    """The scenario `data` (as estimate() takes it) planned at `cards` and the round sizes around
    it (counts_around), ascending. Raises ScenarioError where the scenario itself is refused."""
    base = fixed_cards_scenario(data, cards)
    r = resolve(validate_shape(base), books)
    if r.scenario.calibration is not None:  # a pilot the core refuses refuses the scenario at every count
        fit_pilot(r, problem_at)
    counts = counts_around(candidate_sizes(r, cards_multiple(r)), cards)
    searched = [c for c in counts if layout_candidates(r, c) <= limits.MAX_LAYOUT_CANDIDATES]
    out = batch.evaluate_columns(base, {"cluster.cards": np.array(searched, dtype=np.float64)}, books)
    points = []
    for c in counts:
        if c not in searched:  # the same work budget as a plan at this count (plan.work_budget)
            points.append(_over_budget(c))
            continue
        i = searched.index(c)
        if out["ok"][i]:
            points.append(
                CountPoint(
                    cards=c,
                    wall_clock_days=float(out["goodput.wall_clock_days_p50"][i]),
                    compute_days=float(out["compute.wall_clock_days"][i]),
                    mfu=float(out["compute.mfu"][i]),
                    capex_in_currency=float(out["cost.capex.total"][i]),
                )
            )
        else:
            points.append(_refused(r, c, str(out[batch_reasons.REASON_CODE_FIELD][i]), out["error"][i]))
    return points


def _over_budget(cards: int) -> CountPoint:
    return CountPoint(
        cards=cards,
        refusal_code=OVER_WORK_BUDGET,
        refusal_params={"cards": cards, "limit": limits.MAX_LAYOUT_CANDIDATES},
        refusal_message=f"{cards} cards give more than {limits.MAX_LAYOUT_CANDIDATES} parallel layouts to search",
    )


def _refused(r: Resolved, cards: int, reason: str, error: object) -> CountPoint:
    """The refusal of a count the batch could not plan, by the batch's reason code
    (plan.batch_reasons); a count whose fabric cannot be built says so with design_fabric's sentence."""
    if reason == batch_reasons.NO_LAYOUT:
        code, message = NO_LAYOUT, f"no parallel layout fits in HBM on {cards} cards"
    elif reason == batch_reasons.NEVER_FINISHES:
        code, message = NEVER_FINISHES, f"the run never finishes on {cards} cards"
    else:
        code, message = NOT_PLANNED, str(error or "no plan")
        try:
            fabric_for(r, cards)
        except ScenarioError as exc:
            code, message = NO_FABRIC, exc.errors[0].message
    return CountPoint(
        cards=cards, refusal_code=code, refusal_params={"cards": cards}, refusal_message=message
    )
