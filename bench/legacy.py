"""Yesterday's code path, kept for the benchmarks only (bench/plan_speed.py prints it beside the new
one as a ratio): one full layout search per cluster size, sizes scanned one at a time, and a sweep
row without an MFU planned one by one. Nothing in the product imports this module.

- search_legacy: layout.search as it was (memory and step time of every structurally valid candidate).
- choose_cluster_legacy: plan.choose_cluster as it was (a search per scanned size).
- legacy_paths(): a context manager that routes plan.estimate() and batch.evaluate_columns()
  through the two.
"""

from __future__ import annotations

import contextlib
import dataclasses
from unittest import mock

import numpy as np

from estimator.errors import ScenarioError
from estimator.layout.enumeration import REASONS, enumerate_candidates, structural_failures
from estimator.layout.evaluation import evaluate
from estimator.layout.search import LayoutProblem, LayoutSearch, _make_eval, partial_redundant, rank_order
from estimator.model.compute import SECONDS_PER_DAY, cards_for_deadline
from estimator.money import pricing
from estimator.plan import batch_sizing, sizing
from estimator.plan import compose as plan
from estimator.plan.choose import _choice


def search_legacy(problem: LayoutProblem) -> LayoutSearch:
    """layout.search before batching: evaluate every structurally valid candidate, then filter."""
    c = enumerate_candidates(problem)
    n = c["tp"].size
    reason = np.full(n, -1, dtype=np.int64)
    for name, failing in structural_failures(problem, c):
        reason[(reason < 0) & np.asarray(failing, dtype=bool)] = REASONS.index(name)
    ok = np.flatnonzero(reason < 0)
    sub = {k: v[ok] for k, v in c.items()}
    mem, t = evaluate(problem, sub)
    fits = mem.total <= problem.accelerator.hbm_bytes
    reason[ok[~fits]] = REASONS.index("out-of-memory")
    if "recompute" not in problem.fixed:
        redundant = fits & partial_redundant(sub["rc"], t["recompute_fraction"])
        reason[ok[redundant]] = REASONS.index("partial-recompute-redundant")
        fits = fits & ~redundant
    counts = np.bincount(reason[reason >= 0], minlength=len(REASONS))
    rejected = {name: int(k) for name, k in zip(REASONS, counts, strict=True) if k}
    good = np.flatnonzero(fits)
    top_n = int(problem.fixed.get("top_n", problem.top_n))
    if good.size == 0:
        closest = _make_eval(problem, sub, mem, t, int(np.argmin(mem.total))) if ok.size else None
        return LayoutSearch(None, [], rejected, n, 0, closest)
    order = good[
        rank_order(t["tokens_per_s"][good], mem.total[good], t["recompute_fraction"][good], sub["zero"][good])
    ]
    evals = [_make_eval(problem, sub, mem, t, int(i)) for i in order[: top_n + 1]]
    return LayoutSearch(evals[0], evals[1:], rejected, n, int(good.size))


def _evaluate(r, cards):
    fabric = plan.fabric_for(r, cards)
    return fabric, search_legacy(plan.layout_problem(r, cards, fabric))


def choose_cluster_legacy(r, training_flop: float, peak: float):
    """plan.choose_cluster before batching: one full search per scanned size."""
    s = r.scenario
    given_mfu = s.efficiency.mfu
    if s.cluster.cards is not None:
        cards = s.cluster.cards
        return _choice(r, cards, *_evaluate(r, cards), given_mfu)
    seconds = s.cluster.target_days * SECONDS_PER_DAY
    multiple = plan.cards_multiple(r)

    def need(mfu: float) -> int:
        return int(cards_for_deadline(training_flop, seconds, peak, mfu, multiple))

    if given_mfu is not None:
        cards = need(given_mfu)
        return _choice(r, cards, *_evaluate(r, cards), given_mfu)
    sizes = plan.candidate_sizes(r, multiple)
    tried: dict = {}

    def meets(i: int) -> bool | None:
        cards = int(sizes[i])
        if cards not in tried:
            try:
                tried[cards] = _evaluate(r, cards)
            except ScenarioError:
                return None
        best = tried[cards][1].best
        return None if best is None else need(float(best.predicted_mfu)) <= cards

    first = min(int(np.searchsorted(sizes, need(plan.MAX_PLAUSIBLE_MFU))), len(sizes) - 1)
    last = need(plan.MIN_PLAUSIBLE_MFU)
    fast = None
    for i in range(first, len(sizes)):
        if (sizes[i] > last and tried) or len(tried) >= plan.MAX_SIZING_EVALS:
            break
        ok = meets(i)
        if ok:
            fast = i
            break
        if ok is None and int(sizes[i]) not in tried and tried:
            break
    if fast is not None:
        cards = int(sizes[fast])
    else:

        def throughput(cards: int) -> float:
            best = tried[cards][1].best
            return cards * best.predicted_mfu if best is not None else 0.0

        if not tried:
            cards = int(sizes[first])
            tried[cards] = _evaluate(r, cards)
        cards = max(tried, key=throughput)
    fabric, found = tried[cards]
    return _choice(r, cards, fabric, found, None)


def _predicted_legacy(r, tokens, size, given_cards, rows):
    """batch's rows without an MFU before batching: choose_cluster per distinct (tokens, size); the
    old path had no "past the largest cluster" rows (the fourth column, their MFU, is all NaN)."""
    s = r.scenario
    cache: dict = {}
    for i in rows:
        key = (float(tokens[i]), float(size[i]))
        if key not in cache:
            cluster = s.cluster.model_copy(
                update={"cards": int(key[1]), "target_days": None}
                if given_cards
                else {"cards": None, "target_days": key[1]}
            )
            training = s.training.model_copy(update={"tokens": key[0]})
            row = dataclasses.replace(
                r, scenario=s.model_copy(update={"cluster": cluster, "training": training})
            )
            flop = pricing.model_flops(row)["training_flop"]
            choice = choose_cluster_legacy(row, flop, row.accelerator.peak_flops(s.training.precision))
            cache[key] = (choice.cards, choice.layouts.best)
    picks = [cache[(float(tokens[i]), float(size[i]))] for i in rows]
    cards = np.array([p[0] for p in picks], dtype=np.int64)
    mfu = np.array([np.nan if p[1] is None else p[1].predicted_mfu for p in picks])
    return cards, mfu, [p[1] for p in picks], np.full(len(picks), np.nan)


@contextlib.contextmanager
def legacy_paths():
    """Route plan.estimate() and batch.evaluate_columns() through the pre-batching code."""
    with (
        mock.patch.object(plan, "choose_cluster", choose_cluster_legacy),
        mock.patch.object(sizing, "choose_cluster", choose_cluster_legacy),  # what plan() calls
        mock.patch.object(batch_sizing, "predicted", _predicted_legacy),
    ):
        yield
