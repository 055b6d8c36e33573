"""Sizing for a deadline without a given MFU: the round cluster sizes it considers
(candidate_sizes), the best layouts at many sizes computed in batches (SizeMemo) and the scan that
keeps the smallest size whose predicted MFU meets the deadline (size_for_deadline); and the round
sizes nearest a card count that hold a layout (smallest_fitting above, largest_fitting below: a
deadline with its MFU given, a budget, a refusal's suggestions). Units: cards, seconds, MFU (a
share of peak)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from estimator.arrays import unique_sorted
from estimator.cluster.network import Fabric
from estimator.contract.resolve import Resolved
from estimator.errors import ScenarioError
from estimator.layout.batch_search import any_fits, best_layouts
from estimator.layout.search import LayoutEval, LayoutProblem
from estimator.layout.steptime.ceiling import mfu_ceiling
from estimator.limits import MAX_CARDS
from estimator.model.compute import MFU_PLAUSIBLE_MAX as MAX_PLAUSIBLE_MFU
from estimator.model.compute import MFU_PLAUSIBLE_MIN as MIN_PLAUSIBLE_MFU
from estimator.plan.deadline_refusals import need_without_failures, no_cluster_holds, too_many_cards
from estimator.plan.problem import cards_multiple, evaluate_at, fabric_for, layout_problem, layouts_at

MAX_SIZING_EVALS = 40  # layout searches a deadline sizing may run


# ettr(cards, mfus) -> the share of wall time that trains at each (plan.goodput.ettr_at)
Ettr = Callable[[npt.NDArray[np.int64], npt.NDArray[np.float64]], npt.NDArray[np.float64]]


class Met(Protocol):
    """The deadline's rule (plan.goodput.DeadlineMet at the planned MFU, plan.deadline_risk.
    ConfidenceRule with cluster.deadline_confidence): met(cards, mfus, bests) -> whether each size
    meets the deadline with its best layout and that layout's MFU; without `bests` whether it could
    at that MFU (what bounds the scan). `chunk`: sizes the scan judges at a time (0: a pass at once)."""

    chunk: int

    def __call__(
        self,
        cards: npt.NDArray[np.int64],
        mfu: npt.NDArray[np.float64],
        bests: list[LayoutEval | None] | None = None,
    ) -> npt.NDArray[np.bool_]: ...


class SizeMemo:
    """Best layouts of one resolved scenario at many cluster sizes, computed in batches
    (layout_batch.best_layouts: one vectorized search for all of them) and remembered, so deadline
    sizing costs about one search and a sweep's rows share what they ask for."""

    def __init__(self, r: Resolved, reuse: bool = False):
        self.r = r
        self.reuse = reuse  # layout_batch.best_layouts' reuse (sweeps)
        self._fabrics: dict[int, Fabric | None] = {}  # None: the fabric cannot be built
        self._problems: dict[int, LayoutProblem] = {}
        self._best: dict[int, LayoutEval | None] = {}

    def fabric(self, cards: int) -> Fabric | None:
        """The fabric of `cards`, or None where design_fabric (or the layout problem) refuses it."""
        if cards not in self._fabrics:
            try:
                fabric = fabric_for(self.r, cards)
                self._problems[cards] = self._problem(cards, fabric)
            except ScenarioError:
                fabric = None
            self._fabrics[cards] = fabric
        return self._fabrics[cards]

    def problem(self, cards: int) -> LayoutProblem:
        """The layout problem of `cards` (fabric(cards) built it; KeyError if it could not)."""
        return self._problems[cards]

    def built(self, cards: int) -> Fabric:
        """The fabric `fabric(cards)` built (KeyError if it could not be)."""
        fabric = self._fabrics[cards]
        if fabric is None:
            raise KeyError(cards)
        return fabric

    def _problem(self, cards: int, fabric: Fabric) -> LayoutProblem:
        """layout_problem(r, cards, fabric): the first built in full, the others by replacing what
        the size decides (the rest resolves the stack and the model's FLOPs again otherwise)."""
        if not self._problems:
            return layout_problem(self.r, cards, fabric)
        return next(iter(self._problems.values())).resized(
            cards, fabric.cross_leaf_bandwidth_factor, fabric.nodes_per_leaf_group
        )

    def best(self, cards_list: list[int]) -> list[LayoutEval | None]:
        """Best layouts at these sizes (each with a fabric), one batch for all not yet known."""
        todo = [c for c in dict.fromkeys(cards_list) if c not in self._best]
        for c, best in zip(todo, best_layouts([self._problems[c] for c in todo], self.reuse), strict=True):
            self._best[c] = best
        return [self._best[c] for c in cards_list]

    def fits(self, cards_list: list[int]) -> list[bool]:
        """Whether any layout fits at these sizes (each with a fabric): best(...) is not None,
        from memory alone (layout_batch.any_fits)."""
        known = {c: self._best[c] is not None for c in cards_list if c in self._best}
        todo = [c for c in dict.fromkeys(cards_list) if c not in known]
        known.update(zip(todo, any_fits([self._problems[c] for c in todo], self.reuse), strict=True))
        return [known[c] for c in cards_list]


SIZING_BLOCK = 8  # sizes whose memory is checked together first while looking for one that holds the model
# SCAN_IN_ONE_PASS: the deadline scan searches all the sizes it visits (at most MAX_SIZING_EVALS) in
# one pass. A pass costs about 19 M instructions for one size, 48 M for 8 and 120 M for 40 (405B on
# H100, callgrind): its fixed cost is most of a small block's, so blocks of 8, then 24, ... saved a
# scan that meets in its first 8 sizes less than they cost one that runs past them (the 405B plan
# on H100: 8 + 24 sizes, 22.9 ms, against its 40 in one pass, 20.7 ms); over 48 deadline plans (6
# models x H100, Ascend 910B2 x 30, 90 days x 2T, 15T tokens) the one pass took as long in all.


def size_for_deadline(
    r: Resolved,
    sizes: npt.NDArray[np.int64],
    memo: SizeMemo,
    met: Met,
    ettr: Ettr | None = None,
    need: Callable[[float], int] | None = None,
) -> tuple[int, Fabric, LayoutEval | None]:
    """The smallest round cluster size whose best layout's predicted MFU meets the deadline:
    (cards, fabric, best layout). met(cards, mfus) -> whether each size's wall clock fits the
    deadline at its MFU (arrays; plan.goodput.deadline_met: what compute.meets_target judges), what
    bounds the sizes scanned and decides each.

    Scan the round sizes upward from what the highest MFU any layout can reach would need
    (highest_mfu: steptime.ceiling; not the 65% record, which long sequences pass where the
    convention counts the whole attention matrix, so sizes that meet lay below the scan) and keep
    the first whose best layout meets the deadline. MFU is jagged in the card count (its factors
    decide which tp·pp·dp splits exist), so a bisection can stop at a lucky neighbour. The first
    pass ends at a typical-worst MFU (or after MAX_SIZING_EVALS sizes, or where the fabric cannot
    grow); where no size met and the pass raised the highest throughput found, a pass over the next
    sizes follows (_scan: the MFU keeps falling as cards grow, but the throughput may still rise
    enough to meet), at most MAX_SIZING_PASSES. Past the global batch's critical size more cards
    lower the throughput too (fewer micro-batches per DP rank, a larger bubble): where nothing met,
    the size of highest throughput is kept, failures counted when `ettr(cards, mfu)` (arrays) gives
    the share of wall time that trains (plan.goodput.ettr_at; the deadline is then missed). Each
    pass searches its sizes in one vectorized call (layout_batch.best_layouts, SCAN_IN_ONE_PASS: a
    pass's fixed cost is most of a small block's); the first size that meets wins. need(mfu): the
    cards the deadline needs at an MFU without interruptions (deadline_refusals.need_without_failures
    of the scenario's; a sweep row's own), which decides where a deadline out of reach with them
    scans from (within_limit)."""
    top = highest_mfu(sizes, memo)
    bare = need or (lambda mfu: need_without_failures(r, mfu))
    first = within_limit(r, sizes, _first_met(sizes, top, met), memo, top, bare)
    found = _scan(r, sizes, first, met, memo, ettr, top)
    if found[2] is not None:
        return found
    # no layout fits on any size the deadline scanned (too few tokens to need a cluster that holds
    # the model): scan again from the smallest size that holds it, memory only to find it
    fit = smallest_fitting(sizes, first, memo)
    if fit is None:
        if _fixed(r):  # a fixed layout keeps its own refusal (plan.refusal: the nearest layouts)
            return found
        raise no_cluster_holds(largest_built(sizes, len(sizes), memo))
    return _scan(r, sizes, fit, met, memo, ettr, top)


def _scan(
    r: Resolved,
    sizes: npt.NDArray[np.int64],
    first: int,
    met: Met,
    memo: SizeMemo,
    ettr: Ettr | None,
    ceiling: float,
) -> tuple[int, Fabric, LayoutEval | None]:
    """size_for_deadline's scan from sizes[first] (see there; `ceiling` the MFU no layout exceeds,
    highest_mfu); the best layout is None only when no
    scanned size holds a layout. A pass in which no size meets and which raised the highest
    throughput found (cards · MFU · ETTR) is followed by one over the next sizes (_beyond), at most
    MAX_SIZING_PASSES in all: the typical-worst MFU that ends the first is no floor of the model's
    (a 671B MoE on H800 meets 60 days on 8,192 cards at 13% MFU, past what 15% needs)."""
    scan = _visited(sizes, first, met, memo)
    tried: dict[int, tuple[LayoutEval | None, float]] = {}  # size -> (best layout, throughput)
    top = 0.0  # the highest throughput found before this pass
    for _ in range(MAX_SIZING_PASSES):
        bests = memo.best(scan)  # one vectorized pass for every size of it (SCAN_IN_ONE_PASS)
        hit = _first_meeting(scan, bests, met)
        if hit is not None:
            return scan[hit], memo.built(scan[hit]), bests[hit]
        speed = _throughputs(scan, bests, ettr).tolist()
        tried.update(zip(scan, zip(bests, speed, strict=True), strict=True))
        if not scan or max(speed) <= top:
            break  # more cards no longer train faster
        top = max(speed)
        scan = _run_of_sizes(sizes, int(np.searchsorted(sizes, scan[-1], side="right")), memo, False)
    if not tried:
        cards = int(sizes[first])
        fabric, found = evaluate_at(r, cards)  # raises the fabric's own error
        return cards, fabric, found.best
    fastest_below(sizes, first, memo, lambda block: searched_speeds(block, memo, ettr), tried, ceiling)
    cards = fastest_of(tried)  # the first of equals, as max() kept
    return cards, memo.built(cards), tried[cards][0]


MAX_SIZING_PASSES = 3  # passes of up to MAX_SIZING_EVALS sizes a deadline scan may run (_scan)


def fastest_below(
    sizes: npt.NDArray[np.int64],
    first: int,
    memo: SizeMemo,
    speeds: Speeds,
    tried: dict[int, tuple[LayoutEval | None, float]],
    top: float,
) -> None:
    """The sizes below sizes[first] join `tried` (size -> best layout, throughput: `speeds` of a
    block of sizes, each with a fabric), in blocks of MAX_SIZING_EVALS downward until no size below
    can beat the fastest found: a size's throughput cards · MFU · ETTR is at most cards · `top` (the
    MFU no layout exceeds, highest_mfu, or the one given; ETTR <= 1). Where no size meets a deadline
    (_scan) the start bounds the sizes that can meet, not the fastest: past the global batch's
    critical size more cards can train slower, and interruptions grow with the cards (Llama 3.1
    405B, 15T tokens in 32 days on H100: 10,240 cards take 135 days with failures, the 20,480 the
    fastest of the sizes above the scan's start 195; the throughput is not unimodal in the cards,
    MFU collapsing where the batch splits badly). A budget (plan.budget_choice) starts from the most
    it buys."""
    stop = first
    while stop > 0:
        start = max(0, stop - MAX_SIZING_EVALS)
        block = [int(c) for c in sizes[start:stop] if memo.fabric(int(c)) is not None]
        if block:
            tried.update(zip(block, speeds(block), strict=True))
        if tried and float(sizes[start]) * top <= max(t[1] for t in tried.values()):
            return  # every size below is slower than the fastest found
        stop = start


# speeds(block) -> (best layout, throughput) of each size of the block (fastest_below)
Speeds = Callable[[list[int]], list[tuple[LayoutEval | None, float]]]


def searched_speeds(
    block: list[int], memo: SizeMemo, ettr: Ettr | None
) -> list[tuple[LayoutEval | None, float]]:
    """Each size's best layout (memo.best) and its throughput (_throughputs)."""
    bests = memo.best(block)
    return list(zip(bests, _throughputs(block, bests, ettr).tolist(), strict=True))


def fastest_of(tried: dict[int, tuple[LayoutEval | None, float]]) -> int:
    """The size of highest throughput among `tried`, the smallest of equals."""
    sized = sorted(tried)
    return sized[int(np.argmax([tried[c][1] for c in sized]))]


def _throughputs(
    scan: list[int], bests: list[LayoutEval | None], ettr: Ettr | None
) -> npt.NDArray[np.float64]:
    """cards · predicted MFU · ETTR of each size (0 where no layout fits): proportional to the tokens
    per second of wall clock, failures counted when `ettr` gives the share that trains."""
    sized = np.array(scan, dtype=np.int64)
    mfus = np.array([0.0 if b is None else float(b.predicted_mfu) for b in bests])
    share = ettr(sized, np.where(mfus > 0, mfus, 1.0)) if ettr is not None and scan else np.ones(len(scan))
    return np.asarray(sized * mfus * share, dtype=np.float64)


def _run_of_sizes(sizes: npt.NDArray[np.int64], start: int, memo: SizeMemo, skip_unbuilt: bool) -> list[int]:
    """The sizes from sizes[start] upward, each with a fabric: at most MAX_SIZING_EVALS, up to where
    the fabric cannot grow; skip_unbuilt: past the sizes without one before the first with one (the
    first pass), else none when sizes[start] has none (a later pass: the fabric stopped growing)."""
    scan: list[int] = []
    for cards in sizes[start:].tolist():
        if len(scan) >= MAX_SIZING_EVALS:
            break
        if memo.fabric(int(cards)) is None:
            if scan or not skip_unbuilt:
                break  # the fabric cannot grow that far
            continue
        scan.append(int(cards))
    return scan


def _visited(sizes: npt.NDArray[np.int64], first: int, met: Met, memo: SizeMemo) -> list[int]:
    """The sizes the first pass of the scan visits (_run_of_sizes from sizes[first]), none past the
    first that would meet the deadline even at a typical-worst MFU (the first kept whatever it
    needs; met: one evaluation of the sizes the fabric admits)."""
    scan = _run_of_sizes(sizes, first, memo, True)
    if len(scan) > 1:
        rest = np.array(scan[1:], dtype=np.int64)
        worst = np.asarray(met(rest, np.full(rest.size, MIN_PLAUSIBLE_MFU)), dtype=bool)
        scan = scan[: 2 + int(np.argmax(worst))] if worst.any() else scan  # sizes ascend: a prefix
    return scan


def _first_meeting(scan: list[int], found: list[LayoutEval | None], met: Met) -> int | None:
    """Index of the first size of the pass that meets the deadline (_meets), judged met.chunk sizes
    at a time (all at once for chunk 0), None if none does."""
    width = met.chunk or max(len(scan), 1)
    for start in range(0, len(scan), width):
        ok = _meets(scan[start : start + width], found[start : start + width], met)
        if any(ok):
            return start + ok.index(True)
    return None


def _meets(block: list[int], found: list[LayoutEval | None], met: Met) -> list[bool]:
    """Per size of the block: it has a layout and meets the deadline with it (met, one vectorized
    evaluation for the whole block)."""
    has = [i for i, b in enumerate(found) if b is not None]
    ok = [False] * len(block)
    if has:
        mfus = np.array([float(found[i].predicted_mfu) for i in has])  # type: ignore[union-attr]
        cards = np.array([block[i] for i in has], dtype=np.int64)
        judged = met(cards, mfus, [found[i] for i in has])
        for i, fits in zip(has, np.asarray(judged).reshape(-1).tolist(), strict=True):
            ok[i] = bool(fits)
    return ok


def highest_mfu(sizes: npt.NDArray[np.int64], memo: SizeMemo) -> float:
    """The MFU no layout of this scenario exceeds (steptime.ceiling.mfu_ceiling: it does not depend
    on the cluster size), read off the smallest size's layout problem; the record MFU where the
    network cannot build that size (the scan then meets the fabric's error)."""
    smallest = int(sizes[0])
    if memo.fabric(smallest) is None:
        return MAX_PLAUSIBLE_MFU
    return mfu_ceiling(memo.problem(smallest))


def _first_met(sizes: npt.NDArray[np.int64], mfu: float, met: Met) -> int:
    """Index of the first round size whose wall clock would fit the deadline at `mfu` (len(sizes)
    if none would): one evaluation of every size. Sizes past what the network builds get counts of
    -1 there (money.pricing.vectorized_counts), and lie above every size it builds."""
    ok = np.asarray(met(sizes, np.full(sizes.size, mfu)), dtype=bool)
    return int(np.argmax(ok)) if ok.any() else len(sizes)


def within_limit(
    r: Resolved,
    sizes: npt.NDArray[np.int64],
    first: int,
    memo: SizeMemo,
    top: float,
    need: Callable[[float], int],
) -> int:
    """Where the deadline scan starts: `first`, the index of the first round size that would meet the
    deadline at the MFU `top` no layout exceeds (highest_mfu, _first_met), where the scenario's
    network builds it; past the largest cluster it builds (or past limits.MAX_CARDS), the first size
    that would meet it without interruptions at that MFU (capped at the record one; `need(mfu)`,
    cards), whose scan then keeps the fastest cluster and says it misses (sections.warnings,
    deadline-missed); the refusal too_many_cards where even that is past the largest. A network
    that cannot build even the smallest size keeps its own error (size_for_deadline: evaluate_at)."""
    if first < len(sizes) and memo.fabric(int(sizes[first])) is not None:
        return first
    if memo.fabric(int(sizes[0])) is None:  # not a matter of size: the scan meets the fabric's error
        return min(first, len(sizes) - 1)
    mfu, largest = min(top, MAX_PLAUSIBLE_MFU), largest_built(sizes, first, memo)
    bare = need(mfu)
    if bare > largest:
        raise too_many_cards(r, mfu, largest)
    return int(np.searchsorted(sizes, bare))


def largest_built(sizes: npt.NDArray[np.int64], below: int, memo: SizeMemo) -> int:
    """The largest of sizes[:below] whose fabric builds (sizes[0] does), by bisection: a fabric
    that cannot hold some endpoints cannot hold more."""
    low, high = 0, min(below, len(sizes)) - 1
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if memo.fabric(int(sizes[mid])) is not None else (low, mid - 1)
    return int(sizes[low])


def largest_cluster(r: Resolved, memo: SizeMemo) -> int:
    """The largest round size (candidate_sizes) the scenario's network builds, in cards."""
    sizes = candidate_sizes(r, cards_multiple(r))
    return largest_built(sizes, len(sizes), memo)


def smallest_fitting(sizes: npt.NDArray[np.int64], first: int, memo: SizeMemo) -> int | None:
    """Index of the first size from `first` on which some layout fits in memory (SizeMemo.fits:
    memory only, no step time), in blocks of SIZING_BLOCK, 2·SIZING_BLOCK, ...; None when none
    does before the fabric stops growing. Sizes without a fabric below the first with one are
    skipped, as the scan does."""
    start, width, seen = first, SIZING_BLOCK, False
    while start < len(sizes):
        built: list[int] = []
        for i in range(start, min(start + width, len(sizes))):
            if memo.fabric(int(sizes[i])) is not None:
                built.append(i)
                seen = True
            elif seen:
                width = 0  # the fabric cannot grow that far: this block is the last
                break
        for i, ok in zip(built, memo.fits([int(sizes[i]) for i in built]), strict=True):
            if ok:
                return i
        if width == 0:
            break
        start, width = start + width, 2 * width
    return None


def largest_fitting(r: Resolved, cards: int, memo: SizeMemo) -> int | None:
    """The largest round size below `cards` (candidate_sizes) on which a layout passes the rules and
    fits, checked by memory alone (SizeMemo.fits) in blocks of SIZING_BLOCK from the top; None where
    none does. What a budget buys when its most cards split into no layout (a count with a large
    prime factor: 14,568 = 8·3·607 MI300X for an 8B model at 32K tokens), as cards_for_given_mfu
    grows a deadline's to the next that holds one."""
    sizes = candidate_sizes(r, cards_multiple(r))
    stop = int(np.searchsorted(sizes, cards))
    while stop > 0:
        block = [int(c) for c in sizes[max(0, stop - SIZING_BLOCK) : stop] if memo.fabric(int(c)) is not None]
        for c, ok in reversed(list(zip(block, memo.fits(block), strict=True))):
            if ok:
                return c
        stop -= SIZING_BLOCK
    return None


def cards_for_given_mfu(r: Resolved, cards: int, mfu: float, memo: SizeMemo) -> int:
    """The cluster of a deadline with an MFU given: the `cards` it needs or, when no layout fits
    those in memory, the smallest round size above that does (candidate_sizes); too_many_cards
    past the largest cluster the network builds."""
    sizes = candidate_sizes(r, cards_multiple(r))
    if memo.fabric(cards) is None:
        if cards > sizes[0] and memo.fabric(int(sizes[0])) is not None:
            raise too_many_cards(r, mfu, largest_built(sizes, int(np.searchsorted(sizes, cards)), memo))
        return cards  # the plan meets the fabric's own error
    if layouts_at(r, cards, memo.built(cards)).best is not None:  # remembered: the plan asks it next
        return cards
    fit = smallest_fitting(sizes, int(np.searchsorted(sizes, cards, side="right")), memo)
    if fit is None and not _fixed(r):
        raise no_cluster_holds(largest_built(sizes, len(sizes), memo))
    return cards if fit is None else int(sizes[fit])


def _fixed(r: Resolved) -> bool:
    """Whether the scenario fixes parallelism fields (plan.refusal then names them)."""
    return any(k != "top_n" for k in r.scenario.parallelism.fixed())


def candidate_sizes(r: Resolved, multiple: int) -> np.ndarray:
    """Card counts the deadline sizing considers: whole replicas of nodes, with node counts of the
    form 2^a·3^b·5^c (consecutive ones at most ~8% apart above 100 nodes). Counts with a large prime
    factor admit no efficient tp·pp·dp split of the batch, so real clusters are not sized that way."""
    per_node = r.cards_per_node
    nodes = _SMOOTH[_SMOOTH * per_node <= MAX_CARDS]
    cards = nodes * per_node
    return unique_sorted(-(-cards // multiple) * multiple)


def _smooth_numbers(limit: int) -> np.ndarray:
    out = []
    a = 1
    while a <= limit:
        b = a
        while b <= limit:
            c = b
            while c <= limit:
                out.append(c)
                c *= 5
            b *= 3
        a *= 2
    return np.array(sorted(out), dtype=np.int64)


_SMOOTH = _smooth_numbers(MAX_CARDS)
