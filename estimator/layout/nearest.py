"""The layouts nearest to a refused fixed one: what a user could fix instead.

When the scenario's fixed parallelism fields leave no layout that passes the rules and fits in HBM,
the plan is refused (estimator.plan.refusal) with these suggestions. Every rule and the memory check
are the search's own (enumeration.structural_failures, evaluation.evaluate_memory): a suggestion is a
layout the search would accept. Distance to the fixed layout, over the fixed fields only:
|log2(value / fixed)| for the degrees and sizes (tp, pp, dp, ep, expert_tp, cp, micro_batch_size,
virtual_stages: halving and doubling are one step), one step for a different sequence_parallel;
the memory-saving choices that leave the model's split as the user set it cost less, as
layout.fit.nearest_fit relaxes them first: a quarter step per ZeRO stage and for the distributed
optimizer (they move together), half a step for a different recompute. Of the layouts at the same
values of the fixed fields, the fastest is shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from estimator.arrays import FloatArray
from estimator.layout.enumeration import enumerate_candidates, structural_failures
from estimator.layout.evaluation import evaluate_memory, evaluate_time, take_memory
from estimator.layout.memory import RECOMPUTE_CODES
from estimator.layout.search import LayoutEval, LayoutProblem, _make_eval, partial_redundant, rank_order

# fixed field -> candidate array (enumeration.AXES, plus the derived dp)
_LOG_FIELDS = {
    "tp": "tp",
    "pp": "pp",
    "dp": "dp",
    "ep": "ep",
    "expert_tp": "etp",
    "cp": "cp",
    "micro_batch_size": "mbs",
    "virtual_stages": "v",
}
_CHOICE_FIELDS = {"recompute": "rc", "sequence_parallel": "sp"}
SUGGESTION_KEYS = (
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "virtual_stages",
    "micro_batch_size",
    "zero_stage",
    "recompute",
)
MAX_SUGGESTIONS = 3


def _column(c: Mapping[str, Any], key: str) -> np.ndarray:
    """The candidates' values of fixed field `key` (distributed_optimizer: ZeRO stage >= 1)."""
    if key == "distributed_optimizer":
        return np.asarray(c["zero"]) >= 1
    if key == "zero_stage":
        return np.asarray(c["zero"])
    return np.asarray(c[{**_LOG_FIELDS, **_CHOICE_FIELDS}[key]])


def distance(c: Mapping[str, Any], fixed: Mapping[str, Any]) -> FloatArray:
    """Steps from each candidate to the fixed layout over the fixed fields (module docstring)."""
    d = np.zeros(np.shape(c["tp"]), dtype=float)
    for key, value in fixed.items():
        if key in _LOG_FIELDS:
            d += np.abs(np.log2(np.asarray(c[_LOG_FIELDS[key]], dtype=float) / float(value)))
        elif key == "zero_stage":
            d += 0.25 * np.abs(np.asarray(c["zero"], dtype=float) - float(value))
        elif key == "recompute":
            code = RECOMPUTE_CODES[value] if isinstance(value, str) else int(value)
            d += 0.5 * (np.asarray(c["rc"]) != code)
        elif key == "distributed_optimizer":
            d += 0.25 * (_column(c, key) != bool(value))
        elif key == "sequence_parallel":
            d += _column(c, key) != bool(value)
    return d


def nearest_layouts(problem: LayoutProblem, limit: int = MAX_SUGGESTIONS) -> list[LayoutEval]:
    """Up to `limit` accepted layouts (rules passed, fitting in HBM) nearest to problem.fixed, nearest
    first, each the fastest at its values of the fixed fields. [] when nothing fits on these cards."""
    fixed = {k: v for k, v in problem.fixed.items() if k in (*_LOG_FIELDS, *_CHOICE_FIELDS, "zero_stage")}
    fixed |= {k: v for k, v in problem.fixed.items() if k == "distributed_optimizer"}
    relaxed = dataclasses.replace(problem, fixed={k: v for k, v in problem.fixed.items() if k == "top_n"})
    c = enumerate_candidates(relaxed)
    ok = np.ones(c["tp"].size, dtype=bool)
    for _name, failing in structural_failures(relaxed, c):
        ok &= ~np.asarray(failing, dtype=bool)
    sub = {k: v[ok] for k, v in c.items()}
    mem, rf = evaluate_memory(relaxed, sub)
    good = np.flatnonzero(
        np.asarray(mem.total <= problem.accelerator.hbm_bytes) & ~partial_redundant(sub["rc"], rf)
    )
    if good.size == 0:
        return []
    sub, mem, rf = {k: v[good] for k, v in sub.items()}, take_memory(mem, good), rf[good]
    keys = sorted(fixed) or ["tp", "pp"]
    columns = np.stack([_column(sub, k).astype(float) for k in keys], axis=1)
    groups, group_of = np.unique(columns, axis=0, return_inverse=True)
    group_of = np.asarray(group_of).ravel()
    d = distance(sub, fixed)
    group_d = np.full(len(groups), np.inf)
    np.minimum.at(group_d, group_of, d)
    chosen = np.argsort(group_d, kind="stable")[:limit]
    out = []
    for g in chosen:
        idx = np.flatnonzero(group_of == g)
        one = {k: v[idx] for k, v in sub.items()}
        t = evaluate_time(relaxed, one, rf[idx])
        best = int(rank_order(t["tokens_per_s"], mem.total[idx], rf[idx], one["zero"])[0])
        out.append(_make_eval(relaxed, one, take_memory(mem, idx), t, best))
    return out


def suggestion(e: LayoutEval) -> dict[str, Any]:
    """A suggested layout as the scenario's `parallelism` fields, with its predicted MFU (and the
    expert tensor-parallel size of a MoE layout)."""
    out = {k: getattr(e, k) for k in SUGGESTION_KEYS}
    if e.moe:
        out["expert_tp"] = e.expert_tp
    return {**out, "predicted_mfu": e.predicted_mfu}
