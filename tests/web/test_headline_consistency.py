"""Every headline figure reads the same wherever a person or a program reads it: the API's result,
the report page (value and text), the CSV, the report's xlsx, the compare page and its xlsx
(hypothesis over presets, chips and sizes; a plan per case, so few cases)."""

from __future__ import annotations

import csv
import html
import io
import re

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

from reports import formatting as f
from reports.compare import ROWS
from reports.downloads import SIGNIFICANT
from reports.summary import HEADLINE, dig

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]  # two plans and six requests per case

# A spreadsheet keeps 15 significant digits (Excel's precision, ECMA-376 numbers as written by
# openpyxl): the xlsx has the same figure to that precision, no closer. The CSV writes a number to
# reports.downloads.SIGNIFICANT digits and an amount of money to the cent (reports.money).
XLSX_REL = 1e-14
CSV_REL = 10.0 ** (1 - SIGNIFICANT)
CENT = 0.005

COMPARE_KEYS = {key: path for key, _label, where, path, _kind in ROWS if where == "result"}


def _post(client: Client, body: dict) -> dict:
    response = client.post("/api/v1/estimates", body, content_type="application/json")
    assert response.status_code == 201, response.content[:500]
    return response.json()


def _token(share_url: str) -> str:
    return share_url.rstrip("/").rsplit("/", 1)[-1]


def _page_values(page: str) -> dict[str, tuple[str, str]]:
    """headline key -> (data-value, shown text) of the report page."""
    out = {}
    pattern = r'id="headline-([a-z_]+)">.*?data-value="([^"]*)">(.*?)</div>'
    for key, value, text in re.findall(pattern, page, re.S):
        out[key] = (html.unescape(value), html.unescape(text).strip())
    return out


def _csv_values(body: bytes) -> dict[str, str]:
    rows = csv.reader(io.StringIO(body.decode("utf-8-sig")))
    return {row[1]: row[2] for row in rows if row and row[0] == "result"}


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    preset=st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-70b"]),
    chip=st.sampled_from(["h100-sxm", "ascend-910b2", "a100-sxm-80gb"]),
    cluster=st.sampled_from([{"cards": 64}, {"cards": 512}, {"target_days": 30}]),
    currency=st.sampled_from(["USD", "CNY"]),
)
def test_headline_figures_agree_across_api_page_csv_xlsx_and_compare(preset, chip, cluster, currency):
    client = Client()
    body = {
        "model": {"preset": preset},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": chip},
        "cluster": cluster,
        "cost": {"currency": currency},
    }
    a = _post(client, body)
    b = _post(client, {**body, "training": {"tokens": 4e11}})
    result, token = a["result"], _token(a["share_url"])
    page = client.get(f"/r/{token}/").content.decode()
    shown = _page_values(page)
    csv_values = _csv_values(client.get(f"/r/{token}/report.csv").content)
    summary = load_workbook(io.BytesIO(client.get(f"/r/{token}/report.xlsx").content))["Summary"]
    # Summary columns: item, value, unit, as shown, why
    xlsx_values = {row[0]: (row[1], row[3]) for row in summary.iter_rows(min_row=2, values_only=True)}
    compare_page = client.get(f"/compare/?r={token}&r={_token(b['share_url'])}").content.decode()
    compare_xlsx = load_workbook(
        io.BytesIO(client.get(f"/compare/comparison.xlsx?r={token}&r={_token(b['share_url'])}").content)
    ).active
    compare_raw = {
        row[0]: row[2] for row in compare_xlsx.iter_rows(min_row=2, values_only=True)
    }  # item, unit
    for key, label, path, kind in HEADLINE:
        value = dig(result, path)
        text = f.by_kind(value, kind, currency)
        assert shown[key] == (repr(value), text), key  # the page: the API's value, as formatted
        assert float(csv_values[path]) == pytest.approx(value, rel=CSV_REL, abs=CENT), key  # the CSV
        cell, cell_text = xlsx_values[str(label)]
        assert cell == pytest.approx(value, rel=XLSX_REL) and cell_text == text, key  # the xlsx
        if path in COMPARE_KEYS.values():
            row_key = next(k for k, p in COMPARE_KEYS.items() if p == path)
            row = re.search(rf'data-key="{row_key}"><th>[^<]*</th><td class="num">([^<]*)</td>', compare_page)
            assert row and html.unescape(row.group(1)) == text, key  # the compare page
            labels = {k: lab for k, lab, *_ in ROWS}
            assert compare_raw[str(labels[row_key])] == pytest.approx(value, rel=XLSX_REL), key
