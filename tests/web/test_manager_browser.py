"""Issue 11's "Must show", in headless Chromium (Debian's chromium via Playwright): the Chinese report
of the source article's example without the core's English sentences, the over-budget block, a
comparison in both languages with its .xlsx, and phone-width pages without sideways scrolling.

Set CLUSTERPLAN_SCREENSHOTS=docs/screenshots to (re)write the README's screenshots."""

import io
import os
import re
from pathlib import Path

import pytest

from estimator.plan.compose import estimate as plan
from reports.services import create_estimate

from .test_browser import browser  # noqa: F401  (the shared Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("CLUSTERPLAN_SCREENSHOTS")
BUDGET = 50e6  # 50 M CNY
ARTICLE = {  # the source article's example (errata applied), priced in CNY with a 50 M CNY budget
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
    "cost": {"currency": "CNY", "budget": BUDGET},
}
# Sentences of the page itself that must not survive in Chinese (besides the core's, collected below).
PAGE_PHRASES = [
    "likely between",
    "Chance of missing",
    "Over budget",
    "Within budget",
    "buys",
    "Warnings",
    "Advice",
    "Starting configuration",
    "Assumptions and sources",
    "The working",
    "slower per step",
    "Chosen:",
    "Step time",
    "Memory per card",
    "Cost breakdown",
    "Cards against days",
    "cost (",
    "days",
    "seconds",
    "as needed for the global batch",
    "on, overlapped with backward",
    "scenario input",
    "catalog defaults",
    "layout model prediction",
    "years",
]


def _shot(page, name: str, until: str | None = None) -> None:
    """The page as docs/screenshots/<name>.png: the whole page, or its top down to the element
    `until` (the README's first picture: the headline cards, the warnings and the first charts)."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        clip = None
        if until:
            box = page.locator(until).bounding_box()
            clip = {
                "x": 0,
                "y": 0,
                "width": page.viewport_size["width"],
                "height": box["y"] + box["height"] + 16,
            }
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True, clip=clip)


def _core_english(result: dict) -> list[str]:
    """Every English sentence the core wrote into this result (its defaults for codes + params)."""
    out = []
    for item in result.get("warnings", []) + result.get("advice", []):
        out += [item.get("message"), item.get("suggestion")]
    for row in result.get("starting_configuration", []):
        out.append(row.get("reason"))
        if row.get("value_code"):
            out.append(row.get("value"))
    for row in result.get("assumptions", []):
        out.append(row.get("name"))
        if row.get("source_code"):
            out.append(row.get("source"))
    return [s for s in out if isinstance(s, str) and len(s) > 3]


def _english_left(text: str, phrases: list[str]) -> list[str]:
    return [p for p in phrases if p in text]


def _body_text(page) -> str:
    """The page's own text, chart text included; citations quoted as published (lang="en", the
    catalog's sources) left out."""
    page.wait_for_selector("#chart-cost .main-svg", timeout=30_000)
    return page.evaluate(
        """() => { const m = document.querySelector("main").cloneNode(true);
        m.querySelectorAll("[lang=en]").forEach((el) => el.remove());
        document.body.appendChild(m); const t = m.innerText; m.remove(); return t; }"""
    )


@pytest.fixture
def article_report(db):
    return create_estimate(data={**ARTICLE, "name": "70B 稠密模型，5000亿 token，30 天"}, owner=None)


def test_chinese_report_has_no_english_sentence(browser, live_server, article_report):  # noqa: F811
    result = article_report.result
    core = _core_english(result)
    assert len(core) >= 15  # the core did write its English defaults (the list is not empty)
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/zh-hans/r/{article_report.share_token}/")
    text = _body_text(page)
    assert _english_left(text, core) == []
    assert _english_left(text, PAGE_PHRASES) == []
    capex = page.inner_text("#headline-capex .value")
    assert "万" in capex or "亿" in capex, capex  # CLDR's Chinese compact units, not "87.3M CNY"
    assert "错过" in page.inner_text("#headline-days .why")  # the deadline card gives the chance of missing
    assert not errors, errors
    _shot(page, "report-zh")
    context.close()
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/r/{article_report.share_token}/")
    page.wait_for_selector("#chart-cost .main-svg", timeout=30_000)
    assert "Chance of missing the 30 days deadline" in page.inner_text("#headline-days .why")
    _shot(page, "report-en")
    page.wait_for_selector("#chart-cards-days .main-svg", timeout=30_000)
    _shot(page, "report-en-top", until="#chart-cards-days")  # the README's first picture
    context.close()


def test_over_budget_block_on_top_with_shortfall_and_what_50m_buys(browser, live_server, article_report):  # noqa: F811
    result = article_report.result
    capex = result["cost"]["capex"]["total"]
    sized = plan({**ARTICLE, "cluster": {"budget": BUDGET}})["result"]
    by_budget = sized["compute"]
    assert capex > BUDGET  # the article's plan is over a 50 M CNY budget
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.goto(f"{live_server.url}/zh-hans/r/{article_report.share_token}/")
    block = page.locator("#budget")
    assert block.is_visible()
    assert block.bounding_box()["y"] < page.locator("#headline-cards").bounding_box()["y"]  # budget first
    text = block.inner_text()
    shortfall_wan = round((capex - BUDGET) / 1e4)  # in 万元, as the page writes money in Chinese
    assert "超出预算" in text and f"¥{shortfall_wan:,}万".replace(",", "") in text.replace(",", "")
    affords = page.inner_text("#budget-affords")
    assert f"{by_budget['cards']:,}" in affords and "张卡" in affords
    # what the budget buys: the budget-sized plan, its days with failures when the plan counts them
    days = (sized.get("goodput") or {}).get("wall_clock_days") or by_budget["wall_clock_days"]
    assert f"{days:.1f}" in affords or f"{days:.0f}" in affords
    context.close()


def test_comparison_in_both_languages_and_xlsx(browser, live_server, article_report):  # noqa: F811
    from openpyxl import load_workbook

    other = create_estimate(data={**ARTICLE, "cluster": {"target_days": 60}, "name": "60 days"}, owner=None)
    url = f"{live_server.url}/compare/?r={article_report.share_token}&r={live_server.url}/r/{other.share_token}/"
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.goto(url)
    table = page.locator("#compare-table")
    assert table.is_visible()
    assert page.locator("#compare-table tr.differs[data-key=cards]").count() == 1
    assert page.locator("#compare-table tr.differs[data-key=model]").count() == 0  # same model
    _shot(page, "compare-en")
    page.goto(url.replace("/compare/", "/zh-hans/compare/"))
    assert "方案对比" in page.inner_text("h1") and "卡数" in page.inner_text("#compare-table")
    _shot(page, "compare-zh")
    response = page.request.get(live_server.url + page.get_attribute("#compare-xlsx", "href"))
    assert response.ok
    ws = load_workbook(io.BytesIO(response.body())).active
    rows = {r[0]: r[2:] for r in ws.iter_rows(values_only=True)}  # label, unit, a column per report
    for est, col in ((article_report, 0), (other, 1)):
        body = page.request.get(f"{live_server.url}/r/{est.share_token}/report.json").json()["result"]
        assert rows["卡数"][col] == body["compute"]["cards"]
        assert rows["集群造价"][col] == pytest.approx(body["cost"]["capex"]["total"])
        assert rows["不计故障的天数"][col] == pytest.approx(body["compute"]["wall_clock_days"])
    context.close()


@pytest.mark.parametrize(
    "path", ["/zh-hans/r/{token}/", "/r/{token}/", "/sweeps/", "/", "/compare/?r={token}"]
)
def test_phone_width_has_no_sideways_scroll(browser, live_server, article_report, path):  # noqa: F811
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    page = context.new_page()
    page.goto(live_server.url + path.format(token=article_report.share_token))
    if "/r/" in path:
        page.wait_for_selector(".main-svg", timeout=30_000)
        if path.startswith("/zh-hans") and SHOTS:
            _shot(page, "report-phone-zh")
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 390, widths
    context.close()


def test_plotly_offers_no_cloud_and_no_logo(browser, live_server, article_report):  # noqa: F811
    page = browser.new_page()
    page.goto(f"{live_server.url}/r/{article_report.share_token}/")
    page.wait_for_selector("#chart-cost .modebar", state="attached", timeout=30_000)
    html = page.content()
    assert "plotly-logo" not in html and "modebar-btn--logo" not in html
    assert not re.search(r"(chart-studio|plot\.ly|plotly\.com)", page.inner_html("#charts"))
    assert page.locator("link[rel=icon]").count() == 1
    page.close()


def test_share_box_keeps_its_width_on_a_phone(browser, live_server, article_report):  # noqa: F811
    """Issue 24: the share link's box shrank to ~50 px at 390 px; it takes a row of its own."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/zh-hans/r/{article_report.share_token}/")
    box = page.locator("#share-url").bounding_box()
    assert box["width"] >= 300, box
    context.close()
