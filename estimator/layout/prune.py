"""Exact pruning of the batched layout search (layout.batch_search): an upper bound of each
candidate's throughput from a floor of its step time (steptime.bounds: the model's own per-layer
terms, exposed communication included, the pipeline bubble, the point-to-point and data-parallel
exposure no window can hide, the optimizer); the few best-bound candidates of each size are timed
first, and a candidate whose bound's throughput bin lies below the best bin found at its size
cannot be in the top bin, so only the rest gets the full step-time model
(tests/estimator/test_layout_prune.py, test_layout_bounds.py). The layer floors are computed once
per distinct layer shape (a sweep's 300k layouts have a few thousand). Units: tokens/s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from estimator.layout.steptime.bounds import (
    LAYER_FIELDS,
    LayerFloor,
    layer_floor,
    layer_reads_m,
    stage_layers_of,
    step_floor,
)
from estimator.layout.steptime.candidates import Candidates

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

    An upper bound of each candidate's tokens/s (tokens_upper_bound), raised by PRUNE_MARGIN
    against rounding; the step-time model times the PRUNE_PROBE
    candidates of highest bound per size, and a candidate whose bound's bin lies below the best bin
    found at its size cannot reach the top bin (bins are monotone in throughput): dropped. Exact: the
    candidates of the top bin are all kept, so the ranking among them, and the best layout, are
    unchanged (tests/estimator/test_layout_bounds.py asserts the bound, test_layout_prune.py the
    equality)."""
    size = c["size"]
    n = size.size
    ub = tokens_upper_bound(problems, base, c, rf)
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
    problems: Sequence[LayoutProblem],
    base: LayoutProblem,
    c: Columns,
    rf: FloatArray,
    data_parallel: bool = True,
) -> FloatArray:
    """An upper bound of evaluate_time(...)["tokens_per_s"] of each candidate (tokens/s): the step's
    tokens over steptime.bounds.step_floor, times 1 + PRUNE_MARGIN. The layer floors are computed
    once per distinct layer shape (layer_floors); data_parallel: with the data-parallel exposure
    and the optimizer (the only terms that read the ZeRO stage)."""
    return _tokens(problems, base, c, rf, layer_floors(problems, base, c, rf)[0], data_parallel)


def _tokens(
    problems: Sequence[LayoutProblem],
    base: LayoutProblem,
    c: Columns,
    rf: FloatArray,
    floors: tuple[LayerFloor, LayerFloor],
    data_parallel: bool,
    memo: dict[Any, Any] | None = None,
) -> FloatArray:
    """tokens_upper_bound from the candidates' (dense, MoE) layer floors, SLICE_ROWS at a time;
    memo: where to keep each slice's layers per pipeline device (they read the model and pp, v)."""
    n = c["size"].size
    out = np.empty(n)
    per_size = [np.array([getattr(p, f) for p in problems], dtype=float) for f in SIZE_FIELDS]
    for i in range(0, n, SLICE_ROWS):
        at = slice(i, i + SLICE_ROWS)
        part = {k: c[k][at] for k in (*STEP_KEYS, "zero")}
        cand = Candidates.from_mapping({**part, "rf": rf[at]})
        sized = SizedProblem(base, *(v[c["size"][at]] for v in per_size))
        d = LayerFloor(floors[0].total[at], floors[0].busy[at])
        e = d if floors[1] is floors[0] else LayerFloor(floors[1].total[at], floors[1].busy[at])
        st = None if memo is None else memo.get(("stage_layers", i))
        if st is None:
            st = stage_layers_of(base, cand)
            if memo is not None:
                memo["stage_layers", i] = st
        lb = step_floor(sized, cand, d, e, data_parallel, st)  # type: ignore[arg-type]
        out[at] = np.asarray(part["m"], dtype=float) * part["dp"] * part["mbs"] * base.seq_len / lb
    return arr(out * (1.0 + PRUNE_MARGIN))


def _sized(problems: Sequence[LayoutProblem], base: LayoutProblem, size: IntArray) -> SizedProblem:
    """The problem of each candidate's size (SizedProblem)."""
    return SizedProblem(
        base, *(np.array([getattr(p, f) for p in problems], dtype=float)[size] for f in SIZE_FIELDS)
    )


def layer_floors(
    problems: Sequence[LayoutProblem],
    base: LayoutProblem,
    c: Columns,
    rf: FloatArray,
    codes: Sequence[int] = (),
    merge: bool = False,
    memo: dict[Any, Any] | None = None,
) -> list[tuple[LayerFloor, LayerFloor]]:
    """steptime.bounds.layer_floor (dense, MoE) of every candidate, computed once per distinct
    layer shape: the columns it reads (bounds.LAYER_FIELDS, m where bounds.layer_reads_m) and the
    fabric of the size (its cross-leaf factor and leaf group), the numbers gathered back to the
    rows. codes: one result per recompute code given, every row at that code (c's own rc if none);
    merge: one result for all codes, the smallest total and the largest busy time of each; memo:
    where to keep the distinct shapes of these rows (by the sizes' fabrics) for the next call."""
    n = c["size"].size
    fabrics = [(p.cross_leaf_bandwidth_factor, p.nodes_per_leaf_group) for p in problems]
    fabric_class = np.unique(np.array(fabrics, dtype=float), axis=0, return_inverse=True)[1].ravel()
    at = ("distinct", fabric_class.tobytes(), layer_reads_m(base))
    if memo is not None and at in memo:
        first, row = memo[at]
    else:
        shape = c["layer_shape"] if codes and "layer_shape" in c else layer_shapes(c, with_rc=not codes)
        columns = [fabric_class[c["size"]], shape, _ranks(rf)]
        if layer_reads_m(base):
            columns.append(_ranks(c["m"]))
        key = np.zeros(n, dtype=np.int64)
        for col in columns:
            key = key * (int(col.max(initial=0)) + 1) + col
        first, row = _distinct(key)
        if memo is not None:
            memo[at] = first, row
    sub = {k: c[k][first] for k in (*STEP_KEYS, "zero")}
    sized = _sized(problems, base, c["size"][first])
    shapes: list[tuple[LayerFloor, LayerFloor]] = []
    for code in codes or [-1]:
        if code >= 0:
            sub["rc"] = np.full(first.size, code, dtype=np.int64)
        shapes.append(layer_floor(sized, Candidates.from_mapping({**sub, "rf": rf[first]})))  # type: ignore[arg-type]
    if merge:
        dense = _merged([d for d, _ in shapes])
        one_kind = all(m is d for d, m in shapes)  # a dense model's layers
        shapes = [(dense, dense if one_kind else _merged([m for _, m in shapes]))]
    out: list[tuple[LayerFloor, LayerFloor]] = []
    for dense, moe in shapes:
        rows = LayerFloor(dense.total[row], dense.busy[row])  # a dense model's layers: one kind
        out.append((rows, rows if moe is dense else LayerFloor(moe.total[row], moe.busy[row])))
    return out


def _merged(floors: list[LayerFloor]) -> LayerFloor:
    """The smallest total and the largest busy time of the floors."""
    return LayerFloor(
        arr(np.minimum.reduce([f.total for f in floors])), arr(np.maximum.reduce([f.busy for f in floors]))
    )


def layer_shapes(c: Columns, with_rc: bool = False) -> IntArray:
    """A number per candidate for its columns that steptime.bounds.layer_floor reads but the
    recompute share and the size (bounds.LAYER_FIELDS; rc only with_rc): equal numbers, equal
    columns."""
    key = np.zeros(c["size"].size, dtype=np.int64)
    for k in LAYER_FIELDS:
        if k != "rf" and (with_rc or k != "rc"):
            col = _ranks(c[k])
            key = key * (int(col.max(initial=0)) + 1) + col
    return key


def _ranks(col: npt.NDArray[Any]) -> IntArray:
    """Each value's rank among the column's distinct values (0, 1, ...): small non-negative
    integers by a table of the values present, other values by a sort."""
    if col.size == 0:
        return np.zeros(0, dtype=np.int64)
    if col.dtype.kind == "b":
        return col.astype(np.int64)
    if col.min() == col.max():  # one value (e.g. no recompute share): no sort
        return np.zeros(col.size, dtype=np.int64)
    if col.dtype.kind in "iu" and int(col.min()) >= 0 and int(col.max()) < 1 << 16:
        present = np.zeros(int(col.max()) + 1, dtype=np.int64)
        present[col] = 1
        return np.asarray((np.cumsum(present) - 1)[col], dtype=np.int64)
    return np.unique(col, return_inverse=True)[1].ravel().astype(np.int64)


def _distinct(key: IntArray) -> tuple[IntArray, IntArray]:
    """(a row of each distinct key, each row's distinct key's index)."""
    if key.size and int(key.max()) < 1 << 22:  # a table of the keys present: no sort
        at = np.full(int(key.max()) + 1, -1, dtype=np.int64)
        at[key[::-1]] = np.arange(key.size - 1, -1, -1)  # the first row of each key
        first = np.sort(at[at >= 0])
        index = np.zeros_like(at)
        index[key[first]] = np.arange(first.size)
        return first, index[key]
    _, first, row = np.unique(key, return_index=True, return_inverse=True)
    return first, row.ravel()


def layout_bound(
    problems: Sequence[LayoutProblem],
    base: LayoutProblem,
    layouts: Columns,
    rc_values: IntArray,
    data_parallel: bool = True,
    memo: dict[Any, Any] | None = None,
) -> FloatArray:
    """Per layout (no recompute axis yet), an upper bound of the throughput of every candidate it
    becomes (tokens/s), before its memory is known: tokens_upper_bound with no recompute (rf = 0)
    and, where the search tries it, with selective recompute. Full and partial recompute are
    covered by the rf = 0 bound: the step time never falls as the share rf of layers recomputed
    rises (RECOMPUTE_DOMINATES, tests/estimator/test_layout_bounds.py, the always_recompute stacks'
    (1 - rf) extras included), and at rf = 0 a candidate that is not selective recompute times as
    no recompute (the code enters the step time only as selective or not). NaN bounds: +inf.

    Without the data-parallel terms the two codes share one step floor: step_floor rises with the
    layers' totals and falls with their busy time (the windows), so the floor of the smaller total
    and the larger busy time of the two codes is at most each code's."""
    n = layouts["size"].size
    codes = [RECOMPUTE_CODES["none"]] + [RECOMPUTE_CODES["selective"]] * (
        RECOMPUTE_CODES["selective"] in {int(k) for k in rc_values}
    )
    zeros = np.zeros(n)
    c = {**layouts, "rc": np.zeros(n, dtype=np.int64)}
    floors = layer_floors(problems, base, c, zeros, codes, not data_parallel, memo)
    out = np.full(n, -np.inf)
    for code, f in zip(codes, floors, strict=False):
        ub = _tokens(
            problems, base, {**c, "rc": np.full(n, code, dtype=np.int64)}, zeros, f, data_parallel, memo
        )
        out = np.fmax(out, np.where(np.isnan(ub), np.inf, ub))
    return arr(out)


def stem_bound(
    problems: Sequence[LayoutProblem],
    base: LayoutProblem,
    stems: Columns,
    run: IntArray,
    rc_values: IntArray,
    memo: dict[Any, Any] | None = None,
) -> FloatArray:
    """layout_bound without the data-parallel exposure and the optimizer (a looser bound that
    reads no ZeRO stage: tests/estimator/test_layout_bounds.py), computed once per run of layouts
    with one stem (the layout without its stage; stems: the first layout of each run, run: each
    layout's) and shared by the run. memo: kept with the stems (what their rows alone decide)."""
    return arr(layout_bound(problems, base, stems, rc_values, False, memo)[run])


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


# candidates below which timing them all costs less than the bound and the probe: a bound and a
# probe are two more step-time-sized calls (about 1 ms on a 2-core machine); the 405B deadline
# plan's FSDP2 stack profile (2,299 candidates at 34,560 cards) paid 2.3 ms for them, against
# 1.7 ms to time all (bench/plan_speed.py; the searched sweep's figure unchanged)
PRUNE_MIN = 4_096
PRUNE_PROBE = 4  # candidates per size timed first (highest bound) to set the bar
PRUNE_MARGIN = 1e-6  # relative slack of the bound against rounding (the bins are 2% wide)
