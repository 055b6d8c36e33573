"""When a fixed layout does not fit in HBM: what overflows by how much, and the nearest layout that
fits (the warning `fixed-layout-does-not-fit`). Bytes in, GB out."""

from __future__ import annotations

import dataclasses
from typing import Any

from estimator.layout.search import LayoutEval, LayoutProblem, search

# Fixed fields relaxed first when a fixed layout does not fit: the memory-saving choices that leave
# the model split (tp, pp, ep, cp) as the user set it; then everything.
NEAREST_KEYS = ("tp", "pp", "dp", "ep", "cp", "zero_stage", "recompute", "micro_batch_size", "virtual_stages")
_MEMORY_CHOICES = ("zero_stage", "recompute", "micro_batch_size", "virtual_stages", "distributed_optimizer")


def nearest_fit(problem: LayoutProblem) -> LayoutEval | None:
    """The best layout that fits when the fixed one does not: first relaxing only the memory-saving
    choices (ZeRO stage, recompute, micro-batch, interleaving), then every fixed field."""
    fixed = dict(problem.fixed)
    for keep in ({k: v for k, v in fixed.items() if k not in _MEMORY_CHOICES}, {}):
        if keep == fixed:
            continue
        found = search(dataclasses.replace(problem, fixed={**keep, "top_n": 0}))
        if found.best is not None:
            return found.best
    return None


def overflow_params(shown: LayoutEval, nearest: LayoutEval | None) -> dict[str, Any]:
    """Parameters of the `fixed-layout-does-not-fit` warning: what overflows HBM and by how much (GB)."""
    per = shown.per_card_bytes
    terms = {k: v for k, v in per.items() if k != "total"}
    largest = max(terms, key=lambda k: terms[k])
    out = {
        "total_gb": per["total"] / 1e9,
        "hbm_gb": shown.hbm_bytes / 1e9,
        "overflow_gb": (per["total"] - shown.hbm_bytes) / 1e9,
        "model_states_gb": (per["weights"] + per["gradients"] + per["optimizer"]) / 1e9,
        "largest_term": largest,
        "largest_gb": terms[largest] / 1e9,
        "nearest_layout": None,
    }
    if nearest is not None:
        out["nearest_layout"] = {k: getattr(nearest, k) for k in NEAREST_KEYS}
    return out
