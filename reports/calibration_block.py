"""The report's "calibrated on your pilot run" block: the result's `calibration` section (estimator.
plan.pilot) in the reader's language: the pilot against the model, each factor and what it scales,
the plan before and after, what the extrapolation grows, and the band with its rule."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import formatting as f
from .labels import step_term

FACTORS = {
    "compute": (
        gettext_lazy("Compute efficiency"),
        gettext_lazy("every compute rate of the step: GEMMs, attention, memory-bound kernels, optimizer"),
    ),
    "communication": (
        gettext_lazy("Communication"),
        gettext_lazy("the achieved bandwidth of every collective (TP, CP, EP, PP, DP)"),
    ),
}
CHANGES = {
    "cards": gettext_lazy("Cards"),
    "active-params": gettext_lazy("Active parameters"),
    "dp-size": gettext_lazy("DP size (gradient all-reduce group)"),
    "nodes": gettext_lazy("Nodes (cross-node traffic)"),
    "tensor-parallel": gettext_lazy("TP"),
    "pipeline": gettext_lazy("PP (pipeline bubble)"),
    "expert-parallel": gettext_lazy("EP (MoE all-to-all)"),
    "context-parallel": gettext_lazy("CP"),
}
MECHANISMS = {
    "tensor-parallel": gettext_lazy("tensor parallelism"),
    "pipeline": gettext_lazy("the pipeline bubble"),
    "expert-parallel": gettext_lazy("the MoE all-to-all"),
    "context-parallel": gettext_lazy("context parallelism"),
    "cross-node": gettext_lazy("cross-node traffic"),
    "recompute": gettext_lazy("activation recomputation"),
}


def _value(code: str, value: Any) -> str:
    return f.big(value) if code == "active-params" else f.count(value)


def _plan(plan: dict[str, Any] | None) -> dict[str, str] | None:
    if not plan:
        return None
    return {
        "cards": f.count(plan["cards"]),
        "tokens_per_s": f"{f.big(plan['tokens_per_s'])}/s",
        "per_card": f"{f.big(plan['tokens_per_s_per_card'])}/s",
        "step": f.seconds(plan["step_time_s"]),
        "mfu": f.percent(plan["predicted_mfu"], 1),
        "days": f.days(plan["training_days"]),
    }


def block(result: dict[str, Any]) -> dict[str, Any] | None:
    """The template's context for the calibration block, or None without calibration."""
    cal = result.get("calibration")
    if not isinstance(cal, dict):
        return None
    p, band = cal["pilot"], cal["band"]
    ratio = p["measured_tokens_per_s_per_card"] / p["predicted_tokens_per_s_per_card"]
    return {
        "pilot": {
            "model": p["model"],
            "cards": f.count(p["cards"]),
            "accelerator": p["accelerator"],
            "measured": f.big(p["measured_tokens_per_s_per_card"]),
            "predicted": f.big(p["predicted_tokens_per_s_per_card"]),
            "ratio": f"{f.number(ratio, 2)}×",
            "wait": None
            if p["measured_comm_wait_share"] is None
            else f.percent(p["measured_comm_wait_share"], 0),
        },
        "factors": [
            {
                "name": str(FACTORS.get(x["name"], (x["name"], ""))[0]),
                "value": f.number(x["value"], 3),
                "scales": str(FACTORS.get(x["name"], ("", x["scales"]))[1]),
            }
            for x in cal["factors"]
        ],
        "across_chips": bool(cal["carried_across_chips"]),
        "target_accelerator": cal["target_accelerator"],
        "before": _plan(cal["before"]),
        "after": _plan(cal["after"]),
        "changes": [
            {
                "label": str(CHANGES.get(c["code"], c["code"])),
                "pilot": _value(c["code"], c["pilot"]),
                "target": _value(c["code"], c["target"]),
            }
            for c in cal["extrapolation"]["changes"]
        ],
        "growing": [
            {
                "term": step_term(t["term"]),
                "pilot": f.percent(t["pilot_share"], 1),
                "target": f.percent(t["target_share"], 1),
            }
            for t in cal["extrapolation"]["growing_terms"]
        ],
        "new_mechanisms": ", ".join(
            str(MECHANISMS.get(m, m)) for m in cal["extrapolation"]["new_mechanisms"]
        ),
        "band": {
            "width": f.percent(band["relative_half_width"], 0),
            "low": f.big(band["tokens_per_s_low"]),
            "high": f.big(band["tokens_per_s_high"]),
            "days_low": f.days(band["training_days_low"]),
            "days_high": f.days(band["training_days_high"]),
            "rule": _(
                "3% for the pilot's own spread, plus 2% per doubling of cards, active parameters and sequence "
                "length from pilot to target, plus 5% per mechanism the pilot did not exercise, plus 10% when "
                "the factor was measured on another chip; at most 50%."
            ),
        },
    }
