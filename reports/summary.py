"""What a report says first: headline numbers with one line of "why", the recompute diff, and the
flat rows of the CSV download. Pure functions of the stored scenario and result (no database).

Sections may be missing (a core without the bill of materials): every lookup tolerates absence.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from estimator.dotted import get_path as dig
from estimator.plan.goodput_section import held_days
from estimator.plan.mfu_range import ASSUMED_MFU_SPREAD

from . import formatting as f
from . import goodput, labels


def _num(value: Any) -> float | None:
    if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


# key, label, path into the result, formatting kind
HEADLINE = [
    ("cards", gettext_lazy("Cards"), "compute.cards", "count"),
    ("servers", gettext_lazy("Servers"), "compute.nodes", "count"),
    # the median with failures (reports.goodput.days_with_failures: the mean of an older result)
    ("days_with_failures", gettext_lazy("Days with failures"), goodput.MEDIAN, "days"),
    ("days", gettext_lazy("Days without failures"), "compute.wall_clock_days", "days"),
    ("capex", gettext_lazy("Cluster cost"), "cost.capex.total", "money"),
    ("power", gettext_lazy("Facility power"), "power.facility_w", "watts"),
]

# The numbers the recompute diff compares (headline first, then the working).
DIFF_FIELDS = [
    *HEADLINE,
    ("mfu", gettext_lazy("MFU"), "compute.mfu", "percent"),
    ("step_time", gettext_lazy("Step time"), "parallelism.step_time_s", "seconds"),
    ("memory", gettext_lazy("Memory per card"), "memory.per_card_bytes.total", "bytes"),
    ("run_owned", gettext_lazy("Run cost, owned"), "cost.run.owned", "money"),
    ("run_cloud", gettext_lazy("Run cost, cloud"), "cost.run.cloud", "money"),
    ("switches", gettext_lazy("Switches"), "network.total_switches", "count"),
    (
        "ettr",
        gettext_lazy("Effective training time (ETTR)"),
        "goodput.effective_training_time_ratio",
        "percent",
    ),
    ("energy", gettext_lazy("Energy"), "power.energy_wh", "watt_hours"),
]


def currency(result: dict) -> str:
    return dig(result, "cost.currency") or "USD"


def layout_label(result: dict) -> str:
    """TP · PP · [CP ·] DP · EP of the chosen layout: TP·PP·CP·DP is the card count, so context
    parallelism is named wherever it is used (CP > 1)."""
    par = result.get("parallelism") or {}
    keys = ("tp", "pp", "cp", "dp", "ep") if (par.get("cp") or 1) > 1 else ("tp", "pp", "dp", "ep")
    parts = [f"{k.upper()}={par[k]}" for k in keys if isinstance(par.get(k), int)]
    return " · ".join(parts)


def _why(key: str, scenario: dict, result: dict) -> str:
    cur = currency(result)
    compute = result.get("compute") or {}
    accel = dig(scenario, "hardware.accelerator")
    accel_name = accel.get("name", "custom") if isinstance(accel, dict) else accel
    if key == "cards":
        if dig(scenario, "cluster.budget") is not None:
            return _(
                "The most cards whose cluster cost fits the budget of %(budget)s; laid out as %(layout)s."
            ) % {
                "budget": f.money(dig(scenario, "cluster.budget"), cur),
                "layout": layout_label(result) or "—",
            }
        if dig(scenario, "cluster.cards") is not None:
            return _("As given in the scenario; laid out as %(layout)s.") % {
                "layout": layout_label(result) or "—"
            }
        confident = confidence_text(compute)
        if confident:
            return confident + " " + _("Laid out as %(layout)s.") % {"layout": layout_label(result) or "—"}
        return _(
            "%(flop)s FLOP of training at %(mfu)s MFU on %(accel)s must finish in %(days)s; "
            "rounded up to whole servers and to the layout %(layout)s."
        ) % {
            "flop": f.flops(compute.get("training_flop")),
            "mfu": f.percent(compute.get("mfu")),
            "accel": accel_name,
            "days": f.days(dig(scenario, "cluster.target_days")),
            "layout": layout_label(result) or "—",
        }
    if key == "servers":
        values = {
            "cards": f.count(compute.get("cards")),
            "per": f.count(dig(scenario, "hardware.cards_per_node") or compute.get("cards_per_node")),
            "server": dig(scenario, "hardware.server"),
        }
        if values["server"]:
            return _("%(cards)s cards ÷ %(per)s cards per server (%(server)s).") % values
        return _("%(cards)s cards ÷ %(per)s cards per server.") % values
    if key == "days":
        text = _("%(tokens)s tokens at %(rate)s tokens/s; %(hours)s card-hours in all.") % {
            "tokens": f.big(dig(scenario, "training.tokens")),
            "rate": f.big(compute.get("tokens_per_s")),
            "hours": f.big(compute.get("accelerator_hours")),
        }
        if _num(compute.get("training_flop_6n")) is not None:  # both counts side by side
            text += " " + _("Compute: %(flop_6n)s FLOP as 6·N·D, %(flop)s with attention (planned).") % {
                "flop_6n": f.flops(compute.get("training_flop_6n")),
                "flop": f.flops(compute.get("training_flop")),
            }
        low, high = dig(result, "uncertainty.days.p10"), dig(result, "uncertainty.days.p90")
        if _num(low) is not None and _num(high) is not None:
            text += " " + _("80%% likely between %(low)s and %(high)s.") % {
                "low": f.days(low),
                "high": f.days(high),
            }
        band = band_text(dig(result, "uncertainty.mfu_band"))
        if band:
            text += " " + band
        miss, target = _num(compute.get("deadline_miss_probability")), _num(compute.get("target_days"))
        if miss is not None and target is not None:
            text += " " + _deadline_risk(miss, target, compute.get("deadline_miss_counts_failures") is True)
        return text
    if key == "days_with_failures":
        return goodput.why(result)
    if key == "capex":
        capex = dig(result, "cost.capex") or {}
        text = _(
            "Compute %(compute)s + network %(network)s + storage %(storage)s. One run: %(owned)s owned, %(cloud)s in the cloud."
        ) % {
            "compute": f.money(capex.get("compute"), cur),
            "network": f.money(capex.get("network"), cur),
            "storage": f.money(capex.get("storage"), cur),
            "owned": f.money(dig(result, "cost.run.owned"), cur),
            "cloud": f.money(dig(result, "cost.run.cloud"), cur),
        }
        text += _held_sentence(result)
        scaleup = _num(capex.get("scaleup"))
        if scaleup:  # supernodes: the scale-up plane is capex of its own (in the total)
            text += " " + _("The supernodes' scale-up plane adds %(scaleup)s.") % {
                "scaleup": f.money(scaleup, cur)
            }
        budget = _num(dig(result, "budget.budget"))
        if budget is not None:  # the budget block's verdict and amount (result.budget, money.budget.status)
            if dig(result, "budget.within"):
                text += " " + _("Within the budget of %(budget)s.") % {"budget": f.money(budget, cur)}
            else:
                text += " " + _("Over the budget of %(budget)s by %(over)s.") % {
                    "budget": f.money(budget, cur),
                    "over": f.money(dig(result, "budget.over_by"), cur),
                }
        return text
    if key == "power":
        return _("IT load %(it)s × PUE %(pue)s; %(energy)s over the run.") % {
            "it": f.watts(dig(result, "power.it_w")),
            "pue": f.auto(dig(scenario, "cost.pue") or dig(result, "power.pue")),
            "energy": f.watt_hours(dig(result, "power.energy_wh")),
        } + _held_sentence(result)
    return ""


def _held_sentence(result: dict) -> str:
    """What the run's cost and energy cover when failures are counted: the mean wall clock with them
    (money.rollup.Sizing.held, stated by the assumption row assumption.held-time); "" otherwise, and
    for a result stored before engine 2.45.0 (its cost covered the computing time alone)."""
    days = held_days(result)
    if days is None or _num(dig(result, "cost.card_hours")) is None:
        return ""
    return " " + _(
        "The run is paid and powered for the %(days)s the cluster is held, failures counted "
        "(%(hours)s card-hours, the mean)."
    ) % {"days": f.days(days), "hours": f.big(dig(result, "cost.card_hours"))}


def _value(result: dict, key: str, path: str) -> Any:
    """The figure a headline or diff row shows: the result's value at `path`, the days with failures
    as reports.goodput words them (the median; the mean of a result stored before it)."""
    return goodput.days_with_failures(result) if key == "days_with_failures" else dig(result, path)


def headline(scenario: dict, result: dict) -> list[dict]:
    """The five numbers a manager reads first, each with its value, display text and why."""
    cur = currency(result)
    items = []
    for key, label, path, kind in HEADLINE:
        value = _value(result, key, path)
        if value is None:
            continue
        items.append(
            {
                "key": key,
                "label": str(label),
                "value": value,
                "kind": kind,
                "text": f.by_kind(value, kind, cur),
                "why": _why(key, scenario, result),
            }
        )
    return items


def diff(old: dict, new: dict) -> list[dict]:
    """Headline and working numbers of two results side by side, with the relative change."""
    rows = []
    for key, label, path, kind in DIFF_FIELDS:
        a, b = _value(old, key, path), _value(new, key, path)
        if a is None and b is None:
            continue
        na, nb = _num(a), _num(b)
        change = (nb - na) / na if na not in (None, 0.0) and nb is not None else None
        rows.append(
            {
                "key": key,
                "label": str(label),
                "before": f.by_kind(a, kind, currency(old)),
                "after": f.by_kind(b, kind, currency(new)),
                "change": change,
                "change_text": f.percent(change) if change is not None else "—",
                "changed": a != b,
            }
        )
    return rows


def flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts and lists -> [("cost.capex.total", 1.2e8), ("warnings.0.code", "..."), ...]."""
    if isinstance(data, dict):
        rows: list[tuple[str, Any]] = []
        for key, value in data.items():
            rows += flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(data, list | tuple):
        rows = []
        for i, value in enumerate(data):
            rows += flatten(value, f"{prefix}.{i}" if prefix else str(i))
        return rows
    return [(prefix, data)]


def table(rows: list[dict], preferred: list[str]) -> tuple[list[str], list[list[Any]]]:
    """List of dicts -> (columns, rows); preferred columns first, then the rest in first-seen order."""
    columns = [c for c in preferred if any(c in r for r in rows)]
    for r in rows:
        for k in r:
            if k not in columns and not isinstance(r[k], dict | list):
                columns.append(k)
    return columns, [[r.get(c) for c in columns] for r in rows]


_WORKLOADS = {
    "dense": gettext_lazy("dense"),
    "moe": gettext_lazy("MoE"),
    "long-context": gettext_lazy("long-context"),
}


def _class_words(key: str) -> str:
    """ "ascend-910b/moe/*" -> "MoE plans on Ascend 910B with any stack" in the reader's language."""
    family, workload, stack = [*key.split("/"), "*", "*", "*"][:3]
    return _("%(workload)s plans on %(chip)s with %(stack)s") % {
        "workload": _WORKLOADS.get(workload, _("all")) if workload != "*" else _("all"),
        "chip": _("any chip") if family == "*" else labels.chip_family(family),
        "stack": _("any stack") if stack == "*" else stack,
    }


def band_text(band: Any) -> str:
    """Where the 80 % band of the days comes from (result.uncertainty.mfu_band), in one sentence."""
    if not isinstance(band, dict):
        return ""
    if band.get("source") == "assumed":
        return _("The band is ±%(spread)s of the MFU you gave: an assumption, not evidence.") % {
            "spread": f.percent(ASSUMED_MFU_SPREAD, 0)
        }
    if band.get("source") == "calibration":
        return _(
            "The band is ±%(width)s around the plan calibrated on your pilot run: the pilot's own spread, "
            "how far the target is from the pilot and what the pilot did not exercise."
        ) % {"width": f.percent(band.get("relative_half_width"), 0)}
    if band.get("source") != "evidence":
        return ""
    rows = f.count(band.get("rows"))
    text = ngettext(
        "The band is earned from %(rows)s published run of %(basis)s, whose measured speed was %(low)s to %(high)s of the prediction.",
        "The band is earned from %(rows)s published runs of %(basis)s, whose measured speed was %(low)s to %(high)s of the prediction.",
        f.plural_n(rows),
    ) % {
        "rows": rows,
        "basis": _class_words(str(band.get("basis", ""))),
        "low": f.percent(band.get("p10_ratio"), 0),
        "high": f.percent(band.get("p90_ratio"), 0),
    }
    widened = band.get("widened_by") or []
    if "few-rows" in widened:
        own = f.count(band.get("own_rows"))
        text += " " + ngettext(
            "This plan's own class has only %(own)s such run, so its spread widens the band.",
            "This plan's own class has only %(own)s such runs, so their spread widens it.",
            f.plural_n(own),
        ) % {"own": own}
    if "peak-range" in widened:
        text += " " + _("Widened because sources disagree on the chip's peak FLOP/s.")
    if "release-spread" in widened:
        text += " " + _(
            "Widened because releases of this software stack differ by more than the band; the profile stands for %(release)s."
        ) % {"release": band.get("release") or _("one release")}
    if "known-gap" in widened:
        text += " " + _(
            "Widened to hold published runs with this plan's kind of layout that the model does not explain yet (they ran slower than predicted)."
        )
    return text


def _deadline_risk(miss: float, target: float, failures: bool) -> str:
    """The chance of missing the deadline; it counts the MFU range and the interruptions together
    where the result says so (compute.deadline_miss_counts_failures, engine 2.46.0 on: a result
    stored before counted the MFU range alone)."""
    values = {"target": f.days(target), "p": f.percent(miss)}  # as the cards card and the working say it
    if failures:
        return (
            _(
                "Chance of missing the %(target)s deadline, counting the MFU range and failures together: %(p)s."
            )
            % values
        )
    return _("Chance of missing the %(target)s deadline: %(p)s.") % values


def confidence_text(compute: dict) -> str:
    """What the cards were sized for where the scenario asked a chance of meeting the deadline
    (compute.deadline_confidence, with compute.meets_target the sizing's verdict: a chance of missing
    of at most 1 - q); "" for a plan sized at the planned MFU or a result without the figures."""
    q, miss = _num(compute.get("deadline_confidence")), _num(compute.get("deadline_miss_probability"))
    target = _num(compute.get("target_days"))
    if q is None or miss is None or target is None:
        return ""
    values = {"q": f.percent(q, 0), "target": f.auto(target), "p": f.percent(miss)}
    if compute.get("meets_target") is False:
        return (
            _(
                "No cluster size reaches a %(q)s chance of meeting the %(target)s-day deadline; "
                "this one has a %(p)s chance of missing it."
            )
            % values
        )
    return (
        _("Sized for a %(q)s chance of meeting the %(target)s-day deadline; %(p)s chance of missing it.")
        % values
    )
