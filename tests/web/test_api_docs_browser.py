"""Issue 24 item 2, in headless Chromium: Swagger UI and Redoc draw the API under the site's
Content-Security-Policy (no inline script is refused, nothing is fetched from elsewhere)."""

import os
from pathlib import Path

import pytest

from .test_browser import browser  # noqa: F401  (the shared Chromium fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("CLUSTERPLAN_SCREENSHOTS")


def _open(browser, url: str, lang: str):  # noqa: F811
    context = browser.new_context(locale=lang, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    refused: list[str] = []
    page.on(
        "console", lambda msg: refused.append(msg.text) if "Content Security Policy" in msg.text else None
    )
    page.on("pageerror", lambda exc: refused.append(str(exc)))
    outside: list[str] = []
    page.on(
        "request",
        lambda req: outside.append(req.url) if not req.url.startswith(url.split("/api")[0]) else None,
    )
    page.goto(url)
    return context, page, refused, outside


@pytest.mark.parametrize("lang", ["en-US", "zh-CN"])
def test_swagger_ui_renders_the_operations_under_the_csp(browser, live_server, lang):  # noqa: F811
    context, page, refused, outside = _open(browser, f"{live_server.url}/api/v1/docs", lang)
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert "ClusterPlan API" in page.inner_text(".swagger-ui .info")
    assert page.locator(".opblock-summary-path", has_text="/api/v1/estimates").count() >= 1
    assert refused == [] and [u for u in outside if not u.startswith(("data:", "blob:"))] == []
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"api-docs-{lang[:2]}.png"))
    context.close()


def test_redoc_renders_the_operations_under_the_csp(browser, live_server):  # noqa: F811
    context, page, refused, outside = _open(browser, f"{live_server.url}/api/v1/redoc", "en-US")
    page.wait_for_selector("h1", timeout=30_000)
    assert "ClusterPlan API" in page.inner_text("h1")
    assert page.get_by_text("/api/v1/estimates", exact=False).count() >= 1
    # Redoc's bundle always asks for its badge from cdn.redoc.ly: the CSP refuses it, Redoc hides it
    badge = "https://cdn.redoc.ly/redoc/logo-mini.svg"
    assert [m for m in refused if badge not in m] == []
    assert [u for u in outside if not u.startswith(("data:", "blob:")) and u != badge] == []
    context.close()


def test_the_pages_carry_the_csp_header(client):
    for path in ("/api/v1/docs", "/api/v1/redoc"):
        policy = client.get(path)["Content-Security-Policy"]
        assert (
            "script-src 'self'" in policy
            and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
        )
