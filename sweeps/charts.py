"""Plotly figures of a finished sweep: heatmaps over two axes and time against cost (Pareto fronts,
points coloured by accelerator). Pure functions of the summary and the axes (no database), in the
reader's language: titles, axes and legends through gettext, numbers and money through Babel
(reports.formatting), so a Chinese reader sees 万/亿 on the cost axis. The page embeds each figure as
JSON and a static script draws it (static/js/report.js): no inline script, nothing from the internet."""

from __future__ import annotations

import html
import json
import math
from typing import Any

import plotly.graph_objects as go
from django.utils.translation import gettext as _

from reports import formatting as f
from reports import labels
from reports.axis_values import axis_values
from reports.charts import linear_ticks, log_ticks

MONEY = {"cost.run.owned", "cost.run.cloud", "cost.capex.total"}
COLORS = ["#1f5f8b", "#e07b39", "#4f9d69", "#c44e52", "#8172b2", "#937860", "#7f7f7f", "#bcbd22"]
FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'Microsoft YaHei', sans-serif"


def label(field: str, currency: str = "") -> str:
    text = labels.metric(field)
    if currency and field in MONEY:
        text += f" ({f.currency_symbol(currency)})"
    return text


def value_text(field: str, value: Any, currency: str) -> str:
    """A metric's value as the reader reads it (days, money in 万/亿 or M/B, watts)."""
    if field in MONEY:
        return f.money(value, currency)
    if field == "compute.wall_clock_days":
        return f.days(value)
    if field == "power.facility_w":
        return f.watts(value)
    return f.auto(value)


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        font={"family": FONT},
        separators=".,",
        paper_bgcolor="white",
        plot_bgcolor="white",
        **kw,
    )
    return fig


def plain(value: Any) -> str:
    """User text as Plotly shows it literally: Plotly renders <a>, <b>, <br>... tags in labels and
    hover text, and shows the entities &lt; &gt; &amp; as the characters."""
    return html.escape(str(value), quote=False)


def _values(axes: list[dict], field: str | None, currency: str) -> list:
    for a in axes:
        if a["field"] == field:
            return [plain(v) for v in axis_values(a["field"], a["values"], currency or "USD")]
    return [""]


def _colorbar_ticks(z: list[list], metric: str, currency: str) -> dict[str, Any]:
    values = [v for row in z for v in row if isinstance(v, int | float) and math.isfinite(v)]
    return linear_ticks(max(values), lambda v: value_text(metric, v, currency)) if values else {}


def heatmap(item: dict[str, Any], axes: list[dict], currency: str = "") -> go.Figure:
    """One heatmap: the best (lowest) value of `metric` over all other axes, per cell of two axes."""
    x = _values(axes, item["x"], currency) if item.get("x") else [""]
    y = _values(axes, item["y"], currency)
    metric = item["metric"]
    xname = plain(labels.axis(item["x"])) if item.get("x") else ""
    yname = plain(labels.axis(item["y"]))
    text = [[value_text(metric, v, currency) if v is not None else "" for v in row] for row in item["z"]]
    fig = go.Figure(
        go.Heatmap(
            z=item["z"],
            x=x,
            y=y,
            text=text,
            colorscale="Viridis",
            reversescale=True,
            hoverongaps=False,
            # ticks in the reader's numbers (¥500万, 20 天), not Plotly's own k/M
            colorbar={
                "title": {"text": label(metric, currency)},
                **_colorbar_ticks(item["z"], metric, currency),
            },
            hovertemplate=f"{xname}: %{{x}}<br>{yname}: %{{y}}<br>%{{text}}<extra></extra>",
        )
    )
    title = _("Best %(metric)s: %(y)s × %(x)s") % {
        "metric": label(metric, currency),
        "y": yname,
        "x": xname,
    }
    return _layout(
        fig,
        title,
        xaxis={"title": xname, "type": "category"},
        yaxis={"title": yname, "type": "category"},
        margin={"l": 80, "r": 20, "t": 50, "b": 60},
        height=360 + 8 * min(len(y), 40),
    )


def _hover(describe, points: list, currency: str) -> list[str]:
    return [f"{plain(describe(p[0]))}<br>{f.days(p[1])}, {f.money(p[2], currency)}" for p in points]


def _sample_traces(fig: go.Figure, sample: list, describe, currency: str, group_of, colour_of) -> None:
    groups: dict[str, list] = {}
    for p in sample:
        groups.setdefault(group_of(p[0]) if group_of else "", []).append(p)
    for name, points in sorted(groups.items()):
        fig.add_trace(
            go.Scatter(
                x=[p[1] for p in points],
                y=[p[2] for p in points],
                mode="markers",
                name=_("%(series)s (sample, owned)") % {"series": plain(name)}
                if name
                else _("sample, owned"),
                legendgroup=name,
                marker={"size": 6, "color": colour_of(name), "opacity": 0.45},
                text=_hover(describe, points, currency),
                hovertemplate="%{text}<extra></extra>",
            )
        )


def _front_trace(points: list, name: str, colour: str, dash: str, describe, currency: str, group: str):
    return go.Scatter(
        x=[p[1] for p in points],
        y=[p[2] for p in points],
        mode="lines+markers",
        name=name,
        legendgroup=group,
        line={"shape": "hv", "color": colour, "dash": dash},
        marker={"size": 7, "color": colour},
        text=_hover(describe, points, currency),
        hovertemplate="%{text}<extra></extra>",
    )


def pareto(
    summary: dict[str, Any],
    describe,
    currency: str = "",
    group_of=None,
) -> go.Figure | None:
    """Time against run cost: sample points coloured by group (`group_of(index)`: the series value,
    else the accelerator), lines for the Pareto fronts (configurations no other beats on both). With
    a series axis (a sweep over models or chips; summary["series"]) each series has its own fronts in
    its colour, owned solid and cloud dotted. The capital budget is not drawn here (it bounds
    capex, not the run cost); the best tables flag rows over it. `describe(index)` gives the hover
    text of a scenario."""
    fronts = summary.get("pareto") or {}
    if not fronts:
        return None
    series = summary.get("series") or {}
    order = list(series.get("values") or [])
    fig = go.Figure()
    sample = summary.get("sample") or []
    names = sorted({group_of(p[0]) for p in sample} | set(order)) if group_of else []
    colours = {name: COLORS[i % len(COLORS)] for i, name in enumerate(order or names)}
    _sample_traces(fig, sample, describe, currency, group_of, lambda n: colours.get(n, COLORS[0]))
    all_x, all_y = [p[1] for p in sample], [p[2] for p in sample]
    if series:
        for value in order:
            for cost, dash in (("cost.run.owned", "solid"), ("cost.run.cloud", "dot")):
                points = (series["pareto"].get(value) or {}).get(cost) or []
                if points:
                    all_x += [p[1] for p in points]
                    all_y += [p[2] for p in points]
                    name = _("%(series)s: best trade-offs, %(cost)s") % {
                        "series": plain(value),
                        "cost": label(cost, currency),
                    }
                    fig.add_trace(_front_trace(points, name, colours[value], dash, describe, currency, value))
    else:
        for cost, points in fronts.items():
            if not points:
                continue
            all_x += [p[1] for p in points]
            all_y += [p[2] for p in points]
            colour = "#1d2430" if cost == "cost.run.owned" else "#c44e52"
            name = _("best trade-offs: %(cost)s") % {"cost": label(cost, currency)}
            fig.add_trace(_front_trace(points, name, colour, "solid", describe, currency, cost))
    return _layout(
        fig,
        _("Time against cost"),
        xaxis={"title": _("days without failures"), "type": "log", **log_ticks(all_x, f.days)},
        yaxis={
            "title": _("cost (%(currency)s)") % {"currency": f.currency_symbol(currency)},
            "type": "log",
            **log_ticks(all_y, lambda v: f.money(v, currency)),
        },
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 80, "r": 20, "t": 50, "b": 60},
        height=460 + 18 * len(order),
    )


def figure_json(fig: go.Figure | None) -> dict | None:
    """The figure as plain JSON for a <script type="application/json"> block (None when absent)."""
    return None if fig is None else json.loads(fig.to_json())
