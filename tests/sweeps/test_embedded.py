"""`make run` on a fresh checkout: scripts/run_embedded.py with no REDIS_URL and no DATABASE_URL
(SQLite + kombu's filesystem broker + one real worker subprocess) completes sweeps started from the
browser form (without JavaScript, and in headless Chromium with the live progress bar), and stops
its worker on SIGTERM."""

import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from .conftest import BASE, ROOT, wait_for

pytestmark = pytest.mark.integration

AXES = {"cluster.cards": [512, 1024, 2048], "hardware.accelerator": ["ascend-910b2", "h100-sxm"]}
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Site:
    def __init__(self, url: str):
        self.url = url
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> str:
        with self.opener.open(self.url + path, timeout=10) as r:
            return r.read().decode()

    def status(self, token: str) -> dict:
        return json.loads(self.get(f"/api/v1/sweeps/shared/{token}"))

    def wait_final(self, token: str, timeout: float = 60) -> dict:
        def finished():
            s = self.status(token)
            return s if s["status"] in ("done", "failed", "cancelled") else None

        return wait_for(finished, timeout, interval=0.5, what="the sweep on the filesystem broker")


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("embedded")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "SQLITE_TEST_NAME")}
    env.update({"CLUSTERPLAN_VAR_DIR": str(tmp / "var"), "PYTHONUNBUFFERED": "1"})
    log_path = tmp / "run.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "scripts/run_embedded.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    site = Site(f"http://127.0.0.1:{port}")

    def up():
        try:
            return site.get("/sweeps/")
        except OSError:
            assert proc.poll() is None, log_path.read_text()
            return None

    try:
        wait_for(up, 60, interval=0.3, what="the embedded server")
        site.var = tmp / "var"
        yield site
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            log.close()
    text = log_path.read_text()
    assert code == 0, text[-3000:]
    assert "filesystem broker" in text
    assert "worker stopped" in text  # the worker subprocess went down with it (warm shutdown)
    assert "Traceback" not in text, text[-3000:]


def test_a_sweep_from_the_form_without_javascript(embedded):
    form = embedded.get("/sweeps/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": csrf, "name": "embedded", "base": json.dumps(BASE), "axes": json.dumps(AXES)}
    ).encode()
    with embedded.opener.open(urllib.request.Request(embedded.url + "/sweeps/", data=data), timeout=30) as r:
        report_url = r.geturl()  # the form redirects to the report page
        assert r.status == 200 and "embedded" in r.read().decode()
    token = re.search(r"/sweeps/([^/]+)/$", report_url).group(1)
    final = embedded.wait_final(token)
    assert final["status"] == "done", final
    assert final["progress"] == {"done": 6, "total": 6, "chunks_done": 1, "chunks_total": 1}
    page = embedded.get(f"/sweeps/{token}/")
    assert 'id="pareto"' in page and "Full estimate" in page
    csv_text = embedded.get(f"/api/v1/sweeps/shared/{token}/results?format=csv")
    assert len(csv_text.strip().splitlines()) == 7
    assert (embedded.var / "db.sqlite3").exists() and (embedded.var / "broker" / "control").is_dir()


@pytest.mark.browser
def test_a_sweep_in_chromium_with_live_progress_and_charts(embedded, tmp_path):
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{CHROMIUM} is missing; CI must install it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    axes = {
        "cluster.cards": {"start": 256, "stop": 16384, "step": 256},
        "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb"],
        "efficiency.mfu": [0.35, 0.45, 0.55],
    }
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(embedded.url + "/sweeps/")
            page.click("#sweep-json summary")  # the JSON form is folded away for experts
            page.fill("#id_name", "chromium sweep")
            page.fill("#id_axes", json.dumps(axes))
            page.click("#sweep-submit")
            page.wait_for_url("**/sweeps/*/")
            # the JS poller reloads the page when the sweep ends; then the charts are drawn
            page.wait_for_selector("#pareto .main-svg", timeout=60_000)
            page.wait_for_selector("#heat-0 .main-svg", timeout=10_000)
            assert "576" in page.inner_text("#sweep-status")
            assert page.locator("table.best tbody tr").count() >= 10
            page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)
            # a best configuration opens its full estimate
            page.locator("table.best button").first.click()
            page.wait_for_url("**/r/*/")
            assert errors == [], errors
        finally:
            browser.close()


SWEEP_ENGLISH = [  # the sweep report's English (charts, legends, tables) that must not show in Chinese
    "Time against cost",
    "days without failures",
    "run cost",
    "best trade-offs",
    "sample, owned",
    "Best by",
    "cluster cost",
    "Heatmaps",
    "Full estimate",
    "days",
    "scenarios",
]


@pytest.mark.browser
def test_a_sweep_from_the_builder_without_json_in_both_languages(embedded, tmp_path):
    """Issue 11: a sweep built from the builder (no JSON typed) runs to done; its report speaks
    Chinese (charts included) and fits a 390 px phone."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{CHROMIUM} is missing; CI must install it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # the builder's picture only: the sweep report's are tests/web/test_zh_words_browser.py's (one
    # writer a picture; this sweep over chips overwrote the README's sweep over three models)
    shots = os.environ.get("CLUSTERPLAN_SCREENSHOTS")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(embedded.url + "/zh-hans/sweeps/")
            assert page.input_value("select[name=currency]") == "CNY"  # currency follows the language
            assert page.is_hidden("#id_axes")  # no JSON in sight
            page.fill("input[name=name]", "构建器扫描")
            page.fill("input[name=budget]", "50000000")
            page.select_option("select[name=axis1_field]", "hardware.accelerator")
            page.select_option("select[name=axis1_accelerators]", ["ascend-910b2", "h100-sxm"])
            assert page.is_hidden("input[name=axis1_start]")  # numbers' pickers fold away for a chip axis
            page.select_option("select[name=axis2_field]", "cluster.cards")
            page.fill("input[name=axis2_start]", "512")
            page.fill("input[name=axis2_stop]", "2048")
            page.fill("input[name=axis2_step]", "512")
            page.select_option("select[name=axis3_field]", "efficiency.mfu")
            page.fill("input[name=axis3_list]", "0.35, 0.45")
            if shots:
                page.screenshot(path=f"{shots}/sweep-builder-zh.png", full_page=True)
            page.click("#builder-submit")
            page.wait_for_url("**/sweeps/*/")
            page.wait_for_selector("#pareto .main-svg", timeout=60_000)
            assert "16" in page.inner_text("#sweep-status")  # 2 chips x 4 sizes x 2 MFUs, all done
            text = page.inner_text("main")
            left = [phrase for phrase in SWEEP_ENGLISH if phrase in text]
            assert left == [], left
            assert "¥" in page.inner_text("#pareto") and "万" in page.inner_text("#pareto")
            legend = page.text_content("#pareto .legend")
            assert "h100-sxm" in legend and "ascend-910b2" in legend  # points coloured by accelerator
            assert page.locator("table.best").count() >= 2 and "造价" in text
            phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
            small = phone.new_page()
            small.goto(page.url)
            small.wait_for_selector("#pareto .main-svg", timeout=30_000)
            widths = small.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1] == 390, widths
            english = browser.new_context(locale="en-US").new_page()
            english.goto(page.url.replace("/zh-hans/", "/"))
            english.wait_for_selector("#pareto .main-svg", timeout=30_000)
            assert "Time against cost" in english.inner_text("main")
            assert errors == [], errors
        finally:
            browser.close()
