"""The message catalogue: the core's codes + params rendered in the reader's language.

The core (estimator/) returns every sentence as a `code` with `params` and an English default
(`message`, `suggestion`, `reason`). Here each code has an English msgid marked for gettext
(translations in locale/*/LC_MESSAGES/django.po) and each parameter a formatting kind (Babel, see
reports.formatting). A code this catalogue does not know yet falls back to the core's English
sentence, so a new warning from the core shows up (in English) before it is translated. The words
themselves are in reports.message_texts (MESSAGES) and reports.plural_texts (PLURALS); this module renders them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from estimator import catalog
from estimator.errors import FieldError
from estimator.plan import batch_reasons

from . import field_messages, labels
from . import formatting as f
from .message_texts import MESSAGES, ROW_REASONS
from .plural_texts import PLURALS

SEVERITIES = {
    "error": gettext_lazy("error"),
    "warning": gettext_lazy("warning"),
    "info": gettext_lazy("info"),
}

# parameter name -> formatting kind (reports.formatting); names not listed are shown as they are
# The layout rules a refused plan names (estimator.plan.refusal.RULES, the English defaults).
RULES = {
    "tp-crosses-scaleup-domain": gettext_noop("TP must stay inside one scale-up (NVLink/HCCS) domain"),
    "tp-not-dividing-heads": gettext_noop("TP must divide the attention heads and the KV heads"),
    "sequence-parallel-needs-tp": gettext_noop("sequence parallelism needs TP > 1"),
    "cp-not-dividing-sequence": gettext_noop(
        "the sequence length must split into 2 x CP equal chunks (CP with the causal load balance)"
    ),
    "sequence-parallel-not-dividing-sequence": gettext_noop(
        "with sequence parallelism TP must divide the tokens of a CP rank (sequence length / CP)"
    ),
    "pp-not-dividing-layers": gettext_noop("PP x virtual stages cannot exceed the layers"),
    "virtual-stages-need-pp": gettext_noop("interleaved (virtual) stages need PP > 1"),
    "stage-layers-not-splitting": gettext_noop(
        "the pipeline devices without a fixed first/last layer count must share the other layers evenly"
    ),
    "virtual-stages-not-dividing-layers": gettext_noop(
        "PP x virtual stages must split the layers evenly (at most 2 short), or fix parallelism.first_stage_layers / last_stage_layers"
    ),
    "dp-not-integral": gettext_noop("TP x PP x CP must divide the cards"),
    "dp-not-matching-cards": gettext_noop("TP x PP x CP x DP must equal the cards"),
    "ep-without-experts": gettext_noop("expert parallelism needs a mixture-of-experts model"),
    "ep-not-dividing-experts": gettext_noop("EP must divide the experts"),
    "expert-tp-crosses-scaleup-domain": gettext_noop(
        "expert TP must stay inside one scale-up (NVLink/HCCS) domain"
    ),
    "ep-not-folding-into-tp-cp-dp": gettext_noop(
        "EP x expert TP must divide TP x CP x DP (the ranks the MoE layers regroup)"
    ),
    "batch-off-by-over-25pct": gettext_noop(
        "the global batch must split into whole micro-batches per DP rank (within 25 %)"
    ),
    "micro-batches-not-multiple-of-pp": gettext_noop(
        "with interleaving the micro-batches must be a multiple of PP"
    ),
    "moe-tp-without-sequence-parallel": gettext_noop(
        "a MoE model with TP > 1 needs sequence parallelism on this stack (Megatron-Core, MindSpeed)"
    ),
    "zero-stage-not-run-by-stack": gettext_noop(
        "the software stack does not run this ZeRO stage (MindSpeed-LLM: the distributed optimizer, ZeRO-1, at most)"
    ),
    "zero-stage-incompatible-with-pp": gettext_noop(
        "ZeRO-2/3 does not combine with pipeline parallelism on this stack"
    ),
    "partial-recompute-redundant": gettext_noop("partial recompute must recompute some but not all layers"),
    "out-of-memory": gettext_noop("the layout must fit in HBM"),
}

PARAM_KINDS = {
    "limit": "bound",
    "detail": "json_detail",
    "days_saved": "days",
    "causes": "causes",
    "cost": "money",
    "lever": "lever",
    "threshold": "percent0",
    "measured_s": "seconds",
    "model_s": "seconds",
    "times_model": "times",
    "params": "big",
    "fixed": "layout",
    "reasons": "rules",
    "suggestions": "layouts",
    "total_bytes": "bytes",
    "hbm_bytes": "bytes",
    "bubble": "percent0",
    "layout_bubble": "percent",  # the chosen layout's, as its table states it (0.9%)
    "bubble_low": "percent0",
    "slower_by": "percent0",
    "sequences": "count",
    "asked_sequences": "count",
    "asked_tokens": "big",
    "batch_ratio": "change",
    "micro_batch_size": "count",
    "bubble_high": "percent0",
    "share": "percent0",
    "lowest_share": "percent",
    "highest_share": "percent0",
    "links": "percent0",
    "mfu": "percent0",
    "causal_mfu": "percent0",
    "below": "count",
    "whole": "count",
    "whole_mfu": "percent0",
    "whole_days": "days",
    "above": "count",
    "ratio": "ratio",
    "days": "days",
    "target_days": "days",
    "confidence": "percent0",
    "probability": "percent",
    "capex": "money",
    "cloud": "money",
    "budget": "money",
    "largest": "term",
    "tp": "count",
    "pp": "count",
    "dp": "count",
    "ep": "count",
    "domain": "count",
    "nodes": "count",
    "cards": "count",
    "max_cards": "count",
    "sizings": "count",
    "max_sizings": "count",
    "most_cards": "count",
    "heads": "count",
    "layers": "count",
    "experts": "count",
    "product": "count",
    "tokens": "big",
    "low": "count",
    "high": "count",
    "micro_batches": "count",
    "faster_cards": "count",  # estimator.plan.fewer_cards
    "faster_days": "days",
    "faster_micro_batches": "count",
    "faster_dp": "count",
    "faster_pp": "count",
    "global_batch_tokens": "big",
    "batch_low_tokens": "big",  # advice.bubble-over-20pct.global-batch
    "batch_high_tokens": "big",
    "reference_batch_tokens": "big",
    "batch_days": "days",
    "total_gb": "gb",
    "hbm_gb": "gb",
    "overflow_gb": "gb",
    "timed": "count",
    "feasible": "count",
    "model_states_gb": "gb",
    "largest_gb": "gb",
    "largest_term": "memory_term",
    "speedup": "times",
    "chip_factor": "times",
    "domain_factor": "times",
    "supernode_step_time_s": "seconds",
    "nodes_step_time_s": "seconds",
    "node_tp": "count",
    "node_ep": "count",
    "node_pp": "count",
    "capex_ratio": "change",
    "power_ratio": "change",
    "step_time_s": "seconds",
    "node_step_time_s": "seconds",
    "supernodes": "count",
    "supernode": "supernode",
    "idle_cards": "count",
    "cards_per_supernode": "count",
    "domain_cards": "count",
    "node_cards": "count",
    "nearest_layout": "layout",
    "precision": "upper",
    "values": "count",  # a sweep axis's values and scenarios (estimator.contract.sweep)
    "axes": "count",
    "max_axes": "count",
    "max_values": "count",
    "scenarios": "count",
    "max_scenarios": "count",
    "other_axis": "axis",
    "choices": "choices",
    "predicted": "big",
    "every_s": "seconds",
    "cost_s": "seconds",
}


def _param(name: str, value: Any, currency: str) -> str:
    kind = PARAM_KINDS.get(name)
    if value is None and kind != "layout":
        return f.DASH
    if kind == "percent0":
        return f.percent(value, 0)
    if kind == "money":
        return f.money(value, currency)
    if kind == "term":
        return labels.step_term(value)
    if kind == "causes":
        return labels.failure_causes(value)
    if kind == "lever":
        return labels.goodput_lever(value)
    if kind == "json_detail":
        return field_messages.json_detail(value)
    if kind == "memory_term":
        return labels.memory_term(value)
    if kind == "supernode":  # a catalog id: its product name, in every language (as the core's default)
        return supernode_name(value)
    if kind == "times":
        return f"{f.number(value, 2)}×"
    if kind == "change":
        text = f.percent(value - 1, 0)
        return text if value < 1 else f"+{text}"
    if kind == "axis":  # a scenario field a sweep axis names, in words (the web text names no path)
        return labels.axis(str(value))
    if kind == "upper":
        return str(value).upper()  # bf16 -> BF16, as the glossary writes number formats
    if kind == "gb":
        return f.number(value, 1)
    if kind == "layout":
        if not isinstance(value, dict) or not value:
            return str(_("none on these cards"))
        return ", ".join(
            f"{k.upper() if len(k) <= 2 else k} {v}" for k, v in value.items() if k != "predicted_mfu"
        )
    if kind == "layouts":  # plan.refusal's suggestions
        shown = [_param("fixed", v, currency) for v in value or [] if isinstance(v, dict)]
        return "; ".join(shown) if shown else str(_("none on these cards"))
    if kind == "choices":  # the values a field accepts, as typed
        return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if kind == "rules":  # layout rule codes (layout.enumeration.REASONS) in words
        return "; ".join(str(_(RULES[c])) if c in RULES else str(c) for c in value or [])
    if kind:
        return f.by_kind(value, kind, currency)
    return str(value)


# Parameters renamed in the core, read under their old name from results stored before (new: old):
# the chosen layout's bubble was params.bubble (1F1B's formula) before engine 2.77.
RENAMED = {"layout_bubble": "bubble"}


def known(code: str) -> bool:
    return code in MESSAGES or code in PLURALS


def render(code: str | None, params: dict | None, default: str = "", currency: str = "USD") -> str:
    """The sentence of `code` in the active language with its params formatted; the core's English
    `default` when the code is unknown (or a param is missing)."""
    if not code or not known(code):
        return default
    params = params if isinstance(params, dict) else {}
    params = {**{new: params[old] for new, old in RENAMED.items() if old in params}, **params}
    values = {k: _param(k, v, params.get("currency") or currency) for k, v in params.items()}
    try:
        if code in PLURALS:
            counted, sentence = PLURALS[code]
            return str(sentence % {**values, "n": f.plural_n(values[counted])})
        return _(MESSAGES[code]) % values if "%(" in MESSAGES[code] else _(MESSAGES[code]).replace("%%", "%")
    except (KeyError, TypeError, ValueError):
        return default


def supernode_name(supernode_id: Any) -> str:
    """The catalog supernode's name ("Huawei CloudMatrix 384 (Atlas 900 A3 SuperPoD): 384 Ascend
    910C"), the id itself where the catalog has none (a report stored before it was renamed)."""
    try:
        return catalog.supernode(str(supernode_id)).name
    except KeyError:
        return str(supernode_id)


SAME_MESSAGE = {"supernode-does-not-pay": "supernode-pays"}


def advice(item: dict, currency: str) -> dict:
    """An advice entry of the result -> {code, severity, severity_label, message, suggestion}."""
    if not isinstance(item, dict):
        return {"code": "", "severity": "", "severity_label": "", "message": str(item), "suggestion": ""}
    code, params = item.get("code"), item.get("params") or {}
    suggestion = item.get("suggestion_code") or code
    if suggestion == code:
        suggestion = f"{code}.suggestion"
    severity = item.get("severity") or ""
    return {
        "code": code or "",
        "severity": severity,
        "severity_label": str(SEVERITIES.get(str(severity), severity)),
        "message": render(
            item.get("message_code") or SAME_MESSAGE.get(str(code), code),
            params,
            item.get("message", ""),
            currency,
        ),
        "suggestion": render(suggestion, params, item.get("suggestion", ""), currency),
    }


def warning(item: Any, currency: str) -> dict:
    if not isinstance(item, dict):
        return {"code": "", "severity": "", "severity_label": "", "message": str(item)}
    out = advice(item, currency)
    out.pop("suggestion")
    return out


# starting-configuration values worded from their params (the core's text is English)
WORDED_VALUES = {
    "expert_parallel": gettext_noop("EP %(ep)s × expert TP %(expert_tp)s (expert DP %(expert_dp)s)"),
    "pipeline_split": gettext_noop("first %(first)s / last %(last)s layers (others %(middle)s)"),
}


def layout_value(p: dict) -> str:
    """The starting configuration's layout row (its params: tp, pp, virtual_stages, dp, ep, cp,
    micro_batch_size, sequence_parallel) in the reader's language."""
    pp = f"PP {p.get('pp')}"
    if (p.get("virtual_stages") or 1) > 1:
        pp += " (" + _("%(v)s virtual stages per rank, interleaved 1F1B") % {"v": p["virtual_stages"]} + ")"
    parts = [f"TP {p.get('tp')}", pp, f"DP {p.get('dp')}"]
    parts += [f"{k.upper()} {p[k]}" for k in ("ep", "cp") if (p.get(k) or 1) > 1]
    text = " × ".join(parts)
    if p.get("micro_batch_size") is not None:
        text += ", " + _("micro-batch %(n)s") % {"n": p["micro_batch_size"]}
    if p.get("sequence_parallel"):
        text += ", " + _("sequence parallel")
    return text


def setting(row: Any, currency: str) -> dict:
    """A starting-configuration row: the value in words where it has a value_code, the reason translated."""
    if not isinstance(row, dict):
        return {"setting": "", "value": "", "reason": str(row)}
    value = row.get("value")
    key = str(row.get("setting", ""))
    if row.get("value_code"):
        value = render(row["value_code"], {}, str(value), currency)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        value = f.count(value)
    elif key == "layout" and isinstance(row.get("params"), dict) and row["params"].get("tp"):
        value = layout_value(row["params"])
    elif key in WORDED_VALUES and isinstance(row.get("params"), dict):
        with contextlib.suppress(KeyError, TypeError, ValueError):  # other params: the core's text
            value = _(WORDED_VALUES[key]) % row["params"]
    elif key in labels.SETTINGS:
        value = labels.setting_value(value)
    return {
        "setting": labels.setting(key),
        "typed": key not in labels.SETTINGS,  # an environment variable: name and value as typed
        "value": value,
        "reason": render(row.get("code"), row.get("params"), row.get("reason", ""), currency),
    }


UNITS = {
    "years": gettext_lazy("years"),
    "s": gettext_lazy("seconds"),
    "per card-hour": gettext_lazy("per card-hour"),
    "per node-hour": gettext_lazy("per node-hour"),
    "per switch-hour": gettext_lazy("per switch-hour"),
    "tokens": gettext_lazy("tokens"),
}


def assumption(row: Any, currency: str) -> dict:
    if not isinstance(row, dict):
        return {"name": str(row), "value": "", "value_text": "", "unit": "", "source": ""}
    unit = row.get("unit", "")
    value = row.get("value")
    shown = {"FLOP/s": f.flop_per_s, "B": f.bytes_, "W": f.watts}.get(unit)
    return {
        "name": render(row.get("code"), row.get("params"), row.get("name", ""), currency),
        "value": value,
        "value_text": shown(value) if shown else f.auto(value),
        "unit": "" if shown else str(UNITS.get(unit, unit)),
        "source": render(row.get("source_code"), {}, row.get("source", ""), currency),
        "cited": not known(str(row.get("source_code") or "")),  # a publication, quoted as published
    }


# --- the core's field errors (reports.field_messages) ----------------------------------------
def scenario_error(err: Any, shown: Callable[[Any], str] = repr) -> str:
    """A core FieldError in the reader's language: a refusal by its code and params (plan.refusal),
    any other by its sentence (field_error). A sweep axis value's refusal (params `axis_value`) starts
    with that value, `shown` as the form asked it (the core's repr by default: 0.5, 'h100-sxm')."""
    code = getattr(err, "code", "")
    if not (code and known(code)):
        return field_error(err.message)
    params = getattr(err, "params", None) or {}
    text = render(code, params, err.message)
    if "axis_value" not in params or text == err.message:  # the core's default starts with it
        return text
    return _("%(value)s: %(message)s") % {"value": shown(params["axis_value"]), "message": text}


def field_error(message: str) -> str:
    """One of the core's field-error sentences that came without a code (a sweep row's) in the
    reader's language, by the code it maps onto; other sentences are returned as they are."""
    for pattern, code in field_messages.SENTENCES:
        match = pattern.match(message or "")
        if match:
            params: dict[str, Any] = {}
            if match.groups():
                params["limit"] = match.group(1)
                with contextlib.suppress(ValueError):
                    params["limit"] = float(match.group(1))
            return render(code, params, message)
    return message


# --- sweep rows without a plan (estimator.plan.batch_reasons) ------------------------------------
def row_reason(code: str | None, default: str = "", errors: Any = None) -> str:
    """A sweep row's reason in the reader's language: a group the core refuses as a whole by its
    FieldErrors (`errors`, batch_reasons.group_errors: group_refusal); else by its code (ROW_REASONS);
    a row stored before the codes by the code of its English sentence (batch_reasons.code_of); the
    core's English `default` for a code without a row sentence and a group stored without its errors."""
    if errors:
        refusal = group_refusal(errors)
        if refusal:
            return refusal
    code = code or batch_reasons.code_of(default)
    return str(_(ROW_REASONS[code])) if code in ROW_REASONS else default


def group_refusal(errors: Any) -> str:
    """A refused group's FieldErrors (each {field, message, code, params}) worded as the single
    plan's page words each (scenario_error), after the field it is about (labels.axis; as the
    estimate form words an error it cannot put beside one of its fields); "" where `errors` is
    not such a list."""
    if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        return ""
    parts = []
    for e in errors:
        params = e.get("params") if isinstance(e.get("params"), dict) else {}
        err = FieldError(
            str(e.get("field") or ""), str(e.get("message") or ""), str(e.get("code") or ""), params
        )
        field = labels.axis(err.field) if err.field else _("scenario")
        parts.append(f"{field}: {scenario_error(err)}")
    return "; ".join(parts)
