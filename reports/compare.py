"""Two to four reports side by side: the same rows for each, differences flagged. Pure functions of
the stored scenarios and results (no database); the view finds the reports by share token."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext_lazy

from estimator import catalog
from estimator.contract.readings import given_mfu_step_s

from . import formatting as f
from . import goodput, working
from .stack_labels import stack_name
from .summary import _num, currency, dig

MAX_REPORTS = 4
TOKEN = re.compile(r"(?:/r/)?([A-Za-z0-9_-]{8,64})/?(?:[?#].*)?$")

# (key, label, where: "scenario", "result" or "derived" (DERIVED below), path, kind)
ROWS = [
    ("model", gettext_lazy("Model"), "scenario", "model.preset", "text"),
    ("accelerator", gettext_lazy("Accelerator"), "result", "compute.accelerator", "text"),
    ("server", gettext_lazy("Server or supernode"), "derived", "server", "text"),
    ("layout", gettext_lazy("Parallel layout"), "derived", "layout", "text"),
    ("stack", gettext_lazy("Software stack"), "derived", "stack", "text"),
    ("tokens", gettext_lazy("Training tokens"), "scenario", "training.tokens", "big"),
    ("cards", gettext_lazy("Cards"), "result", "compute.cards", "count"),
    ("servers", gettext_lazy("Servers"), "result", "compute.nodes", "count"),
    ("days_with_failures", gettext_lazy("Days with failures"), "derived", "days_with_failures", "days"),
    ("days", gettext_lazy("Days without failures"), "result", "compute.wall_clock_days", "days"),
    (
        "ettr",
        gettext_lazy("Effective training time (ETTR)"),
        "result",
        "goodput.effective_training_time_ratio",
        "percent",
    ),
    (
        "confidence",
        gettext_lazy("Chance of meeting the deadline (sized for)"),
        "result",
        "compute.deadline_confidence",
        "percent",
    ),
    (
        "miss",
        gettext_lazy("Probability of missing the deadline"),
        "result",
        "compute.deadline_miss_probability",
        "percent",
    ),
    ("mfu", gettext_lazy("MFU"), "result", "compute.mfu", "percent"),
    ("capex", gettext_lazy("Cluster cost"), "result", "cost.capex.total", "money"),
    ("budget", gettext_lazy("Budget"), "result", "budget.budget", "money"),
    ("over_by", gettext_lazy("Over budget by"), "result", "budget.over_by", "money"),
    ("run_owned", gettext_lazy("Run cost, owned"), "result", "cost.run.owned", "money"),
    ("run_cloud", gettext_lazy("Run cost, cloud"), "result", "cost.run.cloud", "money"),
    ("power", gettext_lazy("Facility power"), "result", "power.facility_w", "watts"),
    ("energy", gettext_lazy("Energy"), "result", "power.energy_wh", "watt_hours"),
    ("step_time", gettext_lazy("Step time"), "derived", "step_time", "seconds"),
    ("memory", gettext_lazy("Memory per card"), "result", "memory.per_card_bytes.total", "bytes"),
    ("switches", gettext_lazy("Scale-out switches"), "result", "network.total_switches", "count"),
    (
        "scaleup_switches",
        gettext_lazy("Scale-up switches (supernode plane)"),
        "result",
        "scaleup.totals.rack_switches",
        "count",
    ),
    (
        "scaleup_chips",
        gettext_lazy("Scale-up switch chips in the nodes"),
        "result",
        "scaleup.totals.node_switch_chips",
        "count",
    ),
    (
        "vpc_switches",
        gettext_lazy("VPC switches (supernodes)"),
        "result",
        "scaleup.totals.vpc_leaves",
        "count",
    ),
]
# The unit of each kind, for a spreadsheet's header (the page's text carries its unit)
UNITS = {
    "days": gettext_lazy("days"),
    "percent": "%",
    "watts": "W",
    "watt_hours": "Wh",
    "seconds": "s",
    "bytes": "B",
    "count": "",
    "big": gettext_lazy("tokens"),
    "text": "",
}
RELATIVE_TOLERANCE = 0.005  # numbers within 0.5 % of the first report count as the same


def token_of(text: str) -> str | None:
    """A share token from a token or a pasted share link ('https://…/zh-hans/r/TOKEN/')."""
    match = TOKEN.search((text or "").strip())
    return match.group(1) if match else None


def _differs(values: list[Any]) -> bool:
    nums = [n for n in (_num(v) for v in values) if n is not None]
    if len(nums) == len(values) and nums:
        first = nums[0]
        scale = max(abs(first), 1e-12)
        return any(abs(n - first) / scale > RELATIVE_TOLERANCE for n in nums[1:])
    return any(v != values[0] for v in values[1:])


def rows(reports: list[dict]) -> list[dict]:
    """[{key, label, kind, raw: [...], text: [...], differs}] for the rows any report has; money in
    each report's own currency."""
    out = []
    for key, label, where, path, kind in ROWS:
        raw = [DERIVED[path](r) if where == "derived" else dig(r[where], path) for r in reports]
        if all(v is None for v in raw):
            continue
        text = []
        for r, v in zip(reports, raw, strict=True):
            if kind == "text":
                text.append(f.DASH if v is None else str(v))
            else:
                text.append(f.by_kind(v, kind, currency(r["result"])))
        out.append(
            {
                "key": key,
                "label": str(label),
                "unit": unit(kind, reports),
                "kind": kind,
                "raw": raw,
                "text": text,
                "differs": _differs(raw),
            }
        )
    return out


def unit(kind: str, reports: list[dict]) -> str:
    """The unit of a row's raw values: a money row's currency when all reports share one."""
    if kind == "money":
        codes = set(currencies(reports))
        return codes.pop() if len(codes) == 1 else str(gettext_lazy("each report's currency"))
    return str(UNITS.get(kind, ""))


def _server(report: dict) -> str | None:
    """The supernode bought whole, else the server (its catalog name)."""
    unit_ = dig(report["result"], "scaleup.unit") or {}
    if isinstance(unit_, dict) and unit_.get("name") and not unit_.get("degenerate"):
        return str(unit_["name"])
    server = dig(report["scenario"], "hardware.server")
    if isinstance(server, dict):
        return str(server.get("name") or "")
    try:
        return catalog.server(str(server)).name if server else None
    except KeyError:
        return str(server)


def _layout(report: dict) -> str | None:
    p = report["result"].get("parallelism")
    return working.layout_name(p) if isinstance(p, dict) else None


def _stack(report: dict) -> str | None:
    """The software stack the step time assumes (the result's stack section, else its assumption)."""
    stack = report["result"].get("stack")
    if isinstance(stack, dict) and stack.get("id"):
        return stack_name(str(stack["id"]))  # the profile's name in the reader's language
    if isinstance(stack, dict) and stack.get("name"):
        return str(stack["name"])
    for row in report["result"].get("assumptions") or []:
        if isinstance(row, dict) and str(row.get("code", "")).startswith("assumption.stack"):
            return str(row.get("value"))
    return dig(report["scenario"], "training.stack")


def _days_with_failures(report: dict) -> float | None:
    return goodput.days_with_failures(report["result"])  # the median, as on the report's headline


def _step_time(report: dict) -> float | None:
    """The step the plan runs: a given MFU's (readings.given_mfu_step_s, the one its days count),
    else the layout's predicted step."""
    given = given_mfu_step_s(report["result"])
    return given if given is not None else dig(report["result"], "parallelism.step_time_s")


DERIVED = {
    "server": _server,
    "layout": _layout,
    "stack": _stack,
    "days_with_failures": _days_with_failures,
    "step_time": _step_time,
}


def currencies(reports: list[dict]) -> list[str]:
    return [currency(r["result"]) for r in reports]
