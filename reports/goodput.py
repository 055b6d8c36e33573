"""result.goodput in the reader's language: the headline's why, the working table, the levers and the
chart of where the time goes. Pure functions of the stored result (older results without the
section render nothing)."""

from __future__ import annotations

import plotly.graph_objects as go
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from estimator.dotted import get_path as dig

from . import formatting as f
from . import labels

MEDIAN = "goodput.wall_clock_days_p50"
MEAN = "goodput.wall_clock_days"

# (label, path, kind) of the working table "Failures, checkpoints and restarts"
TABLE = [
    # the headline's days with failures: the median of the interruptions' draws, with its P10-P90
    (gettext_lazy("Wall-clock time with failures (median)"), MEDIAN, "days"),
    # a percent sign, not a placeholder: without the flag makemessages marks the translation fuzzy
    # xgettext:no-python-format
    (gettext_lazy("80% likely from"), "goodput.wall_clock_days_p10", "days"),
    # xgettext:no-python-format
    (gettext_lazy("80% likely to"), "goodput.wall_clock_days_p90", "days"),
    # the mean of the same draws (a skewed count can put it above the P90): what the deadline's
    # verdict, the levers and the sizing count (the chance of missing it counts the whole spread)
    (
        gettext_lazy("Wall-clock time with failures (mean, counted by the deadline sizing and the levers)"),
        MEAN,
        "days",
    ),
    (gettext_lazy("Effective training time (ETTR)"), "goodput.effective_training_time_ratio", "percent"),
    (gettext_lazy("Expected interruptions"), "goodput.expected_interruptions", "count"),
    (gettext_lazy("of which unexpected"), "goodput.expected_unexpected_interruptions", "count"),
    (
        gettext_lazy("Mean time between interruptions (h)"),
        "goodput.mean_time_between_interruptions_h",
        "auto",
    ),
    (gettext_lazy("Checkpoint interval"), "goodput.checkpoint_interval_s", "seconds"),
    (gettext_lazy("Checkpoint write"), "goodput.checkpoint_write_s", "seconds"),
    (gettext_lazy("Training stalled per checkpoint"), "goodput.checkpoint_stall_s", "seconds"),
    (gettext_lazy("Restart (detection, rescheduling, reload)"), "goodput.restart_s", "seconds"),
    (gettext_lazy("Time lost to checkpoints"), "goodput.lost_days.checkpoints", "days"),
    (gettext_lazy("Time lost to re-doing work"), "goodput.lost_days.rework", "days"),
    (gettext_lazy("Time lost to restarts"), "goodput.lost_days.restarts", "days"),
    (gettext_lazy("Time lost to planned maintenance"), "goodput.lost_days.planned", "days"),
    (gettext_lazy("Hot standby nodes"), "goodput.spares.nodes", "count"),
    (
        # xgettext:no-python-format
        gettext_lazy("Hot standby nodes that would cover 95% of node failures"),
        "goodput.spares.suggested",
        "count",
    ),
]


def days_with_failures(result: dict) -> float | None:
    """The headline's days with failures: the median (goodput.wall_clock_days_p50); a result stored
    before the engine gave the median (engine before 2.41.0) shows the mean it had."""
    value = dig(result, MEDIAN)
    return value if value is not None else dig(result, MEAN)


def why(result: dict) -> str:
    """One line under the headline's days with failures: compute days plus what interruptions cost,
    the median with its P10-P90, the failure spread at the planned MFU (the mean, with the skew note,
    for a result without the median)."""
    g = result.get("goodput") or {}
    if not g:
        return ""
    if not g.get("failures_counted"):
        return _("Failures are not counted in this plan (reliability.failures is false).")
    n = f.count(g.get("expected_interruptions"))
    values = {
        "days": f.days(days_with_failures(result)),
        "compute": f.days(g.get("compute_days")),
        "lost": f.days(sum((g.get("lost_days") or {}).values())),
        "n": n,
        "mtbi": f.number(g.get("mean_time_between_interruptions_h"), 1),
        "interval": f.seconds(g.get("checkpoint_interval_s")),
        "mode": labels.checkpoint_mode(str(g.get("checkpoint_mode"))),
        "restart": f.seconds(g.get("restart_s")),
        "ettr": f.percent(g.get("effective_training_time_ratio")),
        "low": f.days(g.get("wall_clock_days_p10")),
        "high": f.days(g.get("wall_clock_days_p90")),
    }
    if g.get("wall_clock_days_p50") is not None:
        return (
            ngettext(
                "%(compute)s of computing, plus interruptions (%(n)s expected, one every %(mtbi)s h), "
                "checkpoints every %(interval)s (%(mode)s) and restarts of %(restart)s; ETTR %(ettr)s. "
                "Median %(days)s; 80%% likely between %(low)s and %(high)s at the planned MFU.",
                "%(compute)s of computing, plus interruptions (%(n)s expected, one every %(mtbi)s h), "
                "checkpoints every %(interval)s (%(mode)s) and restarts of %(restart)s; ETTR %(ettr)s. "
                "Median %(days)s; 80%% likely between %(low)s and %(high)s at the planned MFU.",
                f.plural_n(n),
            )
            % values
        )
    return ngettext(
        "%(compute)s of computing, plus %(lost)s lost to %(n)s interruption (one every %(mtbi)s h), "
        "checkpoints every %(interval)s (%(mode)s) and restarts of %(restart)s; ETTR %(ettr)s. "
        "Mean %(days)s; 80%% likely between %(low)s and %(high)s.",
        "%(compute)s of computing, plus %(lost)s lost to %(n)s interruptions (one every %(mtbi)s h), "
        "checkpoints every %(interval)s (%(mode)s) and restarts of %(restart)s; ETTR %(ettr)s. "
        "Mean %(days)s; 80%% likely between %(low)s and %(high)s.",
        f.plural_n(n),
    ) % values + _skew(g)


def _skew(g: dict) -> str:
    """Why the mean (the headline, what the deadline and the costs are computed on) can read above
    the P90: the interruptions' count is right-skewed, a few runs with many more of them pull the
    mean up while most runs finish sooner. "" when the mean lies inside the P10-P90."""
    mean, high = g.get("wall_clock_days"), g.get("wall_clock_days_p90")
    if not isinstance(mean, int | float) or not isinstance(high, int | float) or mean <= high:
        return ""
    return " " + _(
        "The mean lies above the 80%% range: a few runs with many more interruptions pull it up, "
        "so most runs finish sooner than %(days)s."
    ) % {"days": f.days(mean)}


def levers(result: dict, currency: str) -> list[dict]:
    """[{lever, days_saved, days, cost, pays}] as text, most days saved first (the stored order)."""
    out = []
    for lv in dig(result, "goodput.levers") or []:
        if not isinstance(lv, dict):
            continue
        cost = lv.get("cost")
        out.append(
            {
                "lever": labels.goodput_lever(str(lv.get("lever"))),
                "days_saved": f.days(lv.get("days_saved")),
                "days": f.days(lv.get("wall_clock_days")),
                "cost": f.money(cost, currency) if cost is not None else _("no hardware"),
                "pays": _("yes") if lv.get("pays") else _("no"),
            }
        )
    return out


def figure(result: dict) -> go.Figure | None:
    """Where the time goes: computing, then what checkpoints, re-done work, restarts and planned
    maintenance add (days, one stacked bar)."""
    g = result.get("goodput") or {}
    lost = g.get("lost_days") or {}
    parts = [
        (_("Computing"), g.get("compute_days")),
        (_("Checkpoints"), lost.get("checkpoints")),
        (_("Re-done work"), lost.get("rework")),
        (_("Restarts"), lost.get("restarts")),
        (_("Planned maintenance"), lost.get("planned")),
    ]
    if not g or not isinstance(g.get("compute_days"), int | float):
        return None
    colors = ["#1f5f8b", "#e07b39", "#c44e52", "#8172b2", "#937860"]
    fig = go.Figure()
    for (name, value), color in zip(parts, colors, strict=True):
        if not isinstance(value, int | float) or value <= 0:
            continue
        fig.add_bar(
            y=[_("Run")],
            x=[value],
            name=name,
            orientation="h",
            marker_color=color,
            text=[f.days(value)],
            textposition="inside",
            hovertemplate="%{fullData.name}: %{x:.3g}<extra></extra>",
        )
    # the parts are means (their sum is the mean, not the headline's median): the title says so
    title = _("Where the time goes with failures, on average")
    # assigned whole: update_layout sends each property through Plotly's change batching (issue 27)
    fig.layout = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "barmode": "stack",
        "height": 260,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "legend": {"orientation": "h", "y": -0.45},
        "xaxis": {"title": {"text": _("days")}},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
    }
    return fig
