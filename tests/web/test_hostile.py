"""Hostile and careless input against the web product (issue 12), one test per finding."""

import copy
import json
import subprocess
import sys

import pytest
from django.test import Client, override_settings

from estimator import limits
from reports.models import Estimate

pytestmark = pytest.mark.django_db

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _rates(**rates):
    from django.conf import settings

    merged = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates}
    return {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": merged}


def fields(response) -> list[str]:
    return [e["field"] for e in response.json()["errors"]]


# ---- identity and rate limits -------------------------------------------------------------------


def test_x_forwarded_for_does_not_buy_a_new_identity(api_client):
    with override_settings(REST_FRAMEWORK=_rates(anon="3/minute")):
        codes = [
            api_client.get("/api/v1/catalog", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
            for i in range(4)
        ]
    assert codes == [200, 200, 200, 429]


def test_trusted_proxies_name_the_client(api_client):
    # one trusted proxy appends the peer it saw: the last entry is the client, earlier ones are not
    with override_settings(REST_FRAMEWORK=_rates(anon="2/minute"), TRUSTED_PROXIES=1):
        a = [
            api_client.get("/api/v1/catalog", HTTP_X_FORWARDED_FOR=f"6.6.6.{i}, 198.51.100.7")
            for i in range(3)
        ]
        b = api_client.get("/api/v1/catalog", HTTP_X_FORWARDED_FOR="198.51.100.8")
    assert [r.status_code for r in a] == [200, 200, 429]
    assert b.status_code == 200


def test_throttle_counters_are_shared_with_other_processes(settings):
    """Not per-process memory: another process (a second gunicorn worker) sees the same counter."""
    assert "locmem" not in settings.CACHES["default"]["BACKEND"].lower()
    if "DatabaseCache" in settings.CACHES["default"]["BACKEND"]:
        pytest.skip("the database cache lives in this test's transaction; Redis is checked in CI")
    from django.core.cache import cache

    cache.set("throttle_anon_203.0.113.9", [1.0, 2.0, 3.0], 60)
    code = "from django.core.cache import cache; print(len(cache.get('throttle_anon_203.0.113.9') or []))"
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip().splitlines()[-1] == "3", out.stderr


def test_page_forms_are_throttled(client, scenario):
    from sweeps.pages import EXAMPLE_AXES

    body = {"name": "x", "base": json.dumps(scenario), "axes": json.dumps(EXAMPLE_AXES)}
    with override_settings(REST_FRAMEWORK=_rates(pages="2/minute")):
        codes = [client.post("/sweeps/", {**body, "axes": "{broken"}).status_code for _ in range(3)]
        other = client.post("/accounts/login/", {"username": "a", "password": "b"})
    assert codes == [400, 400, 429]
    assert other.status_code == 429 and int(other["Retry-After"]) > 0


def test_sweep_row_full_estimate_is_throttled(client, scenario, monkeypatch):
    from sweeps import services

    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    sweep = services.create_sweep(data={"base": scenario, "axes": {"cluster.cards": [64, 128]}})
    with override_settings(REST_FRAMEWORK=_rates(pages="1/minute")):
        first = client.post(f"/sweeps/{sweep.share_token}/scenario/0/estimate")
        second = client.post(f"/sweeps/{sweep.share_token}/scenario/1/estimate")
    assert first.status_code == 302 and second.status_code == 429
    assert Estimate.objects.count() == 1


def test_refused_sweep_requests_count_against_the_sweep_limit(api_client, scenario):
    bad = {"base": scenario, "axes": {"cluster.cards": []}}
    with override_settings(REST_FRAMEWORK=_rates(sweeps="2/hour")):
        codes = [api_client.post("/api/v1/sweeps", bad, format="json").status_code for _ in range(3)]
    assert codes == [400, 400, 429]


def test_login_attempts_are_limited(client, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    with override_settings(REST_FRAMEWORK=_rates(pages="100/minute")):
        for _ in range(3):
            assert client.post(
                "/accounts/login/", {"username": "alice", "password": "wrong"}
            ).status_code in (
                200,
                429,
            )
        locked = client.post("/accounts/login/", {"username": "alice", "password": "alice-password-1"})
    assert locked.status_code == 429  # even the right password, until the cool-off
    assert "_auth_user_id" not in client.session


# ---- bodies ---------------------------------------------------------------------------------------


def test_oversized_body_is_413_in_the_error_shape(api_client):
    body = b'{"name": "' + b"x" * (limits.MAX_BODY_BYTES + 10) + b'"}'
    r = api_client.generic("POST", "/api/v1/estimates", body, content_type="application/json")
    assert r.status_code == 413
    assert r.json()["errors"][0]["field"] == ""


def test_oversized_form_post_is_413_not_a_crash(client):
    r = client.post("/", {"extra": "x" * (limits.MAX_BODY_BYTES + 10)})
    assert r.status_code == 413


def test_chunked_body_is_refused_with_411(api_client, scenario):
    r = api_client.generic(
        "POST",
        "/api/v1/estimates",
        json.dumps(scenario),
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert r.status_code == 411 and r.json()["errors"][0]["field"] == ""


@pytest.mark.parametrize("url", ["/api/v1/estimates", "/api/v1/sweeps"])
def test_deep_json_is_a_clear_400(api_client, url):
    body = '{"base": ' + "[" * 300 + "]" * 300 + "}"
    r = api_client.generic("POST", url, body, content_type="application/json")
    assert r.status_code == 400, r.content
    assert "nested" in r.json()["errors"][0]["message"]


def test_duplicate_keys_are_refused_with_the_path(api_client):
    body = '{"model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e11, "tokens": 2e11}}'
    r = api_client.generic("POST", "/api/v1/estimates", body, content_type="application/json")
    assert r.status_code == 400 and fields(r) == ["training.tokens"]


def test_unknown_model_keys_are_ignored_not_stored(api_client, scenario):
    """A whole config.json is accepted as `model` (issue 20): a key the estimator does not read is
    listed in the result and never stored, whatever its size."""
    doc = copy.deepcopy(scenario)
    doc["model"]["padding"] = "x" * 500_000
    r = api_client.post("/api/v1/estimates", doc, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["result"]["model"]["ignored_fields"] == ["padding"]
    stored = Estimate.objects.get()
    assert "padding" not in stored.scenario["model"] and "x" * 1000 not in json.dumps(stored.input)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("name", "a\x00b"),
        ("name", "\ud800"),
        ("model.preset", "llama\x00"),
        ("hardware.accelerator", "\udfff"),
    ],
)
def test_nul_and_lone_surrogates_are_400_with_the_path(api_client, scenario, path, text):
    doc = copy.deepcopy(scenario)
    section, _, key = path.rpartition(".")
    (doc[section] if section else doc)[key] = text
    body = json.dumps(doc)  # escapes: \u0000 and \ud800 reach the server as JSON escapes
    r = api_client.generic("POST", "/api/v1/estimates", body, content_type="application/json")
    assert r.status_code == 400 and fields(r) == [path]


def test_nul_in_a_sweep_is_400_with_the_path(api_client, scenario):
    body = {"name": "s\x00", "base": scenario, "axes": {"cluster.cards": [64]}}
    r = api_client.generic("POST", "/api/v1/sweeps", json.dumps(body), content_type="application/json")
    assert r.status_code == 400 and fields(r) == ["name"]


# ---- numbers --------------------------------------------------------------------------------------


def test_a_fraction_of_a_token_is_refused(api_client, scenario):
    doc = copy.deepcopy(scenario)
    doc["training"]["tokens"] = 5e-324
    r = api_client.post("/api/v1/estimates", doc, format="json")
    assert r.status_code == 400 and fields(r) == ["training.tokens"]


def test_the_report_page_never_fails_on_a_stored_estimate(client, make_estimate):
    """Estimates stored before a rule existed keep opening: every number of a real result replaced
    by an extreme (subnormal, huge, negative, zero) still renders."""
    est = make_estimate()

    def extreme(node, value):
        if isinstance(node, dict):
            return {k: extreme(v, value) for k, v in node.items()}
        if isinstance(node, list):
            return [extreme(v, value) for v in node]
        if isinstance(node, float | int) and not isinstance(node, bool):
            return value
        return node

    for value in (5e-324, 1e308, -1e-9, 0, -(10**30)):
        Estimate.objects.filter(pk=est.pk).update(
            result=extreme(est.result, value), scenario=extreme(est.scenario, value)
        )
        for lang in ("", "/zh-hans"):
            r = client.get(f"{lang}/r/{est.share_token}/")
            assert r.status_code == 200, (value, lang)


@pytest.mark.parametrize(
    ("axis", "message"),
    [
        ({"start": 0.0, "stop": 1.7e308, "step": 5e-324}, "more than"),  # OverflowError before
        ({"start": -1.7e308, "stop": 1.7e308, "step": 1.0}, "more than"),
        ({"start": 0, "stop": 1, "step": 1e-9}, "more than"),
        ({"start": 1.0, "stop": 1.0000000000001, "step": 1e-15}, "equal"),
    ],
)
def test_sweep_ranges_with_extreme_steps_are_400(api_client, scenario, axis, message):
    r = api_client.post("/api/v1/sweeps", {"base": scenario, "axes": {"efficiency.mfu": axis}}, format="json")
    assert r.status_code == 400, r.content
    assert fields(r) == ["axes.efficiency.mfu"] and message in r.json()["errors"][0]["message"]


def test_string_axes_are_capped_before_validation(api_client, scenario):
    values = [f"chip-{i}" for i in range(limits.MAX_TEXT_AXIS_VALUES + 1)]
    r = api_client.post(
        "/api/v1/sweeps", {"base": scenario, "axes": {"hardware.accelerator": values}}, format="json"
    )
    assert r.status_code == 400 and fields(r) == ["axes.hardware.accelerator"]
    assert f"{limits.MAX_TEXT_AXIS_VALUES:,}" in r.json()["errors"][0]["message"]


def test_the_active_sweep_cap_is_checked_before_validation(api_client, scenario, settings, monkeypatch):
    from sweeps import services

    settings.SWEEP_MAX_ACTIVE_ANON = 1
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    ok = api_client.post("/api/v1/sweeps", {"base": scenario, "axes": {"cluster.cards": [64]}}, format="json")
    assert ok.status_code == 202
    calls = []
    monkeypatch.setattr(services.estimator_sweep, "validate_sweep", lambda *a, **k: calls.append(1))
    r = api_client.post("/api/v1/sweeps", {"base": scenario, "axes": {"cluster.cards": [128]}}, format="json")
    assert r.status_code == 400 and "running" in r.json()["errors"][0]["message"]
    assert calls == []  # refused without spending validation work


# ---- what comes out -------------------------------------------------------------------------------


def test_report_csv_cells_cannot_run_as_formulas(client, make_estimate, scenario):
    est = make_estimate(data={**scenario, "name": '=HYPERLINK("http://evil.example","x")'})
    text = client.get(f"/r/{est.share_token}/report.csv").content.decode("utf-8-sig")
    cells = [cell for line in text.splitlines() for cell in line.split(",")]
    assert not any(c.startswith(("=", "+", "@")) for c in cells)
    assert "'=HYPERLINK(" in text


def test_sweep_chart_labels_are_text_not_html():
    from sweeps import charts

    axes = [
        {"field": "hardware.accelerator.name", "values": ['<a href="//evil.example/">x</a>', "b"]},
        {"field": "cluster.cards", "values": [64, 128]},
    ]
    item = {
        "metric": "compute.wall_clock_days",
        "x": "cluster.cards",
        "y": axes[0]["field"],
        "z": [[1, 2], [3, 4]],
    }
    fig = json.loads(charts.heatmap(item, axes).to_json())
    assert fig["data"][0]["y"][0] == '&lt;a href="//evil.example/"&gt;x&lt;/a&gt;'
    summary = {"pareto": {"cost.run.owned": [[0, 1.0, 2.0]]}, "sample": []}
    fig = json.loads(charts.pareto(summary, lambda i: "<b>bold</b>").to_json())
    assert fig["data"][0]["text"][0].startswith("&lt;b&gt;bold&lt;/b&gt;<br>")  # the tag shown as text


# ---- redirects and headers ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["//evil.example/", "//evil.example/r/abc/", "/\\evil.example/"])
def test_language_redirect_never_leaves_the_host(client, path):
    # PATH_INFO as a server passes it (the test client would parse "//host/" as a host)
    r = client.get("/", PATH_INFO=path, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    location = r.headers.get("Location", "")
    assert not location.startswith("//") and "evil.example" not in location.split("/")[2:3]
    if location:
        assert location.startswith("/") and not location.startswith(("//", "/\\"))


def test_language_redirect_still_works_for_real_pages(client):
    r = client.get("/validation/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert r.status_code == 302 and r["Location"] == "/zh-hans/validation/"


def test_pages_carry_a_content_security_policy(client):
    csp = client.get("/")["Content-Security-Policy"]
    script_src = csp.split("script-src")[1].split(";")[0]
    assert (
        "'self'" in script_src and "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    )
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp


def _unnonced_inline_scripts(response) -> list[str]:
    """Inline scripts that would run (no src, not a JSON data block) without the response's nonce:
    the CSP blocks them, so each one is a broken page."""
    import re

    found = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"])
    nonce = found.group(1) if found else None
    tags = re.findall(r"<script\b([^>]*)>", response.content.decode())
    return [
        attrs
        for attrs in tags
        if "src=" not in attrs and "application/json" not in attrs and f'nonce="{nonce}"' not in attrs
    ]


def test_no_page_has_an_inline_script_the_policy_would_block(client, scenario, make_estimate, monkeypatch):
    from sweeps import services

    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    axes = {"cluster.cards": [64, 128], "hardware.accelerator": ["ascend-910b2", "h100-sxm"]}
    sweep = services.create_sweep(data={"base": scenario, "axes": axes})
    est = make_estimate()
    urls = ["/", "/sweeps/", f"/sweeps/{sweep.share_token}/", f"/r/{est.share_token}/", "/validation/"]
    for url in urls:
        r = client.get(url)
        assert r.status_code == 200 and _unnonced_inline_scripts(r) == [], url
    services.run_chunk(sweep_id=sweep.pk, index=0)  # the finished report draws its charts
    r = client.get(f"/sweeps/{sweep.share_token}/")
    assert r.status_code == 200 and _unnonced_inline_scripts(r) == []


def test_anonymous_client_without_a_session_cannot_spoof_via_headers():
    c = Client(REMOTE_ADDR="203.0.113.5")
    from api.throttling import client_ip

    class R:
        META = {"REMOTE_ADDR": "203.0.113.5", "HTTP_X_FORWARDED_FOR": "1.2.3.4"}

    assert client_ip(R) == "203.0.113.5"
    assert c.get("/api/v1/catalog").status_code == 200
