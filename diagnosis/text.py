"""The core's diagnosis in the reader's language: term labels, figures and findings (codes rendered
by reports.messages, the one message catalogue)."""

from __future__ import annotations

from typing import Any

from reports import formatting as f
from reports import labels, messages


def _seconds(value: Any) -> str:
    return f.DASH if value is None else f.seconds(value)


def _share(value: Any) -> str:
    return f.DASH if value is None else f.percent(value, 0)


def terms(out: dict[str, Any]) -> list[dict[str, str]]:
    """One row per term: label, measured (s and share of the step), model (s and share), ratio."""
    return [
        {
            "label": labels.diagnosis_term(t["term"]),
            "measured": _seconds(t["measured_s"]),
            "measured_share": _share(t["measured_share"]),
            "model": _seconds(t["model_s"]),
            "model_share": _share(t["model_share"]),
            "ratio": f.DASH if t["ratio"] is None else f"{f.number(t['ratio'], 2)}×",
        }
        for t in out["terms"]
    ]


def findings(out: dict[str, Any]) -> list[dict[str, str]]:
    return [messages.warning(item, "USD") for item in out["findings"]]


def summary(out: dict[str, Any]) -> dict[str, str]:
    run, model = out["run"], out["model"]
    return {
        "model": str(run["model"]),
        "accelerator": str(run["accelerator"]),
        "cards": f.count(run["cards"]),
        "measured_step": f.seconds(run["measured"]["step_time_s"]),
        "model_step": f.seconds(model["step_time_s"]),
        "ratio": f"{f.number(model['step_ratio'], 2)}×",
        "layout": ", ".join(f"{k.upper()} {model['layout'][k]}" for k in ("tp", "pp", "dp", "ep", "cp")),
    }
