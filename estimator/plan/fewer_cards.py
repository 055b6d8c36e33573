"""A plan on the cards the user gave (`cluster.cards`) that would finish sooner on fewer: past the
global batch's critical size more cards split the same sequences a step over more DP ranks, each
runs fewer micro-batches, the pipeline bubble (P-1)/(M+P-1) grows (article 2.3) and interruptions
grow with the cards, so the wall clock can rise with the cards (Llama 3.1 405B, 15T tokens, 4M
tokens a step on 16,384 H100: TP 8 x PP 64 x CP 2 x DP 16 runs 32 micro-batches per rank, a 64 %
bubble, 198.5 days with failures; 10,240 cards take 134.6).

The search is the budget's (plan.budget_choice.fastest_affordable with the plan's cards as the most
it may take: plan.deadline.fastest_below over the round sizes up to them; throughput cards ·
predicted MFU · ETTR, ties to fewer cards), run only when the plan looks batch-bound
(batch_bound: a bubble over advice.BUBBLE_LIMIT or fewer than 4 x PP micro-batches per DP rank),
so other plans pay nothing. The size it finds is then
planned (plan.sizing.size_plan and goodput_of on the scenario with `cluster` set to those cards,
as plan.count_curve sets a count): the advice names its cards and its
headline days (with failures where counted) only where that plan finishes sooner. Units: cards, days.

    fewer-cards-faster   warning; params cards, days, faster_cards, faster_days, micro_batches,
                         faster_micro_batches, pp, dp, faster_pp, faster_dp,
                         global_batch_tokens
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from estimator.contract.readings import number_at
from estimator.contract.resolve import Resolved
from estimator.contract.scenario import Cluster
from estimator.errors import ScenarioError
from estimator.layout.search import LayoutEval
from estimator.plan.advice import BUBBLE_LIMIT
from estimator.plan.budget_choice import fastest_affordable
from estimator.plan.deadline import SizeMemo
from estimator.plan.result import AdviceItem
from estimator.plan.sizing import goodput_of, size_plan

CODE = "fewer-cards-faster"
MICRO_BATCHES_PER_STAGE = 4  # article 2.3: M >= 4 x PP keeps the 1F1B bubble near 20 % or below


def batch_bound(sections: Mapping[str, Any]) -> bool:
    """Whether the plan's layout looks bound by its global batch (result.parallelism): a pipeline
    bubble over BUBBLE_LIMIT, or fewer than MICRO_BATCHES_PER_STAGE x PP micro-batches per DP rank."""
    bubble, pp = number_at(sections, "parallelism.bubble_fraction"), number_at(sections, "parallelism.pp")
    m = number_at(sections, "parallelism.micro_batches")
    if bubble is not None and bubble > BUBBLE_LIMIT:
        return True
    return pp is not None and pp > 1 and m is not None and m < MICRO_BATCHES_PER_STAGE * pp


def headline_days(sections: Mapping[str, Any]) -> float | None:
    """The headline's days: goodput.wall_clock_days_p50 (with failures) where counted, else the days
    of computing (compute.wall_clock_days)."""
    days = number_at(sections, "goodput.wall_clock_days_p50")
    return days if days is not None else number_at(sections, "compute.wall_clock_days")


def _given_cards(r: Resolved) -> bool:
    """Whether the plan runs on the cards the user gave (no deadline or budget sizing them) with the
    MFU predicted by the layout (a given MFU does not depend on the batch's split)."""
    cluster = r.scenario.cluster
    given = cluster.cards is not None and cluster.target_days is None and cluster.budget is None
    return given and r.scenario.efficiency.mfu is None


def fewer_cards_faster(r: Resolved, sections: Mapping[str, Any]) -> AdviceItem | None:
    """The advice for a plan on given cards that a round size below finishes sooner (see the module),
    None where the cards were not given, the MFU was, the plan is not batch-bound, or no smaller
    size finishes sooner when planned."""
    cluster = r.scenario.cluster
    if not _given_cards(r) or not batch_bound(sections):
        return None
    cards, days = int(cluster.cards or 0), headline_days(sections)
    if days is None:
        return None
    found = _fastest_below(r, cards)
    if found is None:
        return None
    planned = _planned(r, found)
    if planned is None or planned[0] >= days:
        return None
    return _item(sections, cards, days, found, planned[0], planned[1])


def _fastest_below(r: Resolved, cards: int) -> int | None:
    """The round size below `cards` of highest throughput, None where the plan's own cards stay the
    fastest: the budget's search (plan.budget_choice.fastest_affordable) with the plan's cards as the
    most it may take."""
    best = fastest_affordable(r, cards, SizeMemo(r), None)
    return None if best == cards else best


def with_planned_batch(r: Resolved, items: tuple[AdviceItem, ...]) -> tuple[AdviceItem, ...]:
    """`items` with the bubble's global-batch advice (advice.bubble-over-20pct.global-batch) of a
    plan on given cards carrying the headline days of a re-plan of these cards at the lower batch it
    names (params batch_days; suggestion variant global-batch-planned); unchanged otherwise."""
    variant = "bubble-over-20pct.global-batch"
    if not _given_cards(r) or not any(a.suggestion_code == variant for a in items):
        return items
    out = []
    for a in items:
        low = float(a.params.get("batch_low_tokens") or 0) if a.suggestion_code == variant else 0.0
        training = r.scenario.training.model_copy(update={"global_batch_tokens": low}) if low else None
        planned = _planned(r, {"training": training}) if training is not None else None
        if planned is not None:
            a = dataclasses.replace(
                a,
                suggestion=f"{a.suggestion} A re-plan of these cards at {low / 2**20:g}M tokens a step: "
                f"{planned[0]:.1f} days.",
                params={**a.params, "batch_days": planned[0]},
                suggestion_code=f"{variant}-planned",
            )
        out.append(a)
    return tuple(out)


def _planned(r: Resolved, update: dict[str, Any] | int) -> tuple[float, LayoutEval | None] | None:
    """The headline days (goodput.wall_clock_days_p50: with failures where counted, else the days
    of computing) and the chosen layout of the scenario planned with `update` (scenario sections by
    name) or at a card count (`cluster` set to those cards as plan.count_curve.fixed_cards_scenario
    sets it): plan.sizing.size_plan and goodput_of, what plan.compose.build_result runs; None where
    that plan is refused."""
    if isinstance(update, int):
        update = {"cluster": Cluster(cards=update)}
    at = dataclasses.replace(r, scenario=r.scenario.model_copy(update=update))
    try:
        z = size_plan(at)
        good = goodput_of(at, z)
    except ScenarioError:
        return None
    return float(good.wall_clock_p50_days), z.choice.layouts.best


def _item(
    sections: Mapping[str, Any], cards: int, days: float, faster: int, planned: float, layout: Any
) -> AdviceItem:
    """The advice row: English default, params for the web layer."""
    m, pp = number_at(sections, "parallelism.micro_batches"), number_at(sections, "parallelism.pp")
    dp, batch_tokens = (
        number_at(sections, "parallelism.dp"),
        number_at(sections, "parallelism.global_batch_tokens"),
    )
    faster_m = None if layout is None else int(layout.micro_batches)
    faster_dp = None if layout is None else int(layout.dp)
    faster_pp = None if layout is None else int(layout.pp)
    params = {
        "cards": cards,
        "days": days,
        "faster_cards": faster,
        "faster_days": planned,
        "micro_batches": None if m is None else int(m),
        "faster_micro_batches": faster_m,
        "pp": None if pp is None else int(pp),
        "dp": None if dp is None else int(dp),
        "faster_dp": faster_dp,
        "faster_pp": faster_pp,
        "global_batch_tokens": batch_tokens,
    }
    why = (
        f"the global batch of {(batch_tokens or 0) / 2**20:.3g}M tokens a step gives each of the DP={int(dp or 0)} ranks "
        f"only {int(m or 0)} micro-batches for PP={int(pp or 0)}"
    )
    there = (
        f" (PP={faster_pp} x DP={faster_dp}, {faster_m} micro-batches per rank)" if layout is not None else ""
    )
    return AdviceItem(
        code=CODE,
        severity="warning",
        message=f"{faster:,} cards would finish sooner than these {cards:,}: {planned:.1f} days against {days:.1f}; {why}.",
        suggestion=f"Plan on {faster:,} cards{there}, or raise the global batch (training.global_batch_tokens) if the training allows it.",
        params=params,
        suggestion_code=CODE,
    )
