"""The layout search across many cluster sizes at once: `best_layouts(problems)[i]` is
`layout.search(problems[i]).best` for every i, in one vectorized pass instead of one search each.

The problems must differ only in what the cluster size decides (`cards` and the fabric's
`cross_leaf_bandwidth_factor` and `nodes_per_leaf_group`): deadline sizing asks one model on
forty round sizes, a sweep asks one (model, accelerator, stack, batch) on hundreds of card counts.

How it saves the per-search work (the search itself is layout.py; these are its rules, batched):
- No full Cartesian product per size: the structurally valid layouts are built level by level over
  the axes in the search's enumeration order (tp, pp, cp | ep, etp | mbs, v | sp | zero), each level
  dropping what fails the rules of layout_enum.structural_failures that involve only the axes
  fixed so far (tests/estimator/test_layout_batch.py checks the two enumerations are equal). Only
  pp depends on the size (the divisors of the card count); the other ranges are the largest
  size's: a tp or ep beyond a smaller size's card count fails "dp-not-integral" or
  "ep-not-folding-into-tp-cp-dp" there anyway.
- Memory before time: per-card memory (cheap) drops what does not fit in HBM and partial recompute
  that recomputes no layer or all of them (as the search does); only the rest gets the step-time
  model. Partial recompute's memory lies between no recompute and full recompute of the same
  layout, so it is computed only where full recompute fits and no recompute does not.
- Dominated candidates are dropped before the step-time model; each rule is a property of the
  models that tests/estimator/test_layout_batch.py asserts:
  RECOMPUTE_DOMINATES: throughput never rises with the share of layers recomputed (a recomputed
  forward adds work) and the ranking breaks throughput ties towards less recomputation, so full
  recompute of a layout loses to its no-recompute or partial-recompute candidate when that fits.
  SEQUENCE_PARALLEL_DOMINATES (fused attention kernels only): with tp > 1, sequence parallelism
  moves the same bytes and divides the replicated activations and their element-wise kernels by
  tp: never slower, strictly less memory, so the sp = false twin never wins. (With unfused
  attention, partial recompute stores like selective recompute and the rule does not hold.)
- Bounded before timed (_can_win, exact): an upper bound of each candidate's throughput from its
  layers' compute alone (steptime.step_time_lower_bound); the few best-bound candidates of each size
  are timed first and whatever's bound falls below the best bin found cannot be in the top bin, so
  only the rest gets the full model (tests/estimator/test_layout_prune.py).
- Answers remembered: best_layouts and best_in keep every answer by the full problem key, so a
  scenario planned again (a report, its stack sensitivity, a sweep row) costs no search.
- One step-time call for all sizes: evaluate_step broadcasts, so `cards` and the two fabric
  factors go in as per-candidate arrays (see _SizedProblem).
- Slices of SLICE_ROWS candidates keep numpy's temporaries in the CPU caches.
- The same ranking (layout.rank_order: throughput bin, ZeRO stage, recompute share, memory) with
  the size most significant and the search's enumeration position least, so ties resolve the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, arr
from estimator.layout.enumeration import (
    BATCH_TOLERANCE,
    auto_split_fails,
    axis_values,
    ep_not_folding,
    etp_not_searched,
    stage_split_fails,
)
from estimator.layout.memory import RECOMPUTE_CODES, MemoryBreakdown
from estimator.layout.search import (
    MEMORY_KEYS,
    LayoutEval,
    LayoutProblem,
    _make_eval,
    _partial_recompute,
    _take,
    card_memories,
    card_memory,
    evaluate_memory,
    evaluate_time,
    fp8_activations,
    partial_redundant,
    speed_bin,
)
from estimator.layout.steptime.candidates import Candidates
from estimator.layout.steptime.step import step_time_lower_bound

Columns = dict[str, npt.NDArray[Any]]  # candidate columns (tp, pp, ..., size, stem, row)
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
SIZE_FIELDS = ("cards", "cross_leaf_bandwidth_factor", "nodes_per_leaf_group")


class _SizedProblem:
    """A LayoutProblem whose cards and fabric factors are per-candidate arrays.

    evaluate_step and layout.evaluate_time use problem.cards (HFU, MFU: FLOP/s over cards · peak),
    problem.cross_leaf_bandwidth_factor and problem.nodes_per_leaf_group (collective and
    point-to-point bandwidths) only in numpy expressions, so arrays broadcast against the candidate
    arrays; every other attribute is the shared problem's."""

    def __init__(self, base: LayoutProblem, cards: FloatArray, cross: FloatArray, leaf_nodes: FloatArray):
        self._base = base
        self.cards = cards
        self.cross_leaf_bandwidth_factor = cross
        self.nodes_per_leaf_group = leaf_nodes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


def _check_shared(problems: Sequence[LayoutProblem]) -> None:
    first = problems[0]
    shared = {f: getattr(first, f) for f in first.__dataclass_fields__ if f not in SIZE_FIELDS}
    for p in problems[1:]:
        for f, v in shared.items():
            if getattr(p, f) is not v and getattr(p, f) != v:
                raise ValueError(f"best_layouts: problems differ in {f}, not only in the cluster size")


def _expand(n: int, values: npt.NDArray[Any]) -> tuple[IntArray, npt.NDArray[Any]]:
    """(parent index, value) of every one of n parent rows times every value, values varying fastest."""
    return np.repeat(np.arange(n), values.size), np.tile(values, n)


def enumerate_layouts(problems: Sequence[LayoutProblem], prune: bool = True) -> Columns:
    """The candidates of every problem that pass layout_enum.structural_failures, without the
    recompute axis (no rule involves it): keys size (index into problems), tp, pp, cp, ep, mbs, v,
    sp, zero, dp, m; ordered by size and then as enumerate_candidates orders them.
    prune: leave out sequence_parallel false where tp > 1 (dominated, see the module docstring).

    Built level by level over the axes, a level keeping the index of its parent row, so each rule
    runs on the rows it concerns and the columns are gathered once at the end."""
    big = max(problems, key=lambda p: p.cards)
    vals = axis_values(big)
    A = _level_model(problems, big, vals)
    a, ep, etp = _level_experts(big, vals, A)
    b, mbs, v, m, pp = _level_micro_batches(big, vals, A, a)
    tp = A["tp"][a[b]]
    if prune and vals["sp"].size > 1 and big.flash_attention:  # SEQUENCE_PARALLEL_DOMINATES
        d, sp = np.arange(b.size), tp > 1
    else:  # level E: sp
        d, sp = _expand(b.size, vals["sp"])
        ok = ~(sp & (tp[d] == 1))
        d, sp = d[ok], sp[ok]
    e, zero = _expand(d.size, vals["zero"])  # level F: zero
    ok = ~((zero >= 2) & (pp[d[e]] > 1) & (not big.sharded_with_pp))
    e, zero = e[ok], zero[ok]
    de = d[e]
    bde = b[de]
    abde = a[bde]
    return {
        "stem": e,  # the layout without its ZeRO stage (the step time broadcasts over the stages)
        "size": A["size"][abde],
        "tp": A["tp"][abde],
        "pp": A["pp"][abde],
        "cp": A["cp"][abde],
        "dp": A["dp"][abde],
        "ep": ep[bde],
        "etp": etp[bde],
        "mbs": mbs[de],
        "v": v[de],
        "m": m[de],
        "sp": sp[e],
        "zero": zero,
    }


def _level_model(problems: Sequence[LayoutProblem], big: LayoutProblem, vals: dict[str, IntArray]) -> Columns:
    """Level A: (size, tp, pp, cp) and the dp they leave; pp's range is the size's own."""
    arch, fx = big.arch, big.fixed_normalized
    kv = arch.num_attention_heads if arch.is_mla else arch.num_key_value_heads
    cards_of = np.array([p.cards for p in problems], dtype=np.int64)
    pp_lists = [axis_values(p)["pp"] if "pp" not in fx else vals["pp"] for p in problems]
    size_pp = np.repeat(np.arange(len(problems)), [len(x) for x in pp_lists])
    pp_cat = np.concatenate(pp_lists).astype(np.int64)
    tp_v, cp_v = vals["tp"], vals["cp"]
    k, t, q = np.meshgrid(np.arange(size_pp.size), np.arange(tp_v.size), np.arange(cp_v.size), indexing="ij")
    A = {"size": size_pp[k.ravel()], "pp": pp_cat[k.ravel()], "tp": tp_v[t.ravel()], "cp": cp_v[q.ravel()]}
    order = np.lexsort((A["cp"], A["pp"], A["tp"], A["size"]))
    A = {key: v[order] for key, v in A.items()}
    model = A["tp"] * A["pp"] * A["cp"]
    cards = cards_of[A["size"]]
    ok = (
        (A["tp"] <= big.domain_cards)
        & (arch.num_attention_heads % A["tp"] == 0)
        & (kv % A["tp"] == 0)
        & (big.seq_len % A["cp"] == 0)
        & (A["pp"] <= arch.num_hidden_layers)
        & (cards % model == 0)
    )
    A = {key: v[ok] for key, v in A.items()}
    A["dp"] = np.maximum(cards_of[A["size"]] // (A["tp"] * A["pp"] * A["cp"]), 1)
    if "dp" in fx:
        A = {key: v[A["dp"] == fx["dp"]] for key, v in A.items()}
    return A


def _level_experts(
    big: LayoutProblem, vals: dict[str, IntArray], rows_a: Columns
) -> tuple[IntArray, IntArray, IntArray]:
    """Level B: ep and the expert tensor-parallel size (the search's order: ep, then etp) of the
    level-A rows: (parent row, ep, etp)."""
    arch = big.arch
    experts = max(arch.num_experts, 1)
    ep_g, etp_g = (g.ravel() for g in np.meshgrid(vals["ep"], vals["etp"], indexing="ij"))
    a, j = _expand(rows_a["size"].size, np.arange(ep_g.size))
    ep, etp = ep_g[j], etp_g[j]
    ta, ca, da = rows_a["tp"][a], rows_a["cp"][a], rows_a["dp"][a]
    ok = (
        ~etp_not_searched(ta, ep, etp, "expert_tp" in big.fixed_normalized, arch.is_moe)
        & (experts % ep == 0)
        & ((ep <= 1) | arch.is_moe)
        & (etp <= big.domain_cards)
        & ~ep_not_folding(ta, ca, da, ep, etp)
    )
    return a[ok], ep[ok], etp[ok]


def _level_micro_batches(
    big: LayoutProblem, vals: dict[str, IntArray], rows_a: Columns, a: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Levels C, D: mbs, v and the micro-batch count m they decide with dp and pp, of the level-B
    rows: (parent row, mbs, v, m, pp)."""
    L, gbs = big.arch.num_hidden_layers, big.global_batch_seqs
    mbs_g, v_g = (g.ravel() for g in np.meshgrid(vals["mbs"], vals["v"], indexing="ij"))
    b, j = _expand(a.size, np.arange(mbs_g.size))
    mbs, v, ab = mbs_g[j], v_g[j], a[b]
    pp, dp = rows_a["pp"][ab], rows_a["dp"][ab]
    split = big.stage_split
    ok = (
        (pp * v <= L)
        & ~stage_split_fails(L, pp, split)
        & ~((v > 1) & (pp == 1))
        & ~auto_split_fails(L, pp, v, split)
    )
    b, mbs, v, pp, dp = b[ok], mbs[ok], v[ok], pp[ok], dp[ok]
    step = np.where(v > 1, pp, 1)
    m = np.maximum(np.rint(gbs / (dp * mbs) / step), 1).astype(np.int64) * step
    ok = (np.abs(m * dp * mbs - gbs) <= BATCH_TOLERANCE * gbs) & ~((v > 1) & (m % pp != 0))
    return b[ok], mbs[ok], v[ok], m[ok], pp[ok]


def enumerate_valid(problems: Sequence[LayoutProblem], prune: bool = True) -> Columns:
    """enumerate_layouts times the recompute axis (varying fastest): the structurally valid
    candidates in the search's order."""
    c = enumerate_layouts(problems, prune)
    rc = axis_values(problems[0])["rc"]
    out = {k: np.repeat(v, rc.size) for k, v in c.items()}
    out["rc"] = np.tile(rc, c["size"].size)
    return out


def best_layouts(problems: Sequence[LayoutProblem], reuse: bool = False) -> list[LayoutEval | None]:
    """The best layout of each problem (None where nothing fits): search(p).best for each p.

    A problem searched before is answered from memory (every field of LayoutProblem is the key:
    model, accelerator, stack, sequence, batch, precision, cards, fabric...; the answer is a pure
    function of them), so a plan asked again (a report, a sweep row, the stack sensitivity of the
    same scenario) costs no search. reuse (sweeps): also keep the enumeration and the
    accelerator-independent memory of these sizes for the next call with the same model, batch and
    sizes (a sweep's groups, one per accelerator)."""
    if problems:
        _check_shared(problems)
    keys = [_problem_key(p) for p in problems]
    firsts = {k: i for i, k in reversed(list(enumerate(keys)))}
    todo = [firsts[k] for k in dict.fromkeys(keys) if k not in _answers]
    for i, b in zip(todo, _best_layouts([problems[i] for i in todo], reuse), strict=True):
        _remember(keys[i], b)
    return [_answers[k] for k in keys]


def best_in(problem: LayoutProblem, families: dict[tuple[Any, ...], _Family]) -> LayoutEval | None:
    """search(problem).best by the batched search of one size (remembered as best_layouts'
    answers); `families` (the caller's, e.g. one plan's stack profiles at its size) keeps the
    enumeration and the accelerator-independent memory for the next problem with the same
    _family key."""
    key = _problem_key(problem)
    if key not in _answers:
        _remember(key, _best_layouts([problem], False, families)[0])
    return _answers[key]


def _remember(key: tuple[Any, ...], best: LayoutEval | None) -> None:
    """Keep an answer, the oldest forgotten beyond ANSWER_CACHE."""
    _answers[key] = best
    while len(_answers) > ANSWER_CACHE:
        _answers.pop(next(iter(_answers)))


ANSWER_CACHE = 20_000  # best layouts remembered for sweeps (a few kB each)
_answers: dict[tuple[Any, ...], LayoutEval | None] = {}


def clear_caches() -> None:
    """Forget the remembered answers and families (benchmarks time cold searches)."""
    _answers.clear()
    _fits.clear()
    _families.clear()


def _problem_key(p: LayoutProblem) -> tuple[Any, ...]:
    """Every field of the problem, hashable (the fixed fields as sorted pairs)."""
    return tuple(
        tuple(sorted(p.fixed.items())) if f == "fixed" else getattr(p, f) for f in p.__dataclass_fields__
    )


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
    parts = _fitting_parts(problems, reuse, families)
    if not parts:
        return best
    base = problems[0]
    c = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
    if c["size"].size == 0:
        return best
    mem = MemoryBreakdown(**{k: np.concatenate([getattr(p[1], k) for p in parts]) for k in MEMORY_KEYS})
    rf = np.concatenate([p[2] for p in parts])
    if c["size"].size >= PRUNE_MIN:  # drop what cannot reach its size's top throughput bin
        kept = np.flatnonzero(_can_win(problems, base, c, rf))
        c, mem, rf = {k: v[kept] for k, v in c.items()}, _take(mem, kept), rf[kept]
    speed, times, at = _time_by_stem(problems, base, c, rf)
    # per size, only the candidates in its top throughput bin can win: rank those, ties to the
    # search's enumeration order (the row number)
    size = c["size"]
    top = np.full(len(problems), -np.inf)
    np.maximum.at(top, size, speed)
    hit = np.flatnonzero(speed == top[size])
    order = hit[np.lexsort((c["row"][hit], mem.total[hit], rf[hit], c["zero"][hit], -speed[hit], size[hit]))]
    sizes = size[order]
    for i in order[np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]])]:
        j, r, z = at[0][i], at[1][i], at[2][i]
        one = {k: v[i : i + 1] for k, v in c.items()}
        t = {k: v[r : r + 1, z] for k, v in times[j].items()}
        best[int(size[i])] = _make_eval(problems[int(size[i])], one, _take(mem, [i]), t, 0)
    return best


def _can_win(problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray) -> BoolArray:
    """Per candidate: it may be in its size's top throughput bin (the only ones _best_layouts ranks).

    An upper bound of each candidate's tokens/s from steptime.step_time_lower_bound (its compute
    alone), raised by PRUNE_MARGIN against rounding; the step-time model times the PRUNE_PROBE
    candidates of highest bound per size, and a candidate whose bound's bin lies below the best bin
    found at its size cannot reach the top bin (bins are monotone in throughput): dropped. Exact: the
    candidates of the top bin are all kept, so the ranking among them, and the best layout, are
    unchanged (tests/estimator/test_layout_batch.py asserts the bound and the equality)."""
    size = c["size"]
    n = size.size
    ub = np.concatenate(
        [
            tokens_upper_bound(
                problems, base, {k: v[i : i + SLICE_ROWS] for k, v in c.items()}, rf[i : i + SLICE_ROWS]
            )
            for i in range(0, n, SLICE_ROWS)
        ]
    )
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
    speed, _, _ = _time_by_stem(problems, base, {k: v[probe] for k, v in c.items()}, rf[probe])
    best = np.full(len(problems), -np.inf)
    np.maximum.at(best, size[probe], speed)
    return ~(speed_bin(ub) < best[size])  # NaN bounds kept


def tokens_upper_bound(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> FloatArray:
    """An upper bound of evaluate_time(...)["tokens_per_s"] of each candidate (tokens/s): the step's
    tokens over steptime.step_time_lower_bound, times 1 + PRUNE_MARGIN."""
    sized = _SizedProblem(
        base, *(np.array([getattr(p, f) for p in problems], dtype=float)[c["size"]] for f in SIZE_FIELDS)
    )
    cand = Candidates.from_mapping({**{k: c[k] for k in (*STEP_KEYS, "zero")}, "rf": rf})
    lb = step_time_lower_bound(sized, cand)  # type: ignore[arg-type]
    step_tokens = np.asarray(c["m"], dtype=float) * c["dp"] * c["mbs"] * base.seq_len
    return arr(step_tokens / lb * (1.0 + PRUNE_MARGIN))


PRUNE_MIN = 256  # candidates below which timing them all costs less than the bound and the probe
PRUNE_PROBE = 4  # candidates per size timed first (highest bound) to set the bar
PRUNE_MARGIN = 1e-6  # relative slack of the bound against rounding (the bins are 2% wide)


def _fitting_parts(
    problems: Sequence[LayoutProblem], reuse: bool, families: dict[tuple[Any, ...], _Family] | None
) -> list[Fitting]:
    """The candidates of these sizes left for the step-time model (_fitting), slice by slice."""
    if not problems:
        return []
    _check_shared(problems)
    base = problems[0]
    if families is None and reuse:
        families = _families
    family = (
        _family(problems, families) if families is not None else _Family(base, enumerate_layouts(problems))
    )
    # a caller's own memo (one plan's stack profiles) keeps the fitted candidates too: they depend
    # on nothing the family key leaves out but the HBM; the module's cache (sweeps) does not
    keep = families is not None and families is not _families
    hbm = float(base.accelerator.hbm_bytes)
    if keep and hbm in family.fitted:
        return family.fitted[hbm]
    rc_values = axis_values(base)["rc"]
    per = max(1, SLICE_ROWS // rc_values.size)
    parts = [
        _fitting(base, family, start, min(start + per, family.size), rc_values)
        for start in range(0, family.size, per)
    ]
    if keep:
        family.fitted[hbm] = parts
    return parts


def any_fits(problems: Sequence[LayoutProblem], reuse: bool = False) -> list[bool]:
    """Whether search(p) finds a layout at all (one passes the rules and fits in HBM), for each p:
    best_layouts(problems)[i] is not None, from the enumeration and the memory alone (no step-time
    model: what a sweep row with its MFU given needs to know, no figure without a plan). reuse: as
    best_layouts (a problem whose best layout is remembered is answered from it)."""
    if reuse:
        keys = [_problem_key(p) for p in problems]
        todo = [i for i, k in enumerate(keys) if k not in _answers and k not in _fits]
        for i, ok in zip(todo, _any_fits([problems[i] for i in todo], True), strict=True):
            _fits[keys[i]] = ok
        while len(_fits) > ANSWER_CACHE:
            _fits.pop(next(iter(_fits)))
        return [_answers[k] is not None if k in _answers else _fits[k] for k in keys]
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
            for c, _, _ in _fitting_parts(block, reuse, None):
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


_fits: dict[tuple[Any, ...], bool] = {}  # any_fits' answers (sweeps)


def _time_by_stem(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> tuple[FloatArray, list[dict[str, FloatArray]], tuple[IntArray, IntArray, IntArray]]:
    """Step times of the candidates c, computed once per (layout without its ZeRO stage, recompute
    share) with the stages left for it as a broadcast column: the per-layer terms do not depend on
    the stage, so evaluate_step computes them once per row (numpy broadcasting: the same element-wise
    numbers). Rows are grouped by the set of stages they need, so no column is computed in vain;
    groups too small to pay for a step-time call of their own (GRID_MIN elements) are timed
    together, a candidate per row (the per-call overhead of the model is what they would cost).

    Returns (throughput bin per candidate, the slices' time dicts of shape (rows, stages), and per
    candidate its (slice, row in slice, column))."""
    stages = axis_values(base)["zero"]
    col = np.searchsorted(stages, c["zero"])
    # a row per (stem, recompute code); partial recompute's share differs per stage: a row each
    n = c["stem"].size
    key = c["stem"] * 4 + c["rc"]
    partial = c["rc"] == RECOMPUTE_CODES["partial"]
    key = np.where(partial, 4 * (int(c["stem"].max(initial=0)) + 1) + np.arange(n), key)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    row = np.empty(order.size, dtype=np.int64)
    row[order] = np.cumsum(new) - 1
    heads = order[new]
    needs = np.bitwise_or.reduceat(np.left_shift(1, col[order]), np.flatnonzero(new))  # bit z: stage z
    per_size = {
        f: np.array([getattr(p, f) for p in problems], dtype=float)[c["size"][heads]]
        for f in ("cards", "cross_leaf_bandwidth_factor", "nodes_per_leaf_group")
    }
    times: list[dict[str, FloatArray]] = []
    slice_of = np.empty(heads.size, dtype=np.int64)  # per row: its slice and its row there
    local = np.empty(heads.size, dtype=np.int64)
    ranks = np.full((heads.size, stages.size), -1, dtype=np.int64)  # per row: column of each stage
    loose = np.zeros(heads.size, dtype=bool)  # rows of the small groups
    for mask in np.unique(needs):
        cols = np.flatnonzero((int(mask) >> np.arange(stages.size)) & 1)
        group = np.flatnonzero(needs == mask)
        if group.size * cols.size < GRID_MIN:
            loose[group] = True
            continue
        ranks[np.ix_(group, cols)] = np.arange(cols.size)
        per = max(1, SLICE_ROWS // cols.size)
        for start in range(0, group.size, per):
            rows = group[start : start + per]
            sized = _SizedProblem(base, *(v[rows, None] for v in per_size.values()))
            grid = {k: c[k][heads[rows], None] for k in STEP_KEYS}
            grid["zero"] = stages[None, cols]
            slice_of[rows], local[rows] = len(times), np.arange(rows.size)
            times.append(evaluate_time(sized, grid, rf[heads[rows], None]))  # type: ignore[arg-type]
    j, r, z = slice_of[row], local[row], ranks[row, col]  # per candidate: slice, row, column
    single = np.flatnonzero(loose[row])  # candidates of the small groups, timed one per row
    for start in range(0, single.size, SLICE_ROWS):
        idx = single[start : start + SLICE_ROWS]
        sized = _SizedProblem(base, *(v[row[idx], None] for v in per_size.values()))
        grid = {k: c[k][idx, None] for k in (*STEP_KEYS, "zero")}
        j[idx], r[idx], z[idx] = len(times), np.arange(idx.size), 0
        times.append(evaluate_time(sized, grid, rf[idx, None]))  # type: ignore[arg-type]
    offsets = np.cumsum([0] + [t["tokens_per_s"].size for t in times])
    flat = np.concatenate([t["tokens_per_s"].ravel() for t in times])
    widths = np.array([t["tokens_per_s"].shape[1] for t in times])
    tokens = flat[offsets[j] + r * widths[j] + z]
    return speed_bin(tokens), times, (j, r, z)


SLICE_ROWS = 16_384  # candidates per vectorized slice: the arrays stay in the CPU's cache
GRID_MIN = 4_096  # a group of fewer (rows x stages) is timed with the other small ones (one call)
SIZES_PER_BLOCK = 256  # sizes searched together (peak memory about 200 MB for a 30B MoE over 200 sizes)
STEP_KEYS = ("tp", "pp", "dp", "ep", "etp", "cp", "mbs", "v", "m", "sp", "rc")  # what evaluate_time reads
FAMILY_CACHE = 6  # families kept (a sweep group per accelerator shares its model's family)


class _Family:
    """The structurally valid layouts of a list of sizes and their memory without recompute and
    with selective recompute: what does not depend on the accelerator (a sweep over accelerators
    with one model reuses it). Memory is computed lazily, slice by slice."""

    def __init__(self, base: LayoutProblem, layouts: Columns):
        self.base = base
        self.layouts = layouts
        self.size = layouts["size"].size
        self.light: dict[tuple[int, int, int], MemoryBreakdown] = {}
        self.fitted: dict[float, list[Fitting]] = {}  # by HBM bytes (kept for a caller's memo only)

    def rows(self, start: int, stop: int, idx: IntArray, code: int, width_pos: tuple[int, int]) -> Columns:
        """Layouts start + idx with recompute code `code` at position pos of a width-long axis."""
        width, pos = width_pos
        if idx.size == stop - start:  # all of them (idx is then arange): views, no copies
            out = {k: v[start:stop] for k, v in self.layouts.items()}
        else:
            out = {k: v[start:stop][idx] for k, v in self.layouts.items()}
        out["rc"] = np.full(idx.size, code, dtype=np.int64)
        out["row"] = (start + idx) * width + pos
        return out

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
    key = (
        p.arch,
        p.counts,
        p.seq_len,
        p.global_batch_seqs,
        tuple(sorted(p.fixed_normalized.items())),
        p.domain_cards,
        p.flash_attention,
        p.stack.memory_key(),
        p.sharded_with_pp,
        p.grad_dtype,
        p.buffers,
        fp8_activations(p),
        tuple(q.cards for q in problems),
    )
    found = store.pop(key, None)
    if found is None:
        found = _Family(p, enumerate_layouts(problems))
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
    full_mem = _take(
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
        none_like = _take(none_mem, heavy[some])
    else:
        none_like = card_memory(base, partial, partial["rc"])
    mixed, f = _partial_recompute(
        base, partial, np.ones(some.size, dtype=bool), none_like, _take(full_mem, some), np.zeros(some.size)
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
    return {k: v[idx] for k, v in c.items()}, _take(mem, idx), np.asarray(rf, dtype=float)[idx]
