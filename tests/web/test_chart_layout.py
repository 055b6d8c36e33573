"""reports.charts._layout assigns the report's common layout in one go; the figure must be the one
Plotly's own update path gives (update_layout, then update_xaxes/update_yaxes on every axis), which
this test runs as the reference."""

import json
from typing import Any

import plotly.graph_objects as go
import pytest

from reports import charts

FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'Microsoft YaHei', sans-serif"


def _by_plotly(fig: go.Figure, title: str, **kw) -> go.Figure:
    legend = kw.pop("legend", None)  # a chart's own legend, updated after the common one
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        height=kw.pop("height", 340),
        legend={"orientation": "h", "y": -0.2},
        paper_bgcolor="white",
        plot_bgcolor="white",
        separators=".,",
        font={"family": FONT},
        **kw,
    )
    fig.update_xaxes(gridcolor="#eee", zeroline=False)
    fig.update_yaxes(gridcolor="#eee", zeroline=False)
    if legend is not None:
        fig.update_layout(legend=legend)
    return fig


def _figure(reversed_y: bool) -> go.Figure:
    fig = go.Figure()
    fig.add_bar(x=[1, 2], y=["a", "b"], orientation="h", name="bars")
    fig.add_scatter(x=[1, 2], y=[3, 4], yaxis="y2", name="line")
    if reversed_y:
        fig.update_yaxes(autorange="reversed")  # set before the layout, as charts.network does
    return fig


CASES: dict[str, dict[str, Any]] = {
    "titles by path": {"barmode": "stack", "xaxis_title": "seconds", "yaxis_title": "GB", "height": 280},
    "a second axis": {"yaxis2": {"title": "cost", "overlaying": "y", "side": "right", "showgrid": False}},
    "an axis dict": {
        "xaxis": {"type": "log", "title": "count", "tickvals": [1, 10], "ticktext": ["1", "10"]}
    },
    "the legend merged": {"legend": {"orientation": "h", "y": -0.45, "traceorder": "normal"}},
}


@pytest.mark.parametrize("reversed_y", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_layout_is_plotlys_update(case, reversed_y):
    ours = charts._layout(_figure(reversed_y), "Title", **CASES[case])
    reference = _by_plotly(_figure(reversed_y), "Title", **CASES[case])
    assert json.loads(ours.to_json()) == json.loads(reference.to_json())
    assert ours.layout.yaxis.gridcolor == "#eee" and ours.layout.title.text == "Title"
