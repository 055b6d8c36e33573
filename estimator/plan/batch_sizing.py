"""The cards of a sweep group's rows (plan.batch): without an MFU from the layout model (predicted:
one vectorized layout search for the group's distinct card counts, or the deadline scan per
distinct (tokens, days)), and, with an MFU given, which rows' cards hold no layout and the round
size a deadline's grows to (without_layout, grow_to_fit), as plan.choose_cluster decides for one
scenario. Units: cards, days, MFU (a share of peak)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from estimator.contract.resolve import Resolved
from estimator.errors import ScenarioError
from estimator.layout.search import LayoutEval
from estimator.model.compute import SECONDS_PER_DAY
from estimator.money.pricing import model_flops
from estimator.plan import goodput
from estimator.plan.batch_confidence import GroupConfidence
from estimator.plan.compose import (
    SizeMemo,
    candidate_sizes,
    cards_multiple,
    size_for_deadline,
    smallest_fitting,
)
from estimator.plan.deadline import largest_cluster
from estimator.plan.deadline_refusals import cards_without_failures
from estimator.plan.deadline_risk import deadline_rule
from estimator.plan.goodput import cards_for_deadline_with_failures

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RowInputs:
    """What a group's rows are sized by: training FLOP and tokens per row, `size` their cards
    (`given_cards`) or deadline days, `mfu` their MFU (NaN where the layout model predicts it)."""

    flop: FloatArray
    tokens: FloatArray
    size: FloatArray
    mfu: FloatArray
    given_cards: bool


@dataclass(frozen=True)
class RowSizes:
    """The rows' cards, MFU (NaN where unplanned), best layouts (predicted MFU only, else None),
    the MFU a refused deadline's reason states (NaN for the rows that plan or have an MFU given) and
    whether each row has no layout on its cards."""

    cards: IntArray
    mfu: FloatArray
    bests: list[LayoutEval | None]
    past_mfu: FloatArray
    unplanned: npt.NDArray[np.bool_]


def size_rows(r: Resolved, x: RowInputs, confident: GroupConfidence | None) -> RowSizes:
    """The cards of each row, as plan.choose_cluster sizes one scenario: the given cards; for a
    deadline with an MFU given the fewest whole nodes that meet it with failures counted
    (goodput.cards_for_deadline_with_failures) or, with cluster.deadline_confidence, at the chance
    asked (`confident`), grown to the smallest round size that holds a layout; without an MFU the
    layout model's (predicted)."""
    mfu = np.array(x.mfu, dtype=float)
    slow = np.isnan(mfu)
    peak = r.accelerator.peak_flops(r.scenario.training.precision)
    if x.given_cards:
        cards = x.size.astype(np.int64)
    else:
        seconds = x.size * SECONDS_PER_DAY
        with_mfu = np.where(slow, 1.0, mfu)
        largest = functools.partial(largest_cluster, r, SizeMemo(r, reuse=True))  # asked where a row needs it
        cards = cards_for_deadline_with_failures(
            r, x.flop, seconds, peak, with_mfu, cards_multiple(r), x.tokens, largest=largest
        )
    bests: list[LayoutEval | None] = [None] * len(mfu)
    past_mfu = np.where(slow, np.nan, mfu)  # the MFU at which a refused deadline is past every cluster
    rows = np.flatnonzero(slow)
    if rows.size:
        cards[rows], mfu[rows], found, past_mfu[rows] = predicted(r, x.tokens, x.size, x.given_cards, rows)
        for i, best in zip(rows.tolist(), found, strict=True):
            bests[i] = best
    given = np.flatnonzero(~slow)
    unplanned = np.isnan(mfu)
    if given.size and confident is not None:  # sized for the chance of missing (plan.choose_cluster)
        cards[given] = confident.cards_at_given_mfu(x.flop, x.tokens, x.size, mfu, given)
    if given.size:
        unplanned[given] = without_layout(r, cards[given])
        if not x.given_cards:  # a deadline's cards grow to the smallest round size that fits (plan.choose)
            grow_to_fit(r, cards, unplanned, given)
    return RowSizes(cards, np.where(unplanned, np.nan, mfu), bests, past_mfu, unplanned)


def predicted(
    r: Resolved,
    tokens: npt.NDArray[np.float64],
    size: npt.NDArray[np.float64],
    given_cards: bool,
    rows: IntArray,
) -> tuple[IntArray, npt.NDArray[np.float64], list[LayoutEval | None], npt.NDArray[np.float64]]:
    """Cards, MFU, best layouts and "past the largest cluster" of the rows without an MFU (a
    deadline no cluster the network builds meets: deadline_refusals.too_many_cards; the MFU its refusal
    states, NaN for the rows that plan), from the layout model: one
    vectorized search for all distinct card counts of the group (cards given), or deadline sizing
    per distinct (tokens, days) sharing one memo of searched sizes (plan.SizeMemo), judged by the
    deadline's rule (plan.deadline_risk.deadline_rule: with cluster.deadline_confidence the chance
    of missing). The same numbers as plan.choose_cluster row by row."""
    memo = SizeMemo(r, reuse=True)
    picks: dict[tuple[float, float], tuple[int, LayoutEval | None]] = {}
    too_large: dict[tuple[float, float], float] = {}  # the refused deadlines: the MFU their refusal states
    if given_cards:
        distinct = sorted({int(size[i]) for i in rows})
        with_fabric = [c for c in distinct if memo.fabric(c) is not None]
        for c, best in zip(with_fabric, memo.best(with_fabric), strict=True):
            picks[(0.0, float(c))] = (c, best)
        for c in set(distinct) - set(with_fabric):
            picks[(0.0, float(c))] = (c, None)
        keys = [(0.0, float(size[i])) for i in rows]
    else:
        multiple = cards_multiple(r)
        sizes = candidate_sizes(r, multiple)
        keys = [(float(tokens[i]), float(size[i])) for i in rows]
        for key in dict.fromkeys(keys):
            met = deadline_rule(r, key[1] * SECONDS_PER_DAY, key[0])  # with the group's confidence
            try:
                chosen, _, best = size_for_deadline(
                    r, sizes, memo, met, goodput.ettr_at(r, key[0]), _row_need(r, key[0], key[1])
                )
            except ScenarioError as exc:  # this row's deadline only: the others of the group still plan
                if exc.errors[0].code != "deadline-needs-too-many-cards":
                    raise
                chosen, best = int(sizes[0]), None  # a size that builds; the row gets no figures
                too_large[key] = float(exc.errors[0].params["mfu"])
            picks[key] = (chosen, best)
    cards = np.array([picks[k][0] for k in keys], dtype=np.int64)
    bests = [picks[k][1] for k in keys]
    # no layout at these cards: no MFU, so no figures (no figure without a plan, plan.refusal)
    mfu = np.array([np.nan if b is None else b.predicted_mfu for b in bests])
    return cards, mfu, bests, np.array([too_large.get(k, np.nan) for k in keys])


def _row_need(r: Resolved, tokens: float, days: float) -> Callable[[float], int]:
    """need(mfu) of a row's deadline: the cards `tokens` in `days` need without interruptions."""
    flop = float(model_flops(r)["flop_per_token"]) * tokens
    return lambda mfu: int(cards_without_failures(r, flop, days * SECONDS_PER_DAY, mfu))


def without_layout(r: Resolved, cards: IntArray) -> npt.NDArray[np.bool_]:
    """Rows (an MFU given) whose cards admit no layout that passes the rules and fits: the plan
    refuses those (plan.choose._choice) whatever the MFU, so the row has no figures either."""
    memo = SizeMemo(r, reuse=True)
    values, where = np.unique(np.asarray(cards, dtype=np.int64), return_inverse=True)
    distinct = [c for c in values.tolist() if memo.fabric(c) is not None]
    has = dict(zip(distinct, memo.fits(distinct), strict=True))  # memory only, no step time
    without = np.array([not has.get(c, True) for c in values.tolist()], dtype=bool)
    return without[where.reshape(-1)]


def grow_to_fit(r: Resolved, cards: IntArray, unplanned: npt.NDArray[np.bool_], rows: IntArray) -> None:
    """Rows (a deadline, an MFU given) whose cards hold no layout: the smallest round size above
    them that does, as deadline.cards_for_given_mfu sizes one scenario (in place; rows with no such
    size stay unplanned)."""
    memo = SizeMemo(r, reuse=True)
    sizes = candidate_sizes(r, cards_multiple(r))
    grow = rows[unplanned[rows]]
    for c in np.unique(cards[grow]).tolist():
        fit = smallest_fitting(sizes, int(np.searchsorted(sizes, c, side="right")), memo)
        if fit is not None:
            same = grow[cards[grow] == c]
            cards[same], unplanned[same] = int(sizes[fit]), False
