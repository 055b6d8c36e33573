"""The layout search across many cluster sizes at once: `best_layouts(problems)[i]` is
`layout.search(problems[i]).best` for every i, in one vectorized pass instead of one search each.

The problems must differ only in what the cluster size decides (`cards` and the fabric's
`cross_leaf_bandwidth_factor` and `nodes_per_leaf_group`): deadline sizing asks one model on
forty round sizes, a sweep asks one (model, accelerator, stack, batch) on hundreds of card counts.

How it saves the per-search work (the search itself is layout.py; these are its rules, batched):
- No full Cartesian product per size: the structurally valid layouts are built level by level
  (layout.batch_enumeration), one enumeration shared by the families that differ in memory only.
- Memory before time: per-card memory (cheap) drops what does not fit in HBM and partial recompute
  that recomputes no layer or all of them (as the search does); only the rest gets the step-time
  model. Partial recompute's memory lies between no recompute and full recompute of the same
  layout, so it is computed only where full recompute fits and no recompute does not.
- Dominated candidates are dropped before the step-time model; each rule is a property of the
  models that tests/estimator/test_layout_batch.py asserts:
  RECOMPUTE_DOMINATES: throughput never rises with the share of layers recomputed (a recomputed
  forward adds work) and the ranking breaks throughput ties towards less recomputation, so full
  recompute of a layout loses to its no-recompute or partial-recompute candidate when that fits.
  (Sequence parallelism with tp > 1 is a rule of the search space, not a pruning:
  layout.enumeration.sp_off_not_searched, SEQUENCE_PARALLEL_WITH_TP.)
- Bounded before timed (layout.prune, exact): an upper bound of each candidate's throughput from
  a floor of its step time (steptime.bounds: the layers' terms with their exposed communication,
  the bubble, the exposure no window hides); the few best-bound candidates of each size are timed
  first and whatever's bound falls below the best bin found cannot be in the top bin, so only the
  rest gets the full model (tests/estimator/test_layout_prune.py, test_layout_bounds.py). A search
  whose fitted candidates are not kept for a next stack profile (deadline sizing, sweeps) bounds
  the layouts before their memory too (_can_win_family): memory only for the PREMEMORY_PROBE
  layouts of highest bound per size and for those whose bound reaches the best bin they find.
- Answers remembered (layout.answers): best_layouts and best_in keep every answer by the full
  problem key, so a scenario planned again (a report, its stack sensitivity, a sweep row) costs no
  search.
- One step-time call for all sizes (layout.batch_timing): evaluate_step broadcasts, so `cards` and
  the two fabric factors go in as per-candidate arrays (SizedProblem).
- Slices of SLICE_ROWS candidates keep numpy's temporaries in the CPU caches.
- The same ranking (layout.rank_order: throughput bin, ZeRO stage, recompute share, memory) with
  the size most significant and the search's enumeration position least, so ties resolve the same.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, unique_sorted
from estimator.layout import answers, batch_enumeration, prune
from estimator.layout.batch_enumeration import (
    enumerate_layouts,
    enumerate_valid,
    enumeration_key,
    shared_layouts,
)
from estimator.layout.batch_timing import SIZE_FIELDS, SLICE_ROWS, STEP_KEYS, Columns, IntArray, time_by_stem
from estimator.layout.enumeration import axis_values
from estimator.layout.evaluation import (
    MEMORY_KEYS,
    card_memories,
    card_memory,
    evaluate_memory,
    fp8_activations,
    partial_recompute,
    take_memory,
)
from estimator.layout.memory import RECOMPUTE_CODES, MemoryBreakdown
from estimator.layout.search import (
    EVAL_TIME_KEYS,
    LayoutEval,
    LayoutProblem,
    make_evals,
    partial_redundant,
    speed_bin,
)

BoolArray = npt.NDArray[np.bool_]
# the enumeration lives in layout.batch_enumeration; its two entry points stay importable from here
__all__ = ["any_fits", "best_in", "best_layouts", "clear_caches", "enumerate_layouts", "enumerate_valid"]


def _check_shared(problems: Sequence[LayoutProblem], keys: Sequence[answers.Key] = ()) -> None:
    """ValueError naming a field where the problems differ, but in the cluster size's fields; keys
    (answers.problem_key of each, in the fields' order) compare them in one tuple comparison each."""
    first = problems[0]
    names = list(first.__dataclass_fields__)
    if keys:
        shared = operator.itemgetter(*(i for i, f in enumerate(names) if f not in SIZE_FIELDS))
        if all(shared(k) == shared(keys[0]) for k in keys[1:]):
            return
    values = {f: getattr(first, f) for f in names if f not in SIZE_FIELDS}
    for p in problems[1:]:
        for f, v in values.items():
            if getattr(p, f) is not v and getattr(p, f) != v:
                raise ValueError(f"best_layouts: problems differ in {f}, not only in the cluster size")


def best_layouts(problems: Sequence[LayoutProblem], reuse: bool = False) -> list[LayoutEval | None]:
    """The best layout of each problem (None where nothing fits): search(p).best for each p.

    A problem searched before is answered from memory (every field of LayoutProblem is the key:
    model, accelerator, stack, sequence, batch, precision, cards, fabric...; the answer is a pure
    function of them), so a plan asked again (a report, a sweep row, the stack sensitivity of the
    same scenario) costs no search. reuse (sweeps): also keep the enumeration and the
    accelerator-independent memory of these sizes for the next call with the same model, batch and
    sizes (a sweep's groups, one per accelerator)."""
    keys = [answers.problem_key(p) for p in problems]
    if problems:
        _check_shared(problems, keys)
    firsts = {k: i for i, k in reversed(list(enumerate(keys)))}
    todo = [firsts[k] for k in dict.fromkeys(keys) if k not in answers.answers]
    for i, b in zip(todo, _best_layouts([problems[i] for i in todo], reuse), strict=True):
        answers.remember(keys[i], b)
    return [answers.answers[k] for k in keys]


def best_in(problem: LayoutProblem, families: dict[tuple[Any, ...], _Family]) -> LayoutEval | None:
    """search(problem).best by the batched search of one size (remembered as best_layouts'
    answers); `families` (the caller's, e.g. one plan's stack profiles at its size) keeps the
    enumeration and the accelerator-independent memory for the next problem with the same
    _family key."""
    key = answers.problem_key(problem)
    if key not in answers.answers:
        answers.remember(key, _best_layouts([problem], False, families)[0])
    return answers.answers[key]


def clear_caches() -> None:
    """Forget the remembered answers and families (benchmarks time cold searches)."""
    answers.clear()
    _families.clear()
    batch_enumeration.clear()


def _best_layouts(
    problems: Sequence[LayoutProblem], reuse: bool, families: dict[tuple[Any, ...], _Family] | None = None
) -> list[LayoutEval | None]:
    """best_layouts; families: where to keep the enumerations (None: the module's cache with
    reuse, none without)."""
    if len(problems) > SIZES_PER_BLOCK:  # bounded memory: a block of sizes at a time
        return [
            b
            for start in range(0, len(problems), SIZES_PER_BLOCK)
            for b in _best_layouts(problems[start : start + SIZES_PER_BLOCK], reuse, families)
        ]
    best: list[LayoutEval | None] = [None] * len(problems)
    parts, bar = _fitting_parts(problems, reuse, families)
    if not parts:
        return best
    base = problems[0]
    c = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
    if c["size"].size == 0:
        return best
    mem = MemoryBreakdown(**{k: np.concatenate([getattr(p[1], k) for p in parts]) for k in MEMORY_KEYS})
    rf = np.concatenate([p[2] for p in parts])
    # drop what cannot reach its size's top bin; layouts bounded before memory (a bar) were
    # bounded at rf = 0, and bounding their few fitting candidates again costs more than timing them
    kept = prune.winners(problems, base, c, rf) if bar is None else None
    if kept is not None:
        c, mem, rf = {k: v[kept] for k, v in c.items()}, take_memory(mem, kept), rf[kept]
    speed, times, at = time_by_stem(problems, base, c, rf)
    # per size, only the candidates in its top throughput bin can win: rank those, ties to the
    # search's enumeration order (the row number)
    size = c["size"]
    top = np.full(len(problems), -np.inf)
    np.maximum.at(top, size, speed)
    hit = np.flatnonzero(speed == top[size])
    order = hit[np.lexsort((c["row"][hit], mem.total[hit], rf[hit], c["zero"][hit], -speed[hit], size[hit]))]
    sizes = size[order]
    win = order[np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]])]  # each size's best candidate
    j, r, z = (a[win] for a in at)
    t = {k: np.empty(win.size) for k in EVAL_TIME_KEYS}
    for part in unique_sorted(j).tolist():  # the winners' times, gathered from the slices they are in
        sel = np.flatnonzero(j == part)
        # one flat index into the slice's (rows, stages) arrays for all the keys: a take each, where
        # a (row, column) index pair is a slower fancy index per key
        flat = r[sel] * times[part]["step_time_s"].shape[1] + z[sel]
        for k in EVAL_TIME_KEYS:
            t[k][sel] = times[part][k].take(flat)
    evals = make_evals(base, {k: v[win] for k, v in c.items()}, take_memory(mem, win), t)
    for s, e in zip(size[win].tolist(), evals, strict=True):
        best[s] = e
    return best


def _fitting_parts(
    problems: Sequence[LayoutProblem], reuse: bool, families: dict[tuple[Any, ...], _Family] | None
) -> tuple[list[Fitting], FloatArray | None]:
    """The candidates of these sizes left for the step-time model (_fitting), slice by slice, and
    the bar per size (a throughput bin reached) when the layouts were bounded before memory. The
    callers (best_layouts, _any_fits) have checked that the problems differ only in their size."""
    if not problems:
        return [], None
    base = problems[0]
    if families is None and reuse:
        families = _families
    family = (
        _family(problems, families)
        if families is not None
        else _Family(base, batch_enumeration.scanned_layouts(problems))
    )
    # a caller's own memo (one plan's stack profiles) keeps the fitted candidates too: they depend
    # on nothing the family key leaves out but the HBM; the module's cache (sweeps) does not
    keep = families is not None and families is not _families
    hbm = float(base.accelerator.hbm_bytes)
    if keep and hbm in family.fitted:
        return family.fitted[hbm], None
    rc_values = axis_values(base)["rc"]
    bar = None
    if not keep:  # memory not kept for a next profile: bound the layouts before their memory
        family, bar = _can_win_family(problems, base, family, rc_values)
    parts = _slices(base, family, rc_values)
    if keep:
        family.fitted[hbm] = parts
    return parts, bar


def _slices(base: LayoutProblem, family: _Family, rc_values: IntArray) -> list[Fitting]:
    """_fitting of the family's layouts, SLICE_ROWS candidates at a time."""
    per = max(1, SLICE_ROWS // rc_values.size)
    return [
        _fitting(base, family, start, min(start + per, family.size), rc_values)
        for start in range(0, family.size, per)
    ]


def _can_win_family(
    problems: Sequence[LayoutProblem], base: LayoutProblem, family: _Family, rc_values: IntArray
) -> tuple[_Family, FloatArray | None]:
    """The layouts of the family that may reach their size's top throughput bin, found before any
    memory but theirs is computed (exact, as prune.can_win): each layout's throughput bound over its
    recompute codes, first without the data-parallel terms (prune.stem_bound, once per stem), then
    with them (prune.layout_bound) for the PREMEMORY_PROBE·PROBE_POOL layouts of highest first bound
    per size; the PREMEMORY_PROBE of those of highest bound get their memory and the candidates of
    them that fit are timed; a layout whose bound's bin (the first, then, for what is left, the
    second) lies below the best bin found at its size cannot be in the top bin. A size whose probe
    finds nothing that fits keeps all its layouts. Returns (those layouts, the best bin found per
    size: the bar, or None when the family was too small to bound)."""
    if family.size < PREMEMORY_MIN:
        return family, None
    lay = family.layouts
    size = lay["size"]
    loose = prune.stem_bound(problems, base, *family.stems(), rc_values, family.shared.setdefault("memo", {}))
    pool = prune.top_per_size(size, loose, PREMEMORY_PROBE * PROBE_POOL)
    tight = prune.layout_bound(problems, base, {k: v[pool] for k, v in lay.items()}, rc_values)
    probe = family.subset(pool[prune.top_per_size(size[pool], tight, PREMEMORY_PROBE)])
    parts = _slices(base, probe, rc_values)
    if not parts:
        return family, None
    c = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
    bar = prune.best_bins(problems, base, c, np.concatenate([p[2] for p in parts]))
    kept = np.flatnonzero(~(speed_bin(loose) < bar[size]))
    bound = np.full(family.size, np.nan)  # the tight bound, where known (never NaN: layout_bound)
    bound[pool] = tight
    todo = kept[np.isnan(bound[kept])]
    bound[todo] = prune.layout_bound(problems, base, {k: v[todo] for k, v in lay.items()}, rc_values)
    return family.subset(kept[~(speed_bin(bound[kept]) < bar[size[kept]])]), bar


PREMEMORY_MIN = 2_048  # layouts below which their memory costs less than bounding them first
PREMEMORY_PROBE = 16  # layouts per size whose memory is computed first, to set the bar
PROBE_POOL = 2  # the probes are the best by the tight bound of PROBE_POOL times as many by the loose


def any_fits(problems: Sequence[LayoutProblem], reuse: bool = False) -> list[bool]:
    """Whether search(p) finds a layout at all (one passes the rules and fits in HBM), for each p:
    best_layouts(problems)[i] is not None, from the enumeration and the memory alone (no step-time
    model: what a sweep row with its MFU given needs to know, no figure without a plan). reuse: as
    best_layouts (a problem whose best layout is remembered is answered from it)."""
    if reuse:
        keys = [answers.problem_key(p) for p in problems]
        todo = [i for i, k in enumerate(keys) if k not in answers.answers and k not in answers.fits]
        for i, ok in zip(todo, _any_fits([problems[i] for i in todo], True), strict=True):
            answers.remember_fit(keys[i], ok)
        return [answers.answers[k] is not None if k in answers.answers else answers.fits[k] for k in keys]
    return _any_fits(problems, False)


def _any_fits(problems: Sequence[LayoutProblem], reuse: bool) -> list[bool]:
    """any_fits without the answers' cache: per block of sizes, what _fitting would keep, stopping
    early. With the recompute axis free, a size has a layout iff one of its layouts fits without
    recompute or with selective or full recompute (partial recompute lies between no recompute and
    full, so it fits only where full does, and then full or partial is kept): the full-recompute
    memory is computed only for the sizes no lighter candidate has answered."""
    out: list[bool] = []
    for first in range(0, len(problems), SIZES_PER_BLOCK):  # bounded memory, as best_layouts
        block = problems[first : first + SIZES_PER_BLOCK]
        _check_shared(block)
        base = block[0]
        rc_values = axis_values(base)["rc"]
        pos = {int(code) for code in rc_values}
        if "recompute" in base.fixed or not {0, 2, 3} <= pos:
            seen = np.zeros(len(block), dtype=bool)
            for c, _, _ in _fitting_parts(block, reuse, None)[0]:
                seen[c["size"]] = True
            out.extend(bool(x) for x in seen)
            continue
        family = _family(block, _families) if reuse else _Family(base, enumerate_layouts(block))
        out.extend(bool(x) for x in _sizes_fitting(base, family, len(block), rc_values))
    return out


def _sizes_fitting(base: LayoutProblem, fam: _Family, n_sizes: int, rc_values: IntArray) -> BoolArray:
    """Per size of the family: a layout fits (the recompute axis free, see _any_fits)."""
    hbm = base.accelerator.hbm_bytes
    seen = np.zeros(n_sizes, dtype=bool)
    per = max(1, SLICE_ROWS // rc_values.size)
    width = rc_values.size
    pos = {int(code): i for i, code in enumerate(rc_values)}
    for start in range(0, fam.size, per):
        stop = min(start + per, fam.size)
        size = fam.layouts["size"][start:stop]
        every = np.arange(stop - start)
        light = [RECOMPUTE_CODES["none"]] + [RECOMPUTE_CODES["selective"]] * (
            RECOMPUTE_CODES["selective"] in pos
        )
        for code in light:
            c = fam.rows(start, stop, every, code, (width, pos[code]))
            seen[size[np.asarray(fam.light_memory(start, stop, code, c).total <= hbm)]] = True
        left = np.flatnonzero(~seen[size])
        if left.size:
            full_code = RECOMPUTE_CODES["full"]
            full = fam.light_memory(
                start, stop, full_code, fam.rows(start, stop, every, full_code, (width, pos[full_code]))
            )
            seen[size[left[np.asarray(full.total)[left] <= hbm]]] = True
    return seen


SIZES_PER_BLOCK = 256  # sizes searched together (peak memory about 200 MB for a 30B MoE over 200 sizes)
FAMILY_CACHE = 6  # families kept (a sweep group per accelerator shares its model's family)


class _Family:
    """The structurally valid layouts of a list of sizes and their memory without recompute and
    with selective recompute: what does not depend on the accelerator (a sweep over accelerators
    with one model reuses it). Memory is computed lazily, slice by slice."""

    def __init__(
        self,
        base: LayoutProblem,
        layouts: Columns,
        index: IntArray | None = None,
        shared: dict[str, Any] | None = None,
    ):
        self.base = base
        self.layouts = layouts
        self.index = index  # a subset's layouts: their positions in the whole enumeration
        self.size = layouts["size"].size
        self.light: dict[tuple[int, int, int], MemoryBreakdown] = {}
        self.fitted: dict[float, list[Fitting]] = {}  # by HBM bytes (kept for a caller's memo only)
        # what depends on the layouts alone, kept with the enumeration when it is shared (_layouts)
        self.shared: dict[str, Any] = {} if shared is None else shared

    def stems(self) -> tuple[Columns, IntArray]:
        """(the columns of the first layout of each run of layouts with one stem, with their layer
        shape (prune.layer_shapes), each layout's run): kept for the next accelerator."""
        if "stems" not in self.shared:
            stem = self.layouts["stem"]
            new = np.r_[True, stem[1:] != stem[:-1]] if self.size else np.zeros(0, dtype=bool)
            heads = np.flatnonzero(new)
            cols = {k: self.layouts[k][heads] for k in (*STEP_KEYS, "zero", "size") if k in self.layouts}
            cols["layer_shape"] = prune.layer_shapes(cols)
            self.shared["stems"] = cols, np.cumsum(new) - 1
        stems: tuple[Columns, IntArray] = self.shared["stems"]
        return stems

    def rows(self, start: int, stop: int, idx: IntArray, code: int, width_pos: tuple[int, int]) -> Columns:
        """Layouts start + idx with recompute code `code` at position pos of a width-long axis."""
        width, pos = width_pos
        if idx.size == stop - start:  # all of them (idx is then arange): views, no copies
            out = {k: v[start:stop] for k, v in self.layouts.items()}
        else:
            out = {k: v[start:stop][idx] for k, v in self.layouts.items()}
        out["rc"] = np.full(idx.size, code, dtype=np.int64)
        at = start + idx if self.index is None else self.index[start + idx]
        out["row"] = at * width + pos
        return out

    def subset(self, idx: IntArray) -> _Family:
        """The family of the layouts idx (ascending) only, their rows numbered as in this one."""
        index = idx if self.index is None else self.index[idx]
        return _Family(self.base, {k: v[idx] for k, v in self.layouts.items()}, index)

    def light_memory(self, start: int, stop: int, code: int, c: Columns) -> MemoryBreakdown:
        """Memory of layouts [start, stop) (columns c) with recompute code `code`; the first call
        of a slice computes it for no, selective (where searched) and full recompute at once
        (layout.card_memories: the stages and model states once)."""
        key = (start, stop, code)
        if key not in self.light:
            searched = {int(k) for k in axis_values(self.base)["rc"]}
            codes = [code] + [
                k
                for k in (RECOMPUTE_CODES["none"], RECOMPUTE_CODES["selective"], RECOMPUTE_CODES["full"])
                if k != code and k in searched
            ]
            n = stop - start
            mems = card_memories(self.base, c, [np.full(n, k, dtype=np.int64) for k in codes])
            for k, mem in zip(codes, mems, strict=True):
                self.light[(start, stop, k)] = mem
        return self.light[key]


_families: dict[tuple[Any, ...], _Family] = {}


def _family(problems: Sequence[LayoutProblem], store: dict[tuple[Any, ...], _Family]) -> _Family:
    """The _Family of these sizes kept in `store`: keyed by everything enumeration and memory read."""
    p = problems[0]
    memory = (p.stack.memory_key(), p.grad_dtype, p.buffers, fp8_activations(p), p.moe_imbalance)
    key = (enumeration_key(problems), *memory)
    found = store.pop(key, None)
    if found is None:
        found = _Family(p, *shared_layouts(problems))
    store[key] = found  # most recently used last
    while len(store) > FAMILY_CACHE:
        store.pop(next(iter(store)))
    return found


Fitting = tuple[Columns, MemoryBreakdown, FloatArray]


def _fitting(base: LayoutProblem, fam: _Family, start: int, stop: int, rc_values: IntArray) -> Fitting:
    """The candidates of layouts [start, stop) of `fam` (recompute axis added) left for the
    step-time model, with their memory and recompute share: (columns incl. rc and row,
    MemoryBreakdown, rf).

    Left out: what does not fit in HBM, partial recompute of no layer or of all (as the search
    does), and, when the recompute axis is free, full and partial recompute of a layout whose
    no-recompute candidate fits, full recompute of a layout whose partial recompute fits
    (RECOMPUTE_DOMINATES). `row`: the candidate's position in the search's enumeration order."""
    hbm = base.accelerator.hbm_bytes
    n, width = stop - start, rc_values.size
    pos = {int(code): i for i, code in enumerate(rc_values)}

    def rows(idx: IntArray, code: int) -> Columns:
        return fam.rows(start, stop, idx, code, (width, pos[code]))

    every = np.arange(n)
    free = "recompute" not in base.fixed and {0, 2, 3} <= set(pos)
    if not free:
        parts = [rows(every, int(code)) for code in rc_values]
        c = {k: np.concatenate([x[k] for x in parts]) for k in parts[0]}
        mem, rf = evaluate_memory(base, c)
        return _kept(c, mem, rf, np.asarray(mem.total <= hbm))
    out = []
    for code in (RECOMPUTE_CODES["none"], RECOMPUTE_CODES["selective"]):
        if code in pos:
            c = rows(every, code)
            mem = fam.light_memory(start, stop, code, c)
            fits = np.asarray(mem.total <= hbm)
            if code == RECOMPUTE_CODES["none"]:
                none_fits, none_mem = fits, mem
            out.append(_kept(c, mem, np.zeros(n), fits))
    heavy = np.flatnonzero(~none_fits)
    full = rows(heavy, RECOMPUTE_CODES["full"])
    # the slice's full-recompute memory came with its no-recompute memory (_Family.light_memory)
    full_mem = take_memory(
        fam.light_memory(start, stop, RECOMPUTE_CODES["full"], rows(every, RECOMPUTE_CODES["full"])), heavy
    )
    full_fits = np.asarray(full_mem.total <= hbm)
    # partial memory lies between no recompute and full (a convex combination): where neither
    # fits, partial does not either
    some = np.flatnonzero(full_fits)
    partial = rows(heavy[some], RECOMPUTE_CODES["partial"])
    # partial recompute's layers that are not recomputed store what no recompute stores, except the
    # attention scores of unfused kernels (memory.layer_activation_bytes keeps them at code 0 only):
    # with fused attention the no-recompute memory already computed is the same array of floats
    if base.flash_attention:
        none_like = take_memory(none_mem, heavy[some])
    else:
        none_like = card_memory(base, partial, partial["rc"])
    mixed, f = partial_recompute(
        base,
        partial,
        np.ones(some.size, dtype=bool),
        none_like,
        take_memory(full_mem, some),
        np.zeros(some.size),
    )
    partial_keep = np.asarray(mixed.total <= hbm) & ~partial_redundant(partial["rc"], f)
    full_keep = full_fits.copy()
    full_keep[some[partial_keep]] = False
    out.append(_kept(full, full_mem, np.ones(heavy.size), full_keep))
    out.append(_kept(partial, mixed, f, partial_keep))
    c = {k: np.concatenate([o[0][k] for o in out]) for k in out[0][0]}
    mem = MemoryBreakdown(**{k: np.concatenate([getattr(o[1], k) for o in out]) for k in MEMORY_KEYS})
    return c, mem, np.concatenate([o[2] for o in out])


def _kept(c: Columns, mem: MemoryBreakdown, rf: npt.ArrayLike, keep: npt.NDArray[np.bool_]) -> Fitting:
    """The candidates (and their memory and recompute share) where keep is true."""
    idx = np.flatnonzero(keep)
    return {k: v[idx] for k, v in c.items()}, take_memory(mem, idx), np.asarray(rf, dtype=float)[idx]
