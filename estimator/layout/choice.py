"""Why the search chose its layout over the runners-up it shows (search.rank_order's rule in words).

The search ranks by throughput, with throughput within TIE_BAND (2 %) a tie that goes to the lower
ZeRO stage, then less recomputation, then less memory. So the chosen layout is not always the
fastest: a runner-up up to 2 % faster may be listed. The result says which (`layout.choice`):
- {"code": "fastest"}: no runner-up shown is faster (tokens/s);
- {"code": "tie", "params": {"faster_by", "layout", "reason"}}: the fastest runner-up shown, how much
  faster it is (tokens/s ratio - 1, below 2 %) and the tie-break that preferred the chosen one
  ("lower-zero", "less-recompute" or "less-memory").
"""

from __future__ import annotations

from typing import Any

from estimator.layout.search import LayoutEval


def choice_reason(best: LayoutEval, runners_up: list[LayoutEval]) -> dict[str, Any]:
    """The chosen layout against the runners-up shown (module docstring)."""
    faster = [r for r in runners_up if r.tokens_per_s > best.tokens_per_s]
    if not faster:
        return {"code": "fastest", "params": {}}
    top = max(faster, key=lambda r: r.tokens_per_s)
    if best.zero_stage < top.zero_stage:
        reason = "lower-zero"
    elif best.recompute_fraction < top.recompute_fraction or (
        best.recompute == "none" and top.recompute != "none"
    ):
        reason = "less-recompute"
    else:
        reason = "less-memory"
    layout = {k: getattr(top, k) for k in ("tp", "pp", "dp", "ep", "cp", "zero_stage", "recompute")}
    return {
        "code": "tie",
        "params": {
            "faster_by": top.tokens_per_s / best.tokens_per_s - 1.0,
            "layout": layout,
            "reason": reason,
        },
    }
