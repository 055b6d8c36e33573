"""Issue 24 item 5: compare and its xlsx name the server or supernode, the layout and the stack,
count the switches of both network planes (scale-out and the supernode's UB plane), give every
row's unit, and show each report's own figures."""

import io
import re

import pytest
from openpyxl import load_workbook

from reports.stack_labels import stack_name

pytestmark = pytest.mark.django_db

NODES = {
    "name": "910B2",
    "model": {"preset": "deepseek-v3"},
    "hardware": {"accelerator": "ascend-910b2"},
    "training": {"tokens": 1e12},
    "cluster": {"cards": 2304},
}
SUPERNODES = {**NODES, "name": "910C", "hardware": {"accelerator": "ascend-910c"}}


@pytest.fixture
def pair(make_estimate):
    return make_estimate(data=NODES), make_estimate(data=SUPERNODES)


def _row(html: str, key: str) -> list[str]:
    row = re.search(rf'data-key="{key}"><th>[^<]*</th>(.*?)</tr>', html, re.S)
    assert row, key
    return re.findall(r'<td class="num">([^<]*)</td>', row.group(1))


def test_compare_names_server_layout_stack_and_both_planes(client, pair):
    nodes, supernodes = pair
    html = client.get(f"/compare/?r={nodes.share_token}&r={supernodes.share_token}").content.decode()
    server = _row(html, "server")
    assert server[0] == "Huawei Atlas 800T A2 (8x Ascend 910B)"
    assert server[1] == supernodes.result["scaleup"]["unit"]["name"]  # the CloudMatrix 384 bought whole
    layouts = _row(html, "layout")
    for est, text in zip(pair, layouts, strict=True):
        p = est.result["parallelism"]
        assert f"TP {p['tp']} × PP {p['pp']} × DP {p['dp']}" in text
    stack = next(
        a["value"] for a in supernodes.result["assumptions"] if a["code"].startswith("assumption.stack")
    )
    # named as the form names it (reports.stack_labels), the same profile as the assumption's id
    assert supernodes.result["stack"]["id"] == stack
    assert _row(html, "stack")[1] == stack_name(stack)
    # 6 supernodes x 112 UB switches = 672 beside the 232 of the scale-out fabric (issue 24)
    assert _row(html, "switches")[1] == f"{supernodes.result['network']['total_switches']:,}"
    assert _row(html, "scaleup_switches") == ["0", "672"]  # 8-card nodes have no UB plane
    assert _row(html, "scaleup_chips")[1] == "2,016"


def test_compare_figures_are_each_reports_own(client, pair):
    html = client.get(f"/compare/?r={pair[0].share_token}&r={pair[1].share_token}").content.decode()
    for col, est in enumerate(pair):
        report = client.get(f"/r/{est.share_token}/").content.decode()
        for key in ("cards", "servers", "days", "capex", "power"):
            start = report.index(f'id="headline-{key}"')
            shown = re.search(r'class="value"[^>]*>([^<]*)<', report[start:]).group(1).strip()
            assert _row(html, key)[col] == shown, (key, est.name)


def test_comparison_xlsx_has_units_and_both_planes(client, pair):
    nodes, supernodes = pair
    body = client.get(f"/compare/comparison.xlsx?r={nodes.share_token}&r={supernodes.share_token}").content
    ws = load_workbook(io.BytesIO(body)).active
    rows = list(ws.iter_rows(values_only=True))
    assert rows[0][:2] == ("Item", "Unit")
    by_label = {r[0]: r for r in rows[1:]}
    assert by_label["Facility power"][1] == "W" and by_label["Energy"][1] == "Wh"
    assert by_label["Memory per card"][1] == "B" and by_label["Step time"][1] == "s"
    assert by_label["Cluster cost"][1] == "USD" and by_label["Days without failures"][1] == "days"
    assert by_label["Scale-up switches (supernode plane)"][2:] == (0, 672)
    assert by_label["Scale-out switches"][3] == supernodes.result["network"]["total_switches"]
    assert by_label["Server or supernode"][3] == supernodes.result["scaleup"]["unit"]["name"]
    assert by_label["Cards"][2:] == (nodes.result["compute"]["cards"], supernodes.result["compute"]["cards"])
    from reports.compare import ROWS

    measured = {str(label) for _k, label, _w, _p, kind in ROWS if kind not in ("count", "text")}
    deadline_only = {"Probability of missing the deadline", "Chance of meeting the deadline (sized for)"}
    assert measured <= set(by_label) | {"Budget", "Over budget by", *deadline_only}
    assert [r[0] for r in rows[1:] if r[0] in measured and not r[1]] == []  # each names its unit


def test_unnamed_reports_are_headed_by_their_place_not_their_share_token(client, make_estimate):
    # a share token is a report's read key: a column headed by it hands it to whoever reads the page
    # (a screenshot, a printed table) or the spreadsheet; unnamed reports read "Report 1", "Report 2"
    first, second = (
        make_estimate(data={k: v for k, v in d.items() if k != "name"}) for d in (NODES, SUPERNODES)
    )
    url = f"/compare/?r={first.share_token}&r={second.share_token}"
    html = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert re.findall(r"<a [^>]*>([^<]*)</a>", head) == ["Report 1", "Report 2"]
    body = client.get(url.replace("/compare/", "/compare/comparison.xlsx"), HTTP_ACCEPT_LANGUAGE="en").content
    header = next(load_workbook(io.BytesIO(body)).active.iter_rows(values_only=True))
    assert not any(first.share_token in str(h) or second.share_token in str(h) for h in header), header
    assert str(header[2]).startswith("Report 1")
    zh = client.get(f"/zh-hans{url}").content.decode()
    assert re.findall(r"<a [^>]*>([^<]*)</a>", re.search(r"<thead>(.*?)</thead>", zh, re.S).group(1)) == [
        "报告 1",
        "报告 2",
    ]
