"""No figure without a plan: a scenario whose layout search finds nothing is refused, not timed.

Before 2.15.0 such a plan was timed with a fallback MFU of 35 % and flagged in its warnings; a
reader took that throughput for a prediction. Now it is a ScenarioError (API 400, CLI exit 2) whose
one FieldError carries:
- `field`: `parallelism` when the scenario fixes parallelism fields (the single fixed field when it
  fixes only one), else the sizing field the user gave (`cluster.cards`, `cluster.budget` or
  `cluster.target_days`);
- `code`: `no-possible-layout` (the fixed fields leave no layout that passes the rules),
  `fixed-layout-does-not-fit` (layouts pass the rules but none fits in HBM), `cards-split-into-no-layout`
  (nothing fixed, and no layout passes the rules on these cards: `below` and `above` name the
  nearest round sizes that hold one), `no-feasible-layout` (nothing fixed, layouts pass the rules
  but none fits on these cards) or `budget-cards-hold-no-layout` (none fits on the cards a
  `cluster.budget` buys, nor on any round size below them);
- `params`: the cards, the fixed fields, the refusing rules (`reasons`: codes of
  layout.enumeration.REASONS, with `rules`: each in English words; where no layout passes the
  rules, those failed by the candidates that fail the fewest, layout.enumeration.blocking_reasons),
  the memory overflow where that is
  the reason (layout.fit.overflow_params), and `suggestions`: the nearest accepted layouts
  (layout.nearest), each as parallelism fields with its predicted MFU;
- `message`: the English default (the web layer renders code + params in the reader's language).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from estimator.contract.resolve import Resolved
from estimator.errors import FieldError, ScenarioError
from estimator.layout.enumeration import blocking_reasons
from estimator.layout.fit import overflow_params
from estimator.layout.nearest import nearest_layouts, suggestion
from estimator.layout.search import LayoutProblem, LayoutSearch
from estimator.plan.deadline import SizeMemo, candidate_sizes, largest_fitting, smallest_fitting
from estimator.plan.problem import cards_multiple
from estimator.words import counted

# The layout rules in words (English defaults; reports.messages has them as `rule.<code>`).
RULES = {
    "tp-crosses-scaleup-domain": "TP must stay inside one scale-up (NVLink/HCCS) domain",
    "tp-not-dividing-heads": "TP must divide the attention heads and the KV heads",
    "sequence-parallel-needs-tp": "sequence parallelism needs TP > 1",
    "cp-not-dividing-sequence": "the sequence length must split into 2 x CP equal chunks (CP with the causal load balance)",
    "sequence-parallel-not-dividing-sequence": "with sequence parallelism TP must divide the tokens of a CP rank (sequence length / CP)",
    "pp-not-dividing-layers": "PP x virtual stages cannot exceed the layers",
    "virtual-stages-need-pp": "interleaved (virtual) stages need PP > 1",
    "stage-layers-not-splitting": "the pipeline devices without a fixed first/last layer count must share the other layers evenly",
    "virtual-stages-not-dividing-layers": "PP x virtual stages must split the layers evenly (at most 2 short), or fix parallelism.first_stage_layers / last_stage_layers",
    "dp-not-integral": "TP x PP x CP must divide the cards",
    "dp-not-matching-cards": "TP x PP x CP x DP must equal the cards",
    "ep-without-experts": "expert parallelism needs a mixture-of-experts model",
    "ep-not-dividing-experts": "EP must divide the experts",
    "expert-tp-crosses-scaleup-domain": "expert TP must stay inside one scale-up (NVLink/HCCS) domain",
    "ep-not-folding-into-tp-cp-dp": "EP x expert TP must divide TP x CP x DP (the ranks the MoE layers regroup)",
    "batch-off-by-over-25pct": "the global batch must split into whole micro-batches per DP rank (within 25 %)",
    "micro-batches-not-multiple-of-pp": "with interleaving the micro-batches must be a multiple of PP",
    "moe-tp-without-sequence-parallel": "a MoE model with TP > 1 needs sequence parallelism on this stack (Megatron-Core, MindSpeed)",
    "zero-stage-not-run-by-stack": "the software stack does not run this ZeRO stage (MindSpeed-LLM: the distributed optimizer, ZeRO-1, at most)",
    "zero-stage-incompatible-with-pp": "ZeRO-2/3 does not combine with pipeline parallelism on this stack",
    "partial-recompute-redundant": "partial recompute must recompute some but not all layers",
    "out-of-memory": "the layout must fit in HBM",
}


def _layout_text(layout: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in layout.items() if k != "predicted_mfu")


def _field(r: Resolved, fixed: Mapping[str, Any]) -> str:
    if len(fixed) == 1:
        return f"parallelism.{next(iter(fixed))}"
    if fixed:
        return "parallelism"
    cluster = r.scenario.cluster
    if cluster.cards is not None:
        return "cluster.cards"
    return "cluster.budget" if cluster.budget is not None else "cluster.target_days"


def _round_neighbours(r: Resolved, cards: int) -> dict[str, int | None]:
    """The largest round cluster size below `cards` and the smallest above it on which a layout
    passes the rules and fits (plan.deadline: largest_fitting, smallest_fitting; memory alone),
    None where there is none."""
    memo = SizeMemo(r)
    sizes = candidate_sizes(r, cards_multiple(r))
    high = smallest_fitting(sizes, int(np.searchsorted(sizes, cards, side="right")), memo)
    return {"below": largest_fitting(r, cards, memo), "above": None if high is None else int(sizes[high])}


def refusal(r: Resolved, cards: int, found: LayoutSearch, problem: LayoutProblem) -> ScenarioError:
    """The ScenarioError of a plan whose search found no layout at `cards` (module docstring)."""
    fixed = {k: v for k, v in r.scenario.parallelism.fixed().items() if k != "top_n"}
    reasons = (
        (blocking_reasons(problem) if found.closest is None else [])
        or [k for k in found.rejected if k != "partial-recompute-redundant"]
        or ["out-of-memory"]
    )
    suggestions = [suggestion(e) for e in nearest_layouts(problem)] if fixed else []
    params: dict[str, Any] = {
        "cards": cards,
        "fixed": fixed,
        "reasons": reasons,
        "rules": [RULES.get(k, k) for k in reasons],
        "suggestions": suggestions,
    }
    tail = (
        " Nearest accepted layouts: " + "; ".join(_layout_text(s) for s in suggestions) + "."
        if suggestions
        else ""
    )
    if fixed and found.closest is None:
        code = "no-possible-layout"
        message = (
            f"No parallel layout is possible on {counted(cards, 'card')} with the fixed fields ({_layout_text(fixed)}): "
            + "; ".join(params["rules"])
            + "."
        )
    elif fixed:
        assert found.closest is not None
        code = "fixed-layout-does-not-fit"
        params |= overflow_params(found.closest, None)
        params.pop("nearest_layout")
        message = (
            f"The fixed layout ({_layout_text(fixed)}) needs {params['total_gb']:.1f} GB per card "
            f"({params['model_states_gb']:.1f} GB of model states; largest: {params['largest_term']} "
            f"{params['largest_gb']:.1f} GB), {params['overflow_gb']:.1f} GB more than the "
            f"{params['hbm_gb']:.0f} GB of HBM."
        )
    elif r.scenario.cluster.budget is not None:  # the cards are what the budget buys: more cost more
        code = "budget-cards-hold-no-layout"
        message = (
            f"No parallel layout fits in HBM on the {counted(cards, 'card')} the budget buys. Raise the budget, "
            "use a larger-memory accelerator or a shorter sequence."
        )
    elif found.closest is None:  # nothing passed the rules: the count does not split, memory aside
        code = "cards-split-into-no-layout"
        params |= _round_neighbours(r, cards)
        around = " and ".join(counted(params[k], "card") for k in ("below", "above") if params[k] is not None)
        message = (
            f"No parallel layout splits {counted(cards, 'card')}: "
            + "; ".join(params["rules"])
            + "."
            + (f" The nearest round cluster sizes that hold one: {around}." if around else "")
        )
    else:
        code = "no-feasible-layout"
        message = (
            f"No parallel layout fits in HBM on {counted(cards, 'card')}. Add cards, use a larger-memory accelerator "
            "or a shorter sequence."
        )
    if fixed and not suggestions:
        tail = " No layout passes the rules and fits on these cards; add cards or change the model."
    return ScenarioError([FieldError(_field(r, fixed), message + tail, code, params)])
