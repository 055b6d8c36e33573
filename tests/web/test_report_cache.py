"""The report page's figures are built once per stored estimate and language, then read from the
cache (reports.pages.report_figures); a cache that is down costs a rebuild, never the page."""

import json
import re

import pytest

from reports import charts, pages

pytestmark = pytest.mark.django_db


@pytest.fixture
def builds(monkeypatch):
    """How many times the Plotly figures were built."""
    calls = []
    real = charts.all_figures

    def counting(result, counts=None):
        calls.append(1)
        return real(result, counts)

    monkeypatch.setattr(charts, "all_figures", counting)
    return calls


def step_figure(html: str) -> dict:
    match = re.search(r'<script id="chart-step-time-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the step-time figure is on the page"
    return json.loads(match.group(1))


def test_figures_are_built_once_per_estimate_and_language(client, make_estimate, builds):
    est = make_estimate()
    first = client.get(f"/r/{est.share_token}/").content.decode()
    second = client.get(f"/r/{est.share_token}/").content.decode()
    assert len(builds) == 1
    assert step_figure(first) == step_figure(second)
    assert step_figure(first)["layout"]["title"]["text"].startswith("Step time: ")
    chinese = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    client.get(f"/zh-hans/r/{est.share_token}/")
    assert len(builds) == 2  # its own entry: the titles are translated
    assert step_figure(chinese)["layout"]["title"]["text"].startswith("单步时间：")
    other = make_estimate()
    client.get(f"/r/{other.share_token}/")
    assert len(builds) == 3  # another estimate never gets these figures


@pytest.fixture
def cache_down(monkeypatch):
    """The report pages' cache raises on every call, as an unreachable Redis does."""

    class Down:
        def get(self, *args, **kwargs):
            raise ConnectionError("cache unreachable")

        set = get

    monkeypatch.setattr(pages, "cache", Down())


def test_report_figures_survive_an_unreachable_cache(client, make_estimate, builds, cache_down):
    est = make_estimate()
    for _ in range(2):
        response = client.get(f"/r/{est.share_token}/")
        assert response.status_code == 200
        assert step_figure(response.content.decode())["data"]
    assert len(builds) == 2  # built on every request while the cache is down


@pytest.fixture
def table_builds(monkeypatch):
    """How many times the report's tables (reports.working.tables) were formatted."""
    from reports import working

    calls = []
    real = working.tables

    def counting(result, currency):
        calls.append(1)
        return real(result, currency)

    monkeypatch.setattr(working, "tables", counting)
    return calls


def test_tables_are_formatted_once_per_estimate_and_language(client, make_estimate, table_builds):
    est = make_estimate()
    first = client.get(f"/r/{est.share_token}/").content.decode()
    second = client.get(f"/r/{est.share_token}/").content.decode()
    assert len(table_builds) == 1
    assert "Memory per card" in first and "Memory per card" in second
    chinese = client.get(f"/zh-hans/r/{est.share_token}/").content.decode()
    assert len(table_builds) == 2  # its own entry: the labels are translated
    assert "每卡显存" in chinese and "Memory per card" not in chinese
    client.get(f"/r/{make_estimate().share_token}/")
    assert len(table_builds) == 3  # another estimate never gets these tables


def test_report_tables_survive_an_unreachable_cache(client, make_estimate, table_builds, cache_down):
    est = make_estimate()
    for _ in range(2):
        response = client.get(f"/r/{est.share_token}/")
        assert response.status_code == 200
        assert "Memory per card" in response.content.decode()
    assert len(table_builds) == 2  # formatted on every request while the cache is down
