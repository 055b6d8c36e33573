"""The cluster a capital budget plans (`cluster.budget`): of the sizes it buys, the one that trains
fastest. The most cards the budget buys (money.budget.cards_for_budget) need not train fastest:
where the batch splits badly over them the MFU collapses (Llama 3.1 70B, 2T tokens on H100 with
300 M USD: the most it buys, 6,848 cards, take 7.1 days at 27.5% MFU, the round size 6,720 take 5.4
at 36.6% and cost less), and interruptions grow with the cards. So the budget's cluster is the
fastest of the most it buys and the round sizes below it (plan.deadline.candidate_sizes),
searched downward until no smaller size can beat the fastest found (plan.deadline.fastest_below),
ties to fewer cards. Throughput: cards · MFU · ETTR (the predicted MFU of each size's best layout,
or the MFU given where a layout fits; ETTR where failures are counted). Units: cards."""

from __future__ import annotations

import numpy as np

from estimator.contract.resolve import Resolved
from estimator.layout.search import LayoutEval
from estimator.plan import goodput
from estimator.plan.deadline import (
    SizeMemo,
    candidate_sizes,
    fastest_below,
    fastest_of,
    highest_mfu,
    searched_speeds,
)
from estimator.plan.problem import cards_multiple


def fastest_affordable(r: Resolved, most: int, memo: SizeMemo, given_mfu: float | None) -> int:
    """The cards of the budget's cluster: the fastest of `most` (the most the budget buys) and the
    round sizes below it, the fewest of equals; `most` where none of them holds a layout (the plan
    then refuses with its reasons)."""
    sizes = candidate_sizes(r, cards_multiple(r))
    sizes = np.append(sizes[sizes < most], most)
    ettr = goodput.ettr_at(r)
    if given_mfu is None:
        top = highest_mfu(sizes, memo)

        def speeds(block: list[int]) -> list[tuple[LayoutEval | None, float]]:
            return searched_speeds(block, memo, ettr)
    else:
        top = given_mfu

        def speeds(block: list[int]) -> list[tuple[LayoutEval | None, float]]:
            fits = np.array(memo.fits(block), dtype=bool)
            cards = np.array(block, dtype=np.int64)
            share = ettr(cards, np.full(cards.size, given_mfu)) if ettr is not None else np.ones(cards.size)
            return [(None, float(v)) for v in np.where(fits, cards * given_mfu * share, 0.0)]

    tried: dict[int, tuple[LayoutEval | None, float]] = {}
    fastest_below(sizes, len(sizes), memo, speeds, tried, top)
    if not tried or max(t[1] for t in tried.values()) <= 0.0:
        return most
    return fastest_of(tried)
