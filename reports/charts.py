"""Core results -> Plotly figures. Pure: takes the stored scenario/result dicts, knows no database.

Each function returns a `plotly.graph_objects.Figure`, or None when the result lacks the section
(an older or partial result), so a report renders whatever is there.
"""

from __future__ import annotations

import logging
import math
import re
from numbers import Real
from typing import Any

import plotly.graph_objects as go
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from estimator.contract.readings import given_mfu_step_s

from . import formatting as f
from . import goodput, labels, messages
from .summary import currency, dig

logger = logging.getLogger(__name__)

GB = 1e9
TB = 1e12
COLORS = ["#1f5f8b", "#e07b39", "#4f9d69", "#c44e52", "#8172b2", "#937860", "#7f7f7f", "#bcbd22"]


def _n(value) -> float | None:
    if isinstance(value, dict):
        value = value.get("total")
    if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def linear_ticks(top: float, fmt, n: int = 5) -> dict:
    """Tick positions at a 1-2-5 step from 0 to `top`, labelled by `fmt` (Babel: 万/亿 in Chinese)."""
    if not top or top <= 0 or not math.isfinite(top):
        return {}
    raw = top / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = [i * step for i in range(int(top // step) + 2)]
    return {"tickvals": ticks, "ticktext": [fmt(t) for t in ticks]}


def log_ticks(values: list[float], fmt) -> dict[str, Any]:
    """Tick positions at 1-2-5 steps over the values' range, labelled by `fmt` (Babel), for a log axis:
    Plotly's own log ticks label the minor ones with their leading digit only ("7 8 9 1 2 3")."""
    finite = [v for v in values if isinstance(v, int | float) and math.isfinite(v) and v > 0]
    if not finite:
        return {}
    lo, hi = min(finite), max(finite)
    ticks = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            t = m * 10.0**e
            if lo / 1.5 <= t <= hi * 1.5:
                ticks.append(t)
    return {"tickvals": ticks, "ticktext": [fmt(t) for t in ticks]} if ticks else {}


def money_tick(value: float, cur: str) -> str:
    """A cost axis's tick: compact money in the plan's currency (CN¥100M, ¥1亿); a tick under
    10,000 to the unit (CN¥0, not f.money's CN¥0.00, the cents of a price)."""
    return f.money_full(value, cur) if abs(value) < 1e4 else f.money(value, cur)


def _money_axis(cur: str, top: float) -> dict:
    return {
        "title": _("cost (%(currency)s)") % {"currency": f.currency_symbol(cur)},
        **linear_ticks(top, lambda v: money_tick(v, cur)),
    }


AXIS_NAME = re.compile(r"[xy]axis\d*")


def _merge(into: dict, changes: dict) -> None:
    """`changes` merged into `into`, nested dicts key by key (what update_layout does)."""
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    """The report's common layout over what the figure has set, then `kw` (`xaxis_title=` is
    `xaxis={"title": ...}`, as in update_layout), every axis with the light grid. Assigned once as
    a whole: update_layout and update_xaxes on a figure send each property through Plotly's
    change batching, most of the report's figure building (issue 27); the figure is the same."""
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)  # the default template, which the assignment sets again
    _merge(
        layout,
        {
            "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
            "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
            "height": kw.pop("height", 340),
            "legend": {"orientation": "h", "y": -0.2},
            "paper_bgcolor": "white",
            "plot_bgcolor": "white",
            "separators": ".,",
            "font": {
                "family": "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'Microsoft YaHei', sans-serif"
            },
        },
    )
    for key, value in kw.items():
        axis, _sep, prop = key.partition("_")
        _merge(layout, {axis: {prop: value}} if prop and AXIS_NAME.fullmatch(axis) else {key: value})
    for axis in ["xaxis", "yaxis", *(k for k in layout if AXIS_NAME.fullmatch(k))]:
        _merge(layout, {axis: {"gridcolor": "#eee", "zeroline": False}})
    fig.layout = layout
    return fig


def step_time(result: dict) -> go.Figure | None:
    """One training step split into compute, pipeline bubble and each kind of communication wait."""
    breakdown = dig(result, "parallelism.breakdown_s")
    if not isinstance(breakdown, dict):
        return None
    fig = go.Figure()
    for i, (key, value) in enumerate(breakdown.items()):
        v = _n(value)
        if v is None or v <= 0:
            continue
        fig.add_bar(
            y=[_("Step")],
            x=[v],
            name=labels.step_term(key),
            orientation="h",
            marker_color=COLORS[i % len(COLORS)],
            text=[f.seconds(v)],
            textposition="inside",
            hovertemplate="%{fullData.name}: %{x:.3g} s<extra></extra>",
        )
    total = _n(dig(result, "parallelism.step_time_s"))
    title = _("Step time: %(t)s") % {"t": f.seconds(total)} if total else _("Step time")
    if given_mfu_step_s(result) is not None:  # one step per plan: the breakdown is the model's
        title = _("The layout model's predicted step: %(t)s") % {"t": f.seconds(total)}
    legend = {"orientation": "h", "y": -0.45, "traceorder": "normal"}
    return _layout(fig, title, barmode="stack", xaxis_title=_("seconds"), height=280, legend=legend)


def memory(result: dict) -> go.Figure | None:
    """Per-card memory by kind against the card's HBM."""
    per_card = dig(result, "memory.per_card_bytes")
    if not isinstance(per_card, dict):
        return None
    fig = go.Figure()
    for i, (key, value) in enumerate(per_card.items()):
        v = _n(value)
        if key == "total" or v is None:
            continue
        fig.add_bar(
            x=[_("Per card")],
            y=[v / GB],
            name=labels.memory_term(key),
            marker_color=COLORS[i % len(COLORS)],
            hovertemplate="%{fullData.name}: %{y:.3g} GB<extra></extra>",
        )
    hbm = _n(dig(result, "memory.hbm_bytes"))
    if hbm:
        fig.add_hline(
            y=hbm / GB,
            line_dash="dash",
            line_color="#c44e52",
            annotation_text=_("HBM %(size)s") % {"size": f.bytes_(hbm)},
            annotation_position="top left",
        )
    fits = dig(result, "memory.fits")
    title = _("Memory per card") + (
        " — " + (_("fits") if fits else _("does not fit")) if fits is not None else ""
    )
    return _layout(fig, title, barmode="stack", yaxis_title="GB")


def cards_vs_days(result: dict, counts: list[dict] | None = None) -> go.Figure | None:
    """Days (the headline's, with failures where counted) and cluster cost against the card count:
    each point the scenario planned at that count (estimator.plan.count_curve, reports.count_points),
    a count the engine cannot plan a gap with its reason. None without planned points."""
    cards = _n(dig(result, "compute.cards"))
    rows = [p for p in counts or [] if isinstance(p, dict) and _n(p.get("cards"))]
    if not cards or not any(_n(p.get("wall_clock_days")) for p in rows):
        return None
    cur = currency(result)
    xs = [p["cards"] for p in rows]
    days = [_n(p.get("wall_clock_days")) for p in rows]
    capex = [_n(p.get("capex_in_currency")) for p in rows]
    fig = go.Figure()
    fig.add_scatter(
        x=xs,
        y=days,
        mode="lines+markers",
        name=_("Days"),
        line_color=COLORS[0],
        customdata=[_count_hover(p, cur) for p in rows],
        hovertemplate="%{customdata}<extra></extra>",
    )
    fig.add_scatter(
        x=[cards],
        y=[goodput.days_with_failures(result)],
        mode="markers",
        name=_("This plan"),
        marker={"size": 14, "color": COLORS[1], "symbol": "star"},
        hoverinfo="skip",
    )
    layout: dict = {
        "xaxis": {"type": "log", "title": _("cards (log scale)"), **log_ticks(xs, f.count)},
        "yaxis_title": _days_title(result),
    }
    if any(capex):
        fig.add_scatter(
            x=xs,
            y=capex,
            mode="lines+markers",
            name=_("Cluster cost"),
            yaxis="y2",
            line={"color": COLORS[2], "dash": "dot"},
            customdata=[_count_hover(p, cur) for p in rows],
            hovertemplate="%{customdata}<extra></extra>",
        )
        top = max(v for v in capex if v is not None)
        layout["yaxis2"] = {**_money_axis(cur, top), "overlaying": "y", "side": "right", "showgrid": False}
    _add_refused(fig, rows, layout)
    return _layout(fig, _("Cards against days and cost, each size planned"), **layout)


def _days_title(result: dict) -> str:
    counted = dig(result, "goodput.failures_counted")
    return _("days with failures (median)") if counted else _("days")


def _count_hover(point: dict, cur: str) -> str:
    """One planned count in words: cards, days, MFU and cost; a refused count its reason."""
    if point.get("refusal_code"):
        return messages.render(
            point["refusal_code"], point.get("refusal_params"), point.get("refusal_message", "")
        )
    return _("%(cards)s cards: %(days)s, MFU %(mfu)s, cluster cost %(cost)s") % {
        "cards": f.count(point.get("cards")),
        "days": f.days(point.get("wall_clock_days")),
        "mfu": f.percent(point.get("mfu")),
        "cost": f.money(point.get("capex_in_currency"), cur),
    }


def _add_refused(fig: go.Figure, rows: list[dict], layout: dict) -> None:
    """The counts the engine refused, as crosses along the foot of the chart (an axis of their own,
    0 to 1) whose hover gives the reason; the days and cost lines have a gap there."""
    refused = [p for p in rows if p.get("refusal_code")]
    if not refused:
        return
    fig.add_scatter(
        x=[p["cards"] for p in refused],
        y=[0.04] * len(refused),
        mode="markers",
        name=_("No plan"),
        yaxis="y3",
        marker={"symbol": "x", "size": 10, "color": COLORS[3]},
        customdata=[_count_hover(p, "") for p in refused],
        hovertemplate="%{customdata}<extra></extra>",
    )
    layout["yaxis3"] = {"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True}


def cost(result: dict) -> go.Figure | None:
    """Capital cost by part, and the cost of one run owned against rented."""
    capex = dig(result, "cost.capex")
    run = dig(result, "cost.run")
    if not isinstance(capex, dict) and not isinstance(run, dict):
        return None
    cur = currency(result)
    fig = go.Figure()
    if isinstance(capex, dict):
        for i, (key, value) in enumerate(capex.items()):
            v = _n(value)
            if key == "total" or v is None:
                continue
            fig.add_bar(
                x=[_("Cluster (capex)")],
                y=[v],
                name=labels.capex_part(key),
                marker_color=COLORS[i % len(COLORS)],
                text=[f.money(v, cur)],
                textposition="inside",
                hovertemplate="%{fullData.name}: %{text}<extra></extra>",
            )
    if isinstance(run, dict):
        xs, ys = [], []
        for key, label in (("owned", _("One run, owned")), ("cloud", _("One run, cloud"))):
            v = _n(run.get(key))
            if v is not None:
                xs.append(label)
                ys.append(v)
        if xs:
            fig.add_bar(
                x=xs,
                y=ys,
                name=_("Run cost"),
                marker_color=COLORS[4],
                text=[f.money(v, cur) for v in ys],
                textposition="outside",
                hovertemplate="%{x}: %{text}<extra></extra>",
            )
    tops = [_n(dig(result, "cost.capex.total")) or 0] + [
        _n(v) or 0 for v in (run or {}).values() if not isinstance(v, dict)
    ]
    return _layout(fig, _("Cost breakdown"), barmode="stack", yaxis=_money_axis(cur, max(tops)))


def network(result: dict) -> go.Figure | None:
    """Switches per tier of the Clos fabric, with the endpoints they serve."""
    net = result.get("network")
    if not isinstance(net, dict):
        return None
    tiers = [
        (_("Endpoints (NIC ports)"), _n(net.get("endpoints"))),
        (_("Leaf switches"), _n(net.get("leaf_switches"))),
        (_("Spine switches"), _n(net.get("spine_switches"))),
        (_("Core switches"), _n(net.get("core_switches"))),
    ]
    tiers = [(label, v) for label, v in tiers if v]
    if not tiers:
        return None
    fig = go.Figure()
    fig.add_bar(
        x=[v for _l, v in tiers],
        y=[label for label, _v in tiers],
        orientation="h",
        marker_color=[COLORS[0]] + [COLORS[1]] * (len(tiers) - 1),
        text=[f.count(v) for _l, v in tiers],
        textposition="auto",
        hovertemplate="%{y}: %{x:,.0f}<extra></extra>",
        showlegend=False,
    )
    fig.update_yaxes(autorange="reversed")
    title = _("Network: %(tiers)s tiers, %(ratio)s oversubscription") % {
        "tiers": f.count(_n(net.get("tiers"))),
        "ratio": f.ratio(_n(net.get("oversubscription"))),
    }
    values = [v for _l, v in tiers if v is not None]
    axis = {"type": "log", "title": _("count (log scale)"), **log_ticks(values, f.count)}
    return _layout(fig, title, xaxis=axis, height=300)


def storage(result: dict) -> go.Figure | None:
    """Capacity of the hot (parallel file system), warm (object/HDD) and cache (local NVMe) tiers."""
    st = result.get("storage")
    if not isinstance(st, dict):
        return None
    nodes = _n(dig(result, "compute.nodes")) or 1
    cache = _n(dig(st, "cache.per_node_bytes"))
    bars = [
        (_("Hot tier"), _n(dig(st, "hot.capacity_bytes"))),
        (_("Warm tier"), _n(dig(st, "warm.capacity_bytes"))),
        (_("Cache (all nodes)"), cache * nodes if cache else None),
        (_("One checkpoint"), _n(st.get("checkpoint_bytes"))),
        (_("Dataset"), _n(st.get("dataset_bytes"))),
    ]
    shown = [(label, v) for label, v in bars if v]
    if not shown:
        return None
    fig = go.Figure()
    fig.add_bar(
        x=[label for label, _v in shown],
        y=[v / TB for _l, v in shown],
        text=[f.bytes_(v) for _l, v in shown],
        textposition="outside",
        marker_color=[COLORS[i] for i in range(len(shown))],
        showlegend=False,
        hovertemplate="%{x}: %{y:.3g} TB<extra></extra>",
    )
    write = _n(dig(st, "hot.write_bytes_per_s"))
    title = _("Storage tiers")
    if write:
        title += " — " + _("hot tier writes %(bw)s") % {"bw": f.bytes_per_s(write)}
    axis = {"type": "log", "title": _("TB (log scale)"), **log_ticks([v / TB for _l, v in shown], f.auto)}
    return _layout(fig, title, yaxis=axis)


def planes(result: dict) -> go.Figure | None:
    """Both planes of a supernode cluster, whole-cluster counts: the scale-up plane inside each
    supernode against the scale-out fabric between them (and a supernode's own VPC plane)."""
    sc, net = result.get("scaleup"), result.get("network")
    if not isinstance(sc, dict) or not isinstance(net, dict):
        return None
    unit, totals, rk = sc.get("unit") or {}, sc.get("totals") or {}, sc.get("racks") or {}
    if unit.get("degenerate", True):
        return None
    n = _n(sc.get("supernodes")) or 0
    cats = [_("Switch units"), _("Switch chips"), _("Links"), _("Optical modules"), _("Racks")]
    scaleout_switches = _n(net.get("total_switches"))
    scaleout_links = (_n(net.get("server_links")) or 0) + (_n(net.get("switch_links")) or 0)
    series = [
        (
            _("Scale-up, inside each supernode"),
            [
                _n(totals.get("rack_switches")),
                (_n(totals.get("node_switch_chips")) or 0) + (_n(totals.get("rack_switch_chips")) or 0),
                _n(totals.get("links")),
                _n(totals.get("transceivers")),
                _n(rk.get("scaleup")),
            ],
        ),
        (
            _("Scale-out, between supernodes"),
            [
                scaleout_switches,
                scaleout_switches,
                scaleout_links,
                _n(net.get("transceivers")),
                _n(rk.get("scaleout")),
            ],
        ),
    ]
    vpc = unit.get("vpc")
    if isinstance(vpc, dict):
        series.append(
            (
                _("VPC / storage plane"),
                [
                    _n(totals.get("vpc_leaves")),
                    _n(totals.get("vpc_leaves")),
                    ((_n(vpc.get("links")) or 0) + (_n(vpc.get("uplinks")) or 0)) * n,
                    _n(totals.get("vpc_transceivers")),
                    None,
                ],
            )
        )
    fig = go.Figure()
    for i, (name, values) in enumerate(series):
        fig.add_bar(
            x=cats,
            y=[v if v else None for v in values],
            name=name,
            marker_color=COLORS[i % len(COLORS)],
            text=[f.count(v) if v else "" for v in values],
            textposition="outside",
            hovertemplate="%{fullData.name}<br>%{x}: %{y:,.0f}<extra></extra>",
        )
    shown = f.count(n)
    title = ngettext(
        "Both planes, whole cluster: %(n)s supernode",
        "Both planes, whole cluster: %(n)s supernodes",
        f.plural_n(shown),
    ) % {"n": shown}
    counts = [v for _name, values in series for v in values if v]
    axis = {"type": "log", "title": _("count (log scale)"), **log_ticks(counts, f.count)}
    return _layout(fig, title, barmode="group", yaxis=axis, height=380)


def all_figures(result: dict, counts: list[dict] | None = None) -> list[tuple[str, go.Figure]]:
    """(dom id, figure) for every chart this result can draw, in report order; `counts`: the planned
    points of the cards chart (reports.count_points), which is not drawn without them."""
    makers = [
        ("chart-goodput", goodput.figure),
        ("chart-step-time", step_time),
        ("chart-memory", memory),
        ("chart-cards-days", lambda res: cards_vs_days(res, counts)),
        ("chart-cost", cost),
        ("chart-network", network),
        ("chart-planes", planes),
        ("chart-storage", storage),
    ]
    out = []
    for dom_id, make in makers:
        try:
            fig = make(result)
        except (ArithmeticError, ValueError, TypeError):  # a stored result no chart can draw
            logger.warning("chart %s skipped for a stored result it cannot draw", dom_id, exc_info=True)
            continue
        if fig is not None and fig.data:
            out.append((dom_id, fig))
    return out
