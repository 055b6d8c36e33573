"""Plotly figures of a finished sweep: heatmaps over two axes and the Pareto front of time against
cost. Pure functions of the summary and the axes (no database); HTML fragments need plotly.js on
the page (served from static/, never a CDN)."""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

LABELS = {
    "compute.wall_clock_days": "wall-clock days",
    "cost.run.owned": "run cost, owned",
    "cost.run.cloud": "run cost, cloud",
    "cost.capex.total": "capex",
    "power.facility_w": "facility power (W)",
}
CONFIG = {"displaylogo": False, "responsive": True}


def label(field: str, currency: str = "") -> str:
    text = LABELS.get(field, field)
    if currency and field.startswith("cost."):
        text += f" ({currency})"
    return text


def plain(value: Any) -> str:
    """User text as Plotly shows it literally: Plotly renders <a>, <b>, <br>... tags in labels and
    hover text, and shows the entities &lt; &gt; &amp; as the characters."""
    return html.escape(str(value), quote=False)


def _values(axes: list[dict], field: str | None) -> list:
    for a in axes:
        if a["field"] == field:
            return [plain(v) for v in a["values"]]
    return [""]


def heatmap(item: dict[str, Any], axes: list[dict], currency: str = "") -> go.Figure:
    """One heatmap: the best (lowest) value of `metric` over all other axes, per cell of two axes."""
    x = _values(axes, item["x"]) if item.get("x") else [""]
    y = _values(axes, item["y"])
    fig = go.Figure(
        go.Heatmap(
            z=item["z"],
            x=x,
            y=y,
            colorscale="Viridis",
            reversescale=True,
            hoverongaps=False,
            colorbar={"title": {"text": label(item["metric"], currency)}},
            hovertemplate=f"{item.get('x') or ''}=%{{x}}<br>{item['y']}=%{{y}}<br>%{{z:.4g}}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Best {label(item['metric'], currency)}: {item['y']} × {item.get('x') or ''}",
        xaxis={"title": item.get("x") or "", "type": "category"},
        yaxis={"title": item["y"], "type": "category"},
        margin={"l": 80, "r": 20, "t": 50, "b": 60},
        height=360 + 8 * min(len(y), 40),
    )
    return fig


def pareto(summary: dict[str, Any], describe, currency: str = "") -> go.Figure | None:
    """Pareto fronts (fewest days for a given cost): each point is a scenario no other scenario beats
    on both. `describe(index)` gives the hover text of a scenario."""
    fronts = summary.get("pareto") or {}
    if not fronts:
        return None
    fig = go.Figure()
    sample = summary.get("sample") or []
    if sample:
        fig.add_trace(
            go.Scatter(
                x=[p[1] for p in sample],
                y=[p[2] for p in sample],
                mode="markers",
                name="configurations (sample), owned",
                marker={"size": 4, "color": "rgba(120,120,120,0.35)"},
                text=[plain(describe(p[0])) for p in sample],
                hovertemplate="%{text}<br>%{x:.3g} days, %{y:.4s}<extra></extra>",
            )
        )
    for cost, points in fronts.items():
        if not points:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p[1] for p in points],
                y=[p[2] for p in points],
                mode="lines+markers",
                name=label(cost, currency),
                line={"shape": "hv"},
                text=[plain(describe(p[0])) for p in points],
                hovertemplate="%{text}<br>%{x:.3g} days, %{y:.4s}<extra></extra>",
            )
        )
    fig.update_layout(
        title="Pareto front: time against cost",
        xaxis={"title": "wall-clock days", "type": "log"},
        yaxis={"title": f"cost{f' ({currency})' if currency else ''}", "type": "log"},
        legend={"orientation": "h", "y": -0.2},
        margin={"l": 80, "r": 20, "t": 50, "b": 60},
        height=440,
    )
    return fig


def to_html(fig: go.Figure | None, div_id: str) -> str:
    if fig is None:
        return ""
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG)
