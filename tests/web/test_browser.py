"""The product in headless Chromium (Debian's `chromium`, driven by Playwright): fill the form from a
preset, submit, see the headline and drawn Plotly charts, open the share link in a fresh context
and see the same numbers, switch to Chinese."""

import os
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{CHROMIUM} is missing; CI must install it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = (
        "true"  # Playwright's sync API runs an event loop in this thread
    )
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


def _headline(page) -> dict[str, str]:
    return {
        key: page.inner_text(f"#headline-{key} .value")
        for key in ("cards", "servers", "days", "capex", "power")
    }


def test_form_report_share_and_chinese(browser, live_server):
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/")
    page.check("input[name=model_source][value=preset]")
    page.select_option("select[name=preset]", "llama-3.1-70b")
    page.select_option("select[name=accelerator]", "ascend-910b2")
    page.fill("input[name=tokens]", "500B")
    page.check("input[name=sizing][value=deadline]")
    page.fill("input[name=target_days]", "30")
    assert page.is_hidden("input[name=cards]")  # with JavaScript, the other sizing mode folds away
    page.click("#submit-estimate")
    page.wait_for_url("**/r/*/")

    headline = _headline(page)
    assert all(v and v != "—" for v in headline.values()), headline
    page.wait_for_selector("#chart-step-time .main-svg, #chart-cards-days .main-svg", timeout=20_000)
    assert page.locator(".plot-container").count() >= 4
    assert not errors, errors
    share_url = page.input_value("#share-url")
    assert share_url.startswith(live_server.url)

    fresh = browser.new_context(locale="en-US")  # no cookies, no session: a colleague opening the link
    other = fresh.new_page()
    other.goto(share_url)
    assert _headline(other) == headline
    other.wait_for_selector(".main-svg", timeout=20_000)

    other.click("form.lang button[value=zh-hans]")
    other.wait_for_url("**/zh-hans/r/*/")
    assert other.locator("html").get_attribute("lang") == "zh-hans"
    assert "卡数" in other.inner_text("#headline-cards .label")
    assert "天" in other.inner_text("#headline-days .value")
    assert other.inner_text("#headline-cards .value").replace(",", "") == headline["cards"].replace(",", "")
    fresh.close()
    context.close()
