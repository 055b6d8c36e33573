"""One number per question: for one scenario, the headline figures (cards, days, days with
failures, MFU, cluster cost, facility power) read the same in the CLI (its JSON and its table), the
API's JSON, the report page (headline and working tables), the CSV and the xlsx. Each output is
read back (parsed), not formatted again from the same code path, and compared with the API's value
to the precision that output shows."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sys

import pytest
from django.test import Client
from openpyxl import load_workbook

from estimator.__main__ import main

pytestmark = pytest.mark.django_db

SCENARIOS = {
    "cards-usd": {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "h100-sxm"},
        "cluster": {"cards": 64},
        "cost": {"currency": "USD"},
    },
    "deadline-cny": {
        "model": {"preset": "qwen3-8b"},
        "training": {"tokens": 3e11},
        "hardware": {"accelerator": "ascend-910b3"},
        "cluster": {"target_days": 20},
        "cost": {"currency": "CNY"},
    },
}
# the questions and where the API's result answers them
PATHS = {
    "cards": ("compute", "cards"),
    "days": ("compute", "wall_clock_days"),
    "days_with_failures": ("goodput", "wall_clock_days_p50"),  # the median: "how many days?"
    "mfu": ("compute", "mfu"),
    "capex": ("cost", "capex", "total"),
    "power": ("power", "facility_w"),
    "run_owned": ("cost", "run", "owned"),
}
SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _at(result: dict, path: tuple[str, ...]):
    for key in path:
        result = result[key]
    return result


def _cli(monkeypatch, capsys, doc: dict, fmt: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(doc)))
    capsys.readouterr()
    assert main(["plan", "-", "--format", fmt]) == 0
    return capsys.readouterr().out


def _table_values(text: str) -> dict[str, float]:
    """The CLI table's headline rows read back: `name  value  why` columns."""
    rows = {}
    for line in text.splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) >= 2:
            rows[parts[0]] = parts[1:]
    wall, why = rows["wall-clock"][0], rows["wall-clock"][1]
    power = re.fullmatch(r"([\d.]+) ([kMGT]?)W", rows["facility power"][0])
    assert power, rows["facility power"]
    return {
        "cards": float(rows["cards"][0].replace(",", "")),
        "days": float(wall.removesuffix(" days")),
        "days_with_failures": float(rows["with failures"][0].removesuffix(" days")),
        "mfu": float(re.search(r"at MFU ([\d.]+)%", why).group(1)) / 100,
        "capex": float(rows["capex"][0].split()[0].replace(",", "")),
        "run_owned": float(rows["run cost owned / cloud"][0].split()[0].replace(",", "")),
        "power": float(power.group(1)) * SI[power.group(2)],
    }


def _number(text: str) -> float:
    """A figure as the page shows it: "1,234", "54.6%", "3.2 days", "123 kW", "$2.49M", "CN¥1.2B"
    (CLDR's short scale for money in English), "¥249.5万", "¥12亿" (in Chinese)."""
    text = text.replace("\u202f", " ").replace("\xa0", " ")
    m = re.search(r"(-?[\d,]*\.?\d+)(?:\s*(%|[kMGT]?W\b)|([KMBT万亿])(?![A-Za-z]))?", text)
    assert m, text
    value = float(m.group(1).replace(",", ""))
    if m.group(2) == "%":
        return value / 100
    if m.group(2):
        return value * SI[m.group(2)[:-1]]
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, "万": 1e4, "亿": 1e8}
    return value * scale.get(m.group(3) or "", 1.0)


def _page_values(page: str) -> dict[str, float]:
    """The report page read back: the headline's data-value (the stored number) and text, and the
    MFU row of the working's compute table."""
    out = {}
    for key, value, text in re.findall(
        r'id="headline-([a-z_]+)">.*?data-value="([^"]*)">(.*?)</div>', page, re.S
    ):
        out[key] = float(html.unescape(value))
        out[key + "_text"] = _number(html.unescape(text))
    compute = re.search(r'class="section-compute">.*?</details>', page, re.S).group(0)
    mfu = re.search(r"<th>(?:<[^>]+>)*MFU(?:</[^>]+>)*</th><td class=\"num\">([^<]*)</td>", compute)
    assert mfu, compute[:2000]
    out["mfu_text"] = _number(html.unescape(mfu.group(1)))
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_headline_figures_are_one_number_everywhere(monkeypatch, capsys, name):
    doc = SCENARIOS[name]
    client = Client()
    response = client.post("/api/v1/estimates", doc, content_type="application/json")
    assert response.status_code == 201, response.content[:300]
    api = response.json()["result"]
    truth = {q: float(_at(api, p)) for q, p in PATHS.items()}
    token = response.json()["share_url"].rstrip("/").rsplit("/", 1)[-1]

    # the CLI, in the same process: its JSON is the API's result, figure for figure
    cli = json.loads(_cli(monkeypatch, capsys, doc, "json"))["result"]
    assert {q: float(_at(cli, p)) for q, p in PATHS.items()} == truth
    # its table, to the digits it prints (days to 0.1, MFU to 0.1 pp, power to 3 figures, money to 1)
    table = _table_values(_cli(monkeypatch, capsys, doc, "table"))
    assert table["cards"] == truth["cards"]
    assert table["days"] == pytest.approx(truth["days"], abs=0.05)
    assert table["days_with_failures"] == pytest.approx(truth["days_with_failures"], abs=0.05)
    assert table["mfu"] == pytest.approx(truth["mfu"], abs=0.0005)
    assert table["capex"] == pytest.approx(truth["capex"], abs=0.5)
    assert table["run_owned"] == pytest.approx(truth["run_owned"], abs=0.5)
    assert table["power"] == pytest.approx(truth["power"], rel=0.005)

    # the report page in both languages: the headline's stored values and its text (3 significant
    # figures; 4 for 万), and the working's MFU
    for prefix in ("", "/zh-hans"):
        raw = client.get(f"{prefix}/r/{token}/").content.decode()
        assert ("天" in raw) == bool(prefix)  # the Chinese page is in Chinese
        page = _page_values(raw)
        for q in ("cards", "days", "days_with_failures", "capex", "power"):
            assert page[q] == truth[q], (prefix, q)
            assert page[q + "_text"] == pytest.approx(truth[q], rel=0.005), (prefix, q)
        assert page["mfu_text"] == pytest.approx(truth["mfu"], abs=0.0005), prefix

    # the CSV (a number to 12 significant digits, money to the cent) and the xlsx's Result sheet
    body = client.get(f"/r/{token}/report.csv").content.decode("utf-8-sig")
    rows = {r[1]: r[2] for r in csv.reader(io.StringIO(body)) if r and r[0] == "result"}
    xlsx = load_workbook(io.BytesIO(client.get(f"/r/{token}/report.xlsx").content))
    sheet = dict(xlsx["Result"].iter_rows(min_row=2, values_only=True))
    for q, path in PATHS.items():
        dotted = ".".join(path)
        assert float(rows[dotted]) == pytest.approx(truth[q], rel=1e-11, abs=0.005), q
        assert float(sheet[dotted]) == pytest.approx(truth[q], rel=1e-14), q
