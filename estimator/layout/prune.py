"""Exact pruning of the batched layout search (layout.batch_search): an upper bound of each
candidate's throughput from its layers' compute alone (steptime.step_time_lower_bound); the few
best-bound candidates of each size are timed first, and a candidate whose bound's throughput bin
lies below the best bin found at its size cannot be in the top bin, so only the rest gets the full
step-time model (tests/estimator/test_layout_prune.py). Units: tokens/s."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, arr
from estimator.layout.batch_timing import (
    SIZE_FIELDS,
    SLICE_ROWS,
    STEP_KEYS,
    Columns,
    SizedProblem,
    time_by_stem,
)
from estimator.layout.memory import RECOMPUTE_CODES
from estimator.layout.search import LayoutProblem, speed_bin
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.step import step_time_lower_bound

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def winners(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> IntArray | None:
    """The candidates (indices into c) that may reach their size's top throughput bin (can_win), or
    None (keep all) below PRUNE_MIN candidates, where timing them all costs less than the bound."""
    if c["size"].size < PRUNE_MIN:
        return None
    return np.flatnonzero(can_win(problems, base, c, rf))


def can_win(problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray) -> BoolArray:
    """Per candidate: it may be in its size's top throughput bin (the only ones _best_layouts ranks).

    An upper bound of each candidate's tokens/s from steptime.step_time_lower_bound (its compute
    alone), raised by PRUNE_MARGIN against rounding; the step-time model times the PRUNE_PROBE
    candidates of highest bound per size, and a candidate whose bound's bin lies below the best bin
    found at its size cannot reach the top bin (bins are monotone in throughput): dropped. Exact: the
    candidates of the top bin are all kept, so the ranking among them, and the best layout, are
    unchanged (tests/estimator/test_layout_prune.py asserts the bound and the equality)."""
    size = c["size"]
    n = size.size
    ub = _bounds(problems, base, c, rf)
    # per size, the PRUNE_PROBE candidates of highest bound (a round per probe: no sort of all)
    left = np.where(np.isnan(ub), -np.inf, ub)
    picked = []
    for _ in range(PRUNE_PROBE):
        top = np.full(len(problems), -np.inf)
        np.maximum.at(top, size, left)
        hit = np.flatnonzero((left == top[size]) & (left > -np.inf))
        _, first = np.unique(size[hit], return_index=True)
        picked.append(hit[first])
        left[hit[first]] = -np.inf
    probe = np.sort(np.concatenate(picked))
    if probe.size == 0:  # no finite bound: nothing to compare against
        return np.ones(n, dtype=bool)
    speed, _, _ = time_by_stem(problems, base, {k: v[probe] for k, v in c.items()}, rf[probe])
    best = np.full(len(problems), -np.inf)
    np.maximum.at(best, size[probe], speed)
    return ~(speed_bin(ub) < best[size])  # NaN bounds kept


def tokens_upper_bound(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> FloatArray:
    """An upper bound of evaluate_time(...)["tokens_per_s"] of each candidate (tokens/s): the step's
    tokens over steptime.step_time_lower_bound, times 1 + PRUNE_MARGIN."""
    sized = SizedProblem(
        base, *(np.array([getattr(p, f) for p in problems], dtype=float)[c["size"]] for f in SIZE_FIELDS)
    )
    cand = Candidates.from_mapping({**{k: c[k] for k in (*STEP_KEYS, "zero")}, "rf": rf})
    lb = step_time_lower_bound(sized, cand)  # type: ignore[arg-type]
    step_tokens = np.asarray(c["m"], dtype=float) * c["dp"] * c["mbs"] * base.seq_len
    return arr(step_tokens / lb * (1.0 + PRUNE_MARGIN))


def reaching(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray, bar: FloatArray
) -> IntArray:
    """The candidates (indices into c) whose bound's bin reaches `bar` of their size (a throughput
    bin that a fitting candidate of that size reaches, e.g. best_bins'); NaN bounds kept."""
    ub = _bounds(problems, base, c, rf)
    return np.flatnonzero(~(speed_bin(ub) < bar[c["size"]]))


def _bounds(problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray) -> FloatArray:
    """tokens_upper_bound of the candidates c, SLICE_ROWS at a time."""
    return np.concatenate(
        [
            tokens_upper_bound(
                problems, base, {k: v[i : i + SLICE_ROWS] for k, v in c.items()}, rf[i : i + SLICE_ROWS]
            )
            for i in range(0, c["size"].size, SLICE_ROWS)
        ]
    )


def layout_bound(
    problems: Sequence[LayoutProblem], base: LayoutProblem, layouts: Columns, rc_values: IntArray
) -> FloatArray:
    """Per layout (no recompute axis yet), an upper bound of the throughput of every candidate it
    becomes (tokens/s), before its memory is known: tokens_upper_bound with no recompute (rf = 0)
    and, where the search tries it, with selective recompute. The recompute code enters the step
    time only as selective or not and through the share rf of layers recomputed, and the bound never
    falls as rf falls (a recomputed forward adds non-negative compute terms: Candidates.passes,
    tests/estimator/test_layout_prune.py), so the rf = 0 bound covers full and partial recompute.
    Not for a stack with always_recompute (its modules run again in the (1 - rf) of the layers not
    recomputed in full): the caller does not bound those before memory.
    The bound reads no ZeRO stage (compute terms only; tested), so it is computed once per run of
    layouts with one stem (the layout without its stage) and shared by the run."""
    stem = layouts["stem"]
    n = stem.size
    new = np.r_[True, stem[1:] != stem[:-1]] if n else np.zeros(0, dtype=bool)
    heads = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    codes = [RECOMPUTE_CODES["none"]] + [RECOMPUTE_CODES["selective"]] * (
        RECOMPUTE_CODES["selective"] in {int(k) for k in rc_values}
    )
    out = np.full(heads.size, -np.inf)
    for code in codes:
        for i in range(0, heads.size, SLICE_ROWS):
            rows = heads[i : i + SLICE_ROWS]
            c = {k: v[rows] for k, v in layouts.items()}
            c["rc"] = np.full(rows.size, code, dtype=np.int64)
            ub = tokens_upper_bound(problems, base, c, np.zeros(rows.size))
            out[i : i + SLICE_ROWS] = np.fmax(out[i : i + SLICE_ROWS], np.where(np.isnan(ub), np.inf, ub))
    return arr(out[run])


def top_per_size(size: IntArray, score: FloatArray, k: int) -> IntArray:
    """Indices (ascending) of k entries of highest score of each size (which of equal scores is
    left to numpy: any choice is exact for the pruning). Entries grouped by size (a family's
    layouts are: ordered by size) take one partial sort per size; otherwise one sort of all."""
    n = size.size
    if n and not np.all(size[1:] >= size[:-1]):
        order = np.lexsort((-score, size))
        ordered = size[order]
        first = np.searchsorted(ordered, ordered)  # where each size's run starts
        return np.sort(order[np.arange(n) - first < k])
    edges = np.flatnonzero(np.r_[True, size[1:] != size[:-1], True]) if n else np.zeros(1, dtype=np.int64)
    picked = []
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        if b - a <= k:
            picked.append(np.arange(a, b))
        else:
            picked.append(a + np.argpartition(-score[a:b], k - 1)[:k])
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)


def best_bins(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> FloatArray:
    """Per size, the best throughput bin among the candidates c (-inf for a size without one)."""
    best = np.full(len(problems), -np.inf)
    if c["size"].size:
        speed, _, _ = time_by_stem(problems, base, c, rf)
        np.maximum.at(best, c["size"], speed)
    return best


PRUNE_MIN = 2_048  # candidates below which timing them all costs less than the bound and the probe
PRUNE_PROBE = 4  # candidates per size timed first (highest bound) to set the bar
PRUNE_MARGIN = 1e-6  # relative slack of the bound against rounding (the bins are 2% wide)
