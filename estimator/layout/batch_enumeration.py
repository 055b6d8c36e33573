"""The structurally valid layouts of many cluster sizes at once, for layout.batch_search.

No full Cartesian product per size: the structurally valid layouts are built level by level over
the axes in the search's enumeration order (tp, pp, cp | ep, etp | mbs, v | sp | zero), each level
dropping what fails the rules of layout_enum.structural_failures that involve only the axes
fixed so far (tests/estimator/test_layout_batch.py checks the two enumerations are equal). Only
pp depends on the size (the divisors of the card count); the other ranges are the largest
size's: a tp or ep beyond a smaller size's card count fails "dp-not-integral" or
"ep-not-folding-into-tp-cp-dp" there anyway.

SEQUENCE_PARALLEL_WITH_TP (layout.enumeration.sp_off_not_searched): with fused attention kernels
and tp > 1 a free sequence-parallel switch is searched on only, as the one-at-a-time search
enumerates it.
shared_layouts keeps an enumeration for the next family that reads the same (a sweep's
accelerators whose stacks differ in their memory only), and takes a single size's from the kept
scan of several sizes that enumerated it under the same rules (scanned_layouts: deadline sizing's
scan, then the stack section at the chosen size). Dimensionless counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.layout.batch_timing import Columns, IntArray
from estimator.layout.enumeration import (
    BATCH_TOLERANCE,
    auto_split_fails,
    axis_values,
    cp_not_dividing_sequence,
    ep_not_folding,
    etp_not_searched,
    moe_tp_without_sp,
    sp_not_dividing_sequence,
    sp_splits_sequence,
    stage_split_fails,
    zero_not_run_by_stack,
)
from estimator.layout.problem import LayoutProblem


def _expand(n: int, values: npt.NDArray[Any]) -> tuple[IntArray, npt.NDArray[Any]]:
    """(parent index, value) of every one of n parent rows times every value, values varying fastest."""
    return np.repeat(np.arange(n), values.size), np.tile(values, n)


def enumerate_layouts(problems: Sequence[LayoutProblem]) -> Columns:
    """The candidates of every problem that pass layout_enum.structural_failures, without the
    recompute axis (no rule involves it): keys size (index into problems), tp, pp, cp, ep, mbs, v,
    sp, zero, dp, m; ordered by size and then as enumerate_candidates orders them.
    A free sequence_parallel is only on where tp > 1 (SEQUENCE_PARALLEL_WITH_TP, module docstring).

    Built level by level over the axes, a level keeping the index of its parent row, so each rule
    runs on the rows it concerns and the columns are gathered once at the end."""
    big = max(problems, key=lambda p: p.cards)
    vals = axis_values(big)
    A = _level_model(problems, big, vals)
    a, ep, etp = _level_experts(big, vals, A)
    b, mbs, v, m, pp = _level_micro_batches(big, vals, A, a)
    ab = a.take(b)
    tp, cp = A["tp"].take(ab), A["cp"].take(ab)
    if vals["sp"].size > 1 and big.sequence_parallel_with_tp:  # enumeration.sp_off_not_searched
        d, sp = np.arange(b.size), (tp > 1) & sp_splits_sequence(big.seq_len, tp, cp)
    else:  # level E: sp
        d, sp = _expand(b.size, vals["sp"])
        ok = ~(sp & (tp[d] == 1)) & ~sp_not_dividing_sequence(big.seq_len, tp[d], cp[d], sp)
        d, sp = d[ok], sp[ok]
    if big.arch.is_moe and big.moe_tp_needs_sp:  # enumeration.moe_tp_without_sp
        ok = ~moe_tp_without_sp(tp.take(d), sp, True)
        d, sp = d[ok], sp[ok]
    # level F: zero; a table of the stages allowed without and with pp > 1, a row per parent
    allowed = np.stack([np.ones(vals["zero"].size, dtype=bool), (vals["zero"] < 2) | big.sharded_with_pp])
    allowed &= ~zero_not_run_by_stack(vals["zero"], big.max_zero_stage)
    e, z = _nonzero_2d(allowed[(pp[d] > 1).astype(np.int64)])  # by parent row, then in stage order
    zero = vals["zero"].take(z)
    de = d.take(e)
    bde = b.take(de)
    abde = a.take(bde)
    return {
        "stem": e,  # the layout without its ZeRO stage (the step time broadcasts over the stages)
        "size": A["size"].take(abde),
        "tp": A["tp"].take(abde),
        "pp": A["pp"].take(abde),
        "cp": A["cp"].take(abde),
        "dp": A["dp"].take(abde),
        "ep": ep.take(bde),
        "etp": etp.take(bde),
        "mbs": mbs.take(de),
        "v": v.take(de),
        "m": m.take(de),
        "sp": sp.take(e),
        "zero": zero,
    }


def _nonzero_2d(table: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
    """np.nonzero of a 2-d table, (rows, columns) in C order, from its flat indices (the 2-d
    np.nonzero walks a multi-index per element: several times the cost of a flat scan)."""
    rows, cols = np.divmod(np.flatnonzero(table), table.shape[1])
    return rows, cols


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
    # np.lexsort((cp, pp, tp, size)) as one stable sort of a key that orders as the four columns do
    # (each a non-negative integer below its width)
    rank = np.zeros(A["size"].size, dtype=np.int64)
    for col in ("size", "tp", "pp", "cp"):
        rank = rank * (int(A[col].max(initial=0)) + 1) + A[col]
    order = np.argsort(rank, kind="stable")
    A = {key: v.take(order) for key, v in A.items()}
    model = A["tp"] * A["pp"] * A["cp"]
    cards = cards_of[A["size"]]
    ok = (
        (A["tp"] <= big.domain_cards)
        & (arch.num_attention_heads % A["tp"] == 0)
        & (kv % A["tp"] == 0)
        & ~cp_not_dividing_sequence(big.seq_len, A["cp"], big.cp_load_balance)
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
    ta, ca, da = rows_a["tp"].take(a), rows_a["cp"].take(a), rows_a["dp"].take(a)
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
    rows: (parent row, mbs, v, m, pp). The rules involve only (pp, dp, mbs, v), so they run once
    per distinct (pp, dp) of the rows (a table of those pairs times every (mbs, v)) and each row
    takes its pair's valid (mbs, v) in order; the rules of pp and v alone run once per distinct pp,
    and m and the batch rules only on the (pair, mbs, v) those leave."""
    L, gbs = big.arch.num_hidden_layers, big.global_batch_seqs
    mbs_g, v_g = (g.ravel() for g in np.meshgrid(vals["mbs"], vals["v"], indexing="ij"))
    pp_b, dp_b = rows_a["pp"].take(a), rows_a["dp"].take(a)
    pairs, inv = np.unique(pp_b * (int(dp_b.max(initial=0)) + 1) + dp_b, return_inverse=True)
    first = np.zeros(pairs.size, dtype=np.int64)
    first[inv[::-1]] = np.arange(inv.size)[::-1]  # a row of each pair
    pp_u, pp_of_pair = np.unique(pp_b[first], return_inverse=True)
    pp_t, v_t = pp_u[:, None], v_g[None, :]  # (distinct pp, 1) against (1, mbs x v)
    split = big.stage_split
    staged = (
        (pp_t * v_t <= L)
        & ~stage_split_fails(L, pp_t, split)
        & ~((v_t > 1) & (pp_t == 1))
        & ~auto_split_fails(L, pp_t, v_t, split)
    )
    pair_of, combo = _nonzero_2d(staged[pp_of_pair.ravel()])  # by pair, then in (mbs, v) order
    pp, dp, mbs, v = pp_b[first].take(pair_of), dp_b[first].take(pair_of), mbs_g.take(combo), v_g.take(combo)
    step = np.where(v > 1, pp, 1)
    m = np.maximum(np.rint(gbs / (dp * mbs) / step), 1).astype(np.int64) * step
    ok = (np.abs(m * dp * mbs - gbs) <= BATCH_TOLERANCE * gbs) & ~((v > 1) & (m % pp != 0))
    pair_of, combo, m = pair_of[ok], combo[ok], m[ok]
    per_pair = np.bincount(pair_of, minlength=pairs.size)
    starts = np.cumsum(per_pair) - per_pair
    n_row = per_pair.take(inv)
    b = np.repeat(np.arange(a.size), n_row)
    k = np.arange(b.size) - np.repeat(np.cumsum(n_row) - n_row, n_row)  # position in its row
    at = starts.take(inv.take(b)) + k  # each row's valid (mbs, v) among its pair's
    g = combo.take(at)
    return b, mbs_g.take(g), v_g.take(g), m.take(at), pp_b.take(b)


def enumerate_valid(problems: Sequence[LayoutProblem]) -> Columns:
    """enumerate_layouts times the recompute axis (varying fastest): the structurally valid
    candidates in the search's order."""
    c = enumerate_layouts(problems)
    rc = axis_values(problems[0])["rc"]
    out = {k: np.repeat(v, rc.size) for k, v in c.items()}
    out["rc"] = np.tile(rc, c["size"].size)
    return out


ENUMERATION_CACHE = 6  # enumerations kept (a sweep's model, over its stacks)
_enumerations: dict[tuple[Any, ...], tuple[Columns, None, dict[str, Any]]] = {}


def enumeration_key(problems: Sequence[LayoutProblem]) -> tuple[Any, ...]:
    """Everything enumerate_layouts(problems) reads: the model, the sequence and batch, the fixed
    axes, the scale-up domain, the sizes, the axis ranges of the largest size (the others' pipeline
    ranges are their cards' divisors), and the rules that read the stack (fused attention, sequence
    parallelism's dominance, sharding with pipelining, CP's load-balanced chunks, the stage split)."""
    p, big = problems[0], max(problems, key=lambda q: q.cards)
    return (
        p.arch,
        p.counts,
        p.seq_len,
        p.global_batch_seqs,
        tuple(sorted(p.fixed_normalized.items())),
        p.domain_cards,
        p.flash_attention,
        p.sequence_parallel_with_tp,
        p.sharded_with_pp,
        p.max_zero_stage,
        p.moe_tp_needs_sp and p.arch.is_moe,  # the rule reads it only for a MoE model
        p.cp_load_balance,
        p.stage_split,
        tuple(q.cards for q in problems),
        tuple((axis, tuple(v.tolist())) for axis, v in axis_values(big).items() if axis != "rc"),
    )


def shared_layouts(problems: Sequence[LayoutProblem]) -> tuple[Columns, None, dict[str, Any]]:
    """enumerate_layouts(problems), kept (ENUMERATION_CACHE of them) by enumeration_key, for families
    that differ in their memory only (a sweep's accelerators with different stacks share the
    enumeration). Returns (layouts, no subset index, what _Family derives from them alone); the
    arrays are shared: nothing writes them."""
    key = enumeration_key(problems)
    found = _enumerations.pop(key, None)
    if found is None:
        sliced = _sliced(problems, key)
        found = enumerate_layouts(problems) if sliced is None else sliced, None, {}
    _enumerations[key] = found  # most recently used last
    while len(_enumerations) > ENUMERATION_CACHE:
        _enumerations.pop(next(iter(_enumerations)))
    return found


def scanned_layouts(problems: Sequence[LayoutProblem]) -> Columns:
    """enumerate_layouts(problems), the last SCANS_KEPT of several sizes kept for shared_layouts of
    one of their sizes (deadline sizing's scan, then the stack section's profiles at the chosen
    size, whose enumeration rules are the chosen stack's): their rows of that size."""
    layouts = enumerate_layouts(problems)
    if len(problems) > 1:
        _scans.append((enumeration_key(problems)[:-2], [q.cards for q in problems], layouts))
        del _scans[:-SCANS_KEPT]
    return layouts


def _sliced(problems: Sequence[LayoutProblem], key: tuple[Any, ...]) -> Columns | None:
    """enumerate_layouts of one size from a kept scan that enumerated it under the same rules (the
    key but the sizes and the largest size's axis ranges): its rows of that size, size 0. The same
    columns (test_layout_batch.test_enumeration_is_the_search_s: a size's rows of a several-size
    enumeration are its own candidates, in order), stems numbered alike up to a constant (the
    step time and the bounds use them as run labels only). None: no such scan."""
    if len(problems) != 1:
        return None
    for rules, cards, layouts in reversed(_scans):
        if rules == key[:-2] and problems[0].cards in cards:
            lo, hi = np.searchsorted(
                layouts["size"], [cards.index(problems[0].cards), cards.index(problems[0].cards) + 1]
            )
            out = {k: v[lo:hi] for k, v in layouts.items()}  # views: nothing writes them
            out["size"] = np.zeros(hi - lo, dtype=np.int64)
            return out
    return None


SCANS_KEPT = 2  # several-size enumerations kept for _sliced (a deadline scan's passes)
_scans: list[tuple[tuple[Any, ...], list[int], Columns]] = []


def clear() -> None:
    """Forget the kept enumerations."""
    _enumerations.clear()
    _scans.clear()
