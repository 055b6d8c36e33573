"""The API's HTTP conventions (api.conventions, api.conditional, api.deprecation): one request and
its response for each. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import json
import logging
import re

import pytest
from django.test import override_settings

from reports.models import Estimate

pytestmark = pytest.mark.django_db


def _rates(**rates):
    from django.conf import settings

    merged = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates}
    return override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": merged})


def _error(response) -> dict:
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    body = response.json()
    assert set(body) == {"errors"} and body["errors"][0]["field"] == ""
    return body["errors"][0]


@pytest.mark.parametrize(
    ("method", "path", "extra", "status"),
    [
        ("get", "/api/v1/no-such-route", {}, 404),
        ("get", "/api/v1/estimates/not-a-number", {}, 404),  # the <int:pk> route does not match
        ("get", "/api/v1/teams/a/b/c/d", {}, 404),
        ("delete", "/api/v1/catalog", {}, 405),
        ("get", "/api/v1/catalog", {"HTTP_ACCEPT": "application/xml"}, 406),
        ("post", "/api/v1/estimates", {"data": "tokens=5", "content_type": "text/plain"}, 415),
    ],
)
def test_every_error_under_the_api_is_json_in_the_one_shape(client, method, path, extra, status):
    response = getattr(client, method)(path, **extra)
    assert response.status_code == status
    assert _error(response)["message"]


def test_an_error_outside_the_api_stays_a_page(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_request_id_is_echoed_or_generated_and_logged(client, caplog):
    sent = client.get("/api/v1/catalog", HTTP_X_REQUEST_ID="quote-7f3a-0001")
    assert sent["X-Request-Id"] == "quote-7f3a-0001"
    made = client.get("/api/v1/catalog")
    assert re.fullmatch(r"[0-9a-f]{32}", made["X-Request-Id"])
    hostile = client.get("/api/v1/catalog", HTTP_X_REQUEST_ID="<script>alert(1)</script>")
    assert re.fullmatch(r"[0-9a-f]{32}", hostile["X-Request-Id"])  # not echoed: replaced
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="api.requests"):
        client.get("/api/v1/nothing-here", HTTP_X_REQUEST_ID="trace-0123456789")
    (line,) = [r for r in caplog.records if r.name == "api.requests"]
    assert "GET /api/v1/nothing-here 404" in line.getMessage()
    # every line of the request carries its id, Django's own "Not Found" included
    assert {r.request_id for r in caplog.records} == {"trace-0123456789"}


def test_ratelimit_fields_count_down_and_a_429_says_when_to_retry(client):
    # anon: 3 per minute. After the 1st request 2 remain, after the 3rd none; the 4th is refused.
    # t is the seconds until the oldest counted request leaves the 60 s window: 60 right away.
    # DRF's per-user rate counts anonymous callers by address too: both policies are listed.
    with _rates(anon="3/minute", user="10/minute"):
        first = client.get("/api/v1/catalog")
        assert first["RateLimit-Policy"] == '"anon";q=3;w=60, "user";q=10;w=60'
        assert first["RateLimit"] == '"anon";r=2;t=60, "user";r=9;t=60'
        client.get("/api/v1/catalog")
        third = client.get("/api/v1/catalog")
        assert third["RateLimit"] == '"anon";r=0;t=60, "user";r=7;t=60'
        refused = client.get("/api/v1/catalog")
        assert refused.status_code == 429
        assert refused["RateLimit"].startswith('"anon";r=0;t=60')
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert "try again" in _error(refused)["message"]


def test_a_throttled_batch_gets_retry_after(user_client, scenario):
    # user: 3 per minute, 2 spent; a batch of 3 scenarios weighs 3 requests: refused. DRF's own
    # wait() gives None here (3 - 3 + 1 - 2 = -1 requests available), so no Retry-After came
    # before; now it is the time until the oldest of the 2 leaves the window (60 s).
    with _rates(user="3/minute"):
        user_client.get("/api/v1/teams"), user_client.get("/api/v1/teams")
        r = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario] * 3}, format="json")
        assert r.status_code == 429
        assert r["Retry-After"] == "60"
        assert r["RateLimit-Policy"] == '"user";q=3;w=60'
        assert r["RateLimit"] == '"user";r=0;t=60'


def test_a_shared_report_has_an_etag_and_answers_304(client, make_estimate):
    token = make_estimate().share_token
    first = client.get(f"/api/v1/reports/{token}")
    etag = first["ETag"]
    assert first.status_code == 200 and re.fullmatch(r'"[0-9a-f]{32}"', etag)
    again = client.get(f"/api/v1/reports/{token}", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    other = client.get(f"/api/v1/reports/{token}", HTTP_IF_NONE_MATCH='"something-else"')
    assert other.status_code == 200
    assert client.get("/api/v1/reports/nope", HTTP_IF_NONE_MATCH=etag).status_code == 404


def test_location_of_a_new_estimate_is_its_api_resource(user_client, api_client, scenario):
    mine = user_client.post("/api/v1/estimates", scenario, format="json")
    assert mine["Location"] == f"http://testserver/api/v1/estimates/{mine.json()['id']}"
    assert user_client.get(mine["Location"]).status_code == 200
    anonymous = api_client.post("/api/v1/estimates", scenario, format="json")
    assert anonymous["Location"] == anonymous.json()["report_url"]  # only the share link reaches it


def test_a_repeat_with_the_same_json_written_differently_is_a_replay(user_client, scenario):
    key = {"HTTP_IDEMPOTENCY_KEY": "6b1f3c9e-quote-0001"}
    compact = json.dumps(scenario, separators=(",", ":"))
    spaced = json.dumps(dict(reversed(list(scenario.items()))), indent=4)
    first = user_client.post("/api/v1/estimates", compact, content_type="application/json", **key)
    again = user_client.post("/api/v1/estimates", spaced, content_type="application/json", **key)
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and Estimate.objects.count() == 1


def test_timestamps_are_rfc3339_utc_with_z(user_client, scenario):
    zulu = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
    estimate = user_client.post("/api/v1/estimates", scenario, format="json").json()
    batch = user_client.post("/api/v1/estimates/batch", {"scenarios": [scenario]}, format="json").json()
    secret = user_client.get("/api/v1/webhooks/secret").json()
    for stamp in (estimate["created_at"], batch["created_at"], secret["created_at"]):
        assert zulu.fullmatch(stamp), stamp


def test_the_list_announces_its_deprecated_field(user_client, make_estimate, user):
    make_estimate(owner=user)
    r = user_client.get("/api/v1/estimates")
    # deprecated on 2026-12-02 00:00 UTC: 20,789 days after 1970-01-01 (56 years with 14 leap
    # days = 20,454, plus 335 days into 2026) x 86,400 s = 1,796,169,600
    assert r["Deprecation"] == "@1796169600"
    assert r["Sunset"] == "Wed, 30 Jun 2027 00:00:00 GMT"  # 210 days after a Wednesday: a Wednesday
    assert 'rel="deprecation"' in r["Link"]
    headline = r.json()["results"][0]["headline"]
    assert headline["capex_amount"]["currency"] == headline["currency"] == "USD"
    assert "Deprecation" not in user_client.get("/api/v1/teams")
