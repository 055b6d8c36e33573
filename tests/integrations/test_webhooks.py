"""Webhooks: a sweep or a batch names a callback; on completion one signed notification is
delivered by the Celery task (run eagerly here) to a receiver on 127.0.0.1, with retries and
backoff; every attempt is visible to the owner; targets are checked before and at sending."""

import base64
import hashlib
import hmac
import json
import socket
import time

import pytest
from standardwebhooks import Webhook

from integrations import delivery, signing, targets
from integrations.models import Callback, DeliveryAttempt
from sweeps import services
from sweeps.models import Sweep

pytestmark = pytest.mark.django_db

AXES = {"efficiency.mfu": [0.35, 0.45], "cluster.cards": [512, 1024]}  # 4 scenarios


def by_hand(secret: str, headers: dict, body: bytes) -> bool:
    """The Standard Webhooks signature computed from the specification, not with the library."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return f"v1,{expected}" in headers["webhook-signature"].split(" ")


def lower(headers: dict) -> dict:
    return {k.lower(): v for k, v in headers.items()}


@pytest.fixture
def run_sweep(user_client, django_capture_on_commit_callbacks, monkeypatch):
    """POST a sweep, then compute its chunks in-process (as a worker would) with commit hooks run."""
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)

    def run(body: dict, finish: bool = True) -> dict:
        with django_capture_on_commit_callbacks(execute=True):
            r = user_client.post("/api/v1/sweeps", body, format="json")
        assert r.status_code == 202, r.content
        if finish:
            sweep = Sweep.objects.get(pk=r.json()["id"])
            with django_capture_on_commit_callbacks(execute=True):
                for index in range(sweep.chunks_total):
                    services.run_chunk(sweep_id=sweep.pk, index=index, worker="test")
        return r.json()

    return run


def test_a_finished_sweep_sends_exactly_one_signed_notification(
    user_client, scenario, run_sweep, receiver, eager_celery, loopback_targets
):
    secret = user_client.get("/api/v1/webhooks/secret").json()["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    with receiver([204]) as r:
        body = run_sweep({"name": "fabric", "base": scenario, "axes": AXES, "callback": {"url": r.url}})
        sweep = Sweep.objects.get(pk=body["id"])
        assert sweep.status == "done"
        services.maybe_finish(sweep_id=sweep.pk)  # the end reported again: nothing more is sent
        services.cancel(sweep=sweep)
    assert len(r.received) == 1
    got = r.received[0]
    headers = lower(got["headers"])
    assert got["path"] == "/hooks/clusterplan?src=test"
    assert headers["content-type"] == "application/json"
    assert by_hand(secret, headers, got["body"])
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
    event = Webhook(secret).verify(got["body"], headers)  # what the docs tell receivers to do
    assert event["type"] == "sweep.done"
    assert event["data"]["id"] == sweep.pk and event["data"]["status"] == "done"
    assert event["data"]["progress"] == {"done": 4, "total": 4}
    assert event["data"]["status_url"] == f"http://testserver/api/v1/sweeps/{sweep.pk}"
    assert not by_hand(signing.new_secret(), headers, got["body"])  # another secret does not verify
    listed = user_client.get(f"/api/v1/webhooks/deliveries?sweep={sweep.pk}").json()
    assert listed["count"] == 1
    hook = listed["results"][0]
    assert hook["status"] == "delivered" and hook["event_id"] == headers["webhook-id"]
    assert [(a["attempt"], a["status_code"], a["error"]) for a in hook["attempts"]] == [(1, 204, "")]


def test_a_failing_receiver_gets_retries_with_the_same_message(
    user_client, scenario, run_sweep, receiver, eager_celery, loopback_targets
):
    loopback_targets.WEBHOOK_MAX_ATTEMPTS = 4
    with receiver([500, 503, 200]) as r:
        run_sweep({"base": scenario, "axes": AXES, "callback": {"url": r.url}})
    assert len(r.received) == 3
    assert len({x["headers"]["webhook-id"] for x in r.received}) == 1  # one message, three attempts
    assert len({x["body"] for x in r.received}) == 1
    hook = user_client.get("/api/v1/webhooks/deliveries").json()["results"][0]
    assert [a["status_code"] for a in hook["attempts"]] == [500, 503, 200]
    assert hook["attempts"][0]["error"] == "answered 500" and hook["status"] == "delivered"
    with receiver([500]) as r:
        run_sweep({"base": scenario, "axes": AXES, "callback": {"url": r.url}})
    assert len(r.received) == 4  # WEBHOOK_MAX_ATTEMPTS, then it gives up
    assert Callback.objects.order_by("-pk").first().status == "failed"


def test_backoff_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_BACKOFF_S, settings.WEBHOOK_BACKOFF_MAX_S = 10, 60
    delays = [delivery.backoff_s(n) for n in range(1, 6)]
    for delay, base in zip(delays, [10, 20, 40, 60, 60], strict=True):
        assert base <= delay <= base * 1.1


def test_a_cancelled_sweep_notifies_once(
    user_client,
    scenario,
    run_sweep,
    receiver,
    eager_celery,
    loopback_targets,
    django_capture_on_commit_callbacks,
):
    with receiver([200]) as r:
        body = run_sweep({"base": scenario, "axes": AXES, "callback": {"url": r.url}}, finish=False)
        for _ in range(2):
            with django_capture_on_commit_callbacks(execute=True):
                assert user_client.post(f"/api/v1/sweeps/{body['id']}/cancel").status_code == 200
    assert [json.loads(x["body"])["type"] for x in r.received] == ["sweep.cancelled"]


def test_a_batch_notifies_when_every_item_is_planned(
    user_client, scenario, receiver, eager_celery, loopback_targets, django_capture_on_commit_callbacks
):
    secret = user_client.get("/api/v1/webhooks/secret").json()["secret"]
    with receiver([200]) as r, django_capture_on_commit_callbacks(execute=True):
        body = user_client.post(
            "/api/v1/estimates/batch",
            {"scenarios": [scenario, {}], "callback": {"url": r.url}},
            format="json",
        ).json()
    assert len(r.received) == 1
    event = Webhook(secret).verify(r.received[0]["body"], lower(r.received[0]["headers"]))
    assert event["type"] == "batch.done"
    assert (event["data"]["count"], event["data"]["planned"], event["data"]["failed"]) == (2, 1, 1)
    assert event["data"]["compare_url"] == body["compare_url"]
    # answered before the batch was planned: every item waiting, the callback waiting for the end
    assert body["status"] == "queued" and [i["status"] for i in body["results"]] == [202, 202]
    assert body["callback"]["status"] == "waiting"
    again = user_client.get(body["url"]).json()
    assert again["status"] == "done" and again["callback"]["status"] == "delivered"


def test_after_a_rotation_both_secrets_sign_for_the_grace_period(
    user_client, scenario, receiver, eager_celery, loopback_targets, django_capture_on_commit_callbacks
):
    old = user_client.get("/api/v1/webhooks/secret").json()["secret"]
    rotated = user_client.post("/api/v1/webhooks/secret/rotate").json()
    assert rotated["secret"] != old and rotated["previous_valid_until"] is not None
    with receiver([200]) as r, django_capture_on_commit_callbacks(execute=True):
        user_client.post(
            "/api/v1/estimates/batch", {"scenarios": [scenario], "callback": {"url": r.url}}, format="json"
        )
    headers = lower(r.received[0]["headers"])
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert by_hand(old, headers, r.received[0]["body"]) and by_hand(
        rotated["secret"], headers, r.received[0]["body"]
    )
    loopback_targets.WEBHOOK_SECRET_GRACE_S = 0
    assert user_client.get("/api/v1/webhooks/secret").json()["previous_valid_until"] is None


def test_secrets_and_deliveries_are_private(
    user_client, other_client, api_client, scenario, run_sweep, loopback_targets
):
    mine = user_client.get("/api/v1/webhooks/secret").json()["secret"]
    assert other_client.get("/api/v1/webhooks/secret").json()["secret"] != mine
    assert api_client.get("/api/v1/webhooks/secret").status_code == 401
    run_sweep({"base": scenario, "axes": AXES, "callback": {"url": "http://127.0.0.1:9/x"}}, finish=False)
    assert user_client.get("/api/v1/webhooks/deliveries").json()["count"] == 1
    assert other_client.get("/api/v1/webhooks/deliveries").json()["count"] == 0
    assert user_client.get("/api/v1/webhooks/deliveries?sweep=abc").status_code == 400


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://172.16.0.9/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",  # cloud metadata (link-local)
        "https://100.64.0.1/hook",  # shared address space (CGNAT)
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://224.0.0.1/hook",
        "https://0.0.0.0/hook",
        "https://240.0.0.1/hook",  # reserved
        "https://localhost/hook",
        "https://api.localhost/hook",
        "http://quotes.example.com/hook",  # plain http in production
        "https://user:pw@quotes.example.com/hook",
        "ftp://quotes.example.com/hook",
        "https:///hook",
        "not a url",
        "https://quotes.example.com/hook#frag",
    ],
)
def test_production_refuses_inside_targets_at_submission(user_client, scenario, url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = settings.WEBHOOK_ALLOW_HTTP = False
    r = user_client.post(
        "/api/v1/estimates/batch", {"scenarios": [scenario], "callback": {"url": url}}, format="json"
    )
    assert r.status_code == 400
    assert r.json()["errors"][0]["field"] == "callback.url"
    r = user_client.post(
        "/api/v1/sweeps", {"base": scenario, "axes": AXES, "callback": {"url": url}}, format="json"
    )
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "callback.url"
    assert Sweep.objects.count() == 0


def test_a_public_https_target_is_accepted(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = settings.WEBHOOK_ALLOW_HTTP = False
    t = targets.check_url("https://quotes.example.com:8443/hooks/cp?x=1")
    assert (t.scheme, t.host, t.port, t.path, t.host_header) == (
        "https",
        "quotes.example.com",
        8443,
        "/hooks/cp?x=1",
        "quotes.example.com:8443",
    )
    assert targets.check_url("https://93.184.215.14/h").port == 443


def test_a_name_resolving_inside_is_refused_at_sending_time(monkeypatch, settings):
    """DNS rebinding: the name passed at submission, but now resolves to a private address."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    def fake(host, port, type=0):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    target = targets.check_url("https://quotes.example.com/h")
    with pytest.raises(targets.TargetError, match=r"10\.0\.0\.5"):
        targets.resolve(target)


def test_a_refused_target_at_sending_time_fails_without_sending(
    user_client, scenario, receiver, eager_celery, loopback_targets, django_capture_on_commit_callbacks
):
    with receiver([200]) as r:
        with django_capture_on_commit_callbacks(execute=False) as hooks:
            user_client.post(
                "/api/v1/estimates/batch",
                {"scenarios": [scenario], "callback": {"url": r.url}},
                format="json",
            )
        loopback_targets.WEBHOOK_ALLOW_PRIVATE_TARGETS = False  # the policy changed in between
        with django_capture_on_commit_callbacks(execute=True):
            for hook in hooks:
                hook()
    assert r.received == []
    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None and attempt.error.startswith("refused target")
    assert Callback.objects.get().status == "failed"


def test_redirects_are_not_followed(
    user_client, scenario, receiver, eager_celery, loopback_targets, django_capture_on_commit_callbacks
):
    loopback_targets.WEBHOOK_MAX_ATTEMPTS = 1
    with receiver([302]) as r, django_capture_on_commit_callbacks(execute=True):
        user_client.post(
            "/api/v1/estimates/batch", {"scenarios": [scenario], "callback": {"url": r.url}}, format="json"
        )
    assert len(r.received) == 1
    assert DeliveryAttempt.objects.get().error == "answered 302 (redirects are not followed)"


def test_a_duplicate_task_message_sends_nothing_twice(
    user_client,
    scenario,
    receiver,
    eager_celery,
    loopback_targets,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    with receiver([200]) as r:
        monkeypatch.setattr("integrations.callbacks.queue_attempt", lambda *a, **k: None)
        with django_capture_on_commit_callbacks(execute=True):
            user_client.post(
                "/api/v1/estimates/batch",
                {"scenarios": [scenario], "callback": {"url": r.url}},
                format="json",
            )
        callback = Callback.objects.get()
        assert delivery.attempt(callback.pk, 1)[0] == "delivered"
        assert delivery.attempt(callback.pk, 1)[0] == "skipped"
    assert len(r.received) == 1


def test_the_schema_documents_the_notifications(api_client):
    schema = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    assert set(schema["webhooks"]) == {"sweep_finished", "batch_done"}
    body = schema["webhooks"]["sweep_finished"]["post"]["requestBody"]["content"]["application/json"]
    event = schema["components"]["schemas"][body["schema"]["$ref"].rsplit("/", 1)[1]]
    assert set(event["properties"]) == {"type", "timestamp", "data"}
    assert "webhook-signature" in schema["webhooks"]["sweep_finished"]["post"]["description"]
    assert {"/api/v1/webhooks/secret", "/api/v1/webhooks/deliveries"} <= set(schema["paths"])


def test_production_defaults_refuse_inside_and_http_targets():
    """The documented compose set-up (DJANGO_DEBUG=0): webhooks to public https addresses only."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.web.test_deploy import compose_env

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env.update(compose_env(), CLUSTERPLAN_VAR_DIR=str(root / "var"))
    code = (
        "from django.conf import settings as s; print(s.WEBHOOK_ALLOW_PRIVATE_TARGETS, s.WEBHOOK_ALLOW_HTTP)"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.split()[-2:] == ["False", "False"], out.stdout + out.stderr


def test_a_failed_sweep_says_why(
    user_client,
    scenario,
    run_sweep,
    receiver,
    eager_celery,
    loopback_targets,
    django_capture_on_commit_callbacks,
):
    with receiver([200]) as r:
        body = run_sweep({"base": scenario, "axes": AXES, "callback": {"url": r.url}}, finish=False)
        with django_capture_on_commit_callbacks(execute=True):
            services.fail(sweep_id=body["id"], reason="chunk 0: the workers are gone")
    event = json.loads(r.received[0]["body"])
    assert len(r.received) == 1
    assert (event["type"], event["data"]["status"]) == ("sweep.failed", "failed")
    assert event["data"]["error"] == "chunk 0: the workers are gone"


def test_housekeeping_resends_a_lost_attempt(
    user_client,
    scenario,
    receiver,
    eager_celery,
    loopback_targets,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    """A worker died mid-attempt: the attempt is claimed and its record open, but never finished;
    housekeeping (and the workers' recovery loop) sends the next one once the claim is overdue,
    closes the open record as lost, and purges idempotency records past 24 hours."""
    from datetime import timedelta

    from django.utils import timezone

    from integrations import callbacks, tasks

    with receiver([200]) as r:
        monkeypatch.setattr(callbacks, "queue_attempt", lambda *a, **k: None)  # the message is lost
        with django_capture_on_commit_callbacks(execute=True):
            user_client.post(
                "/api/v1/estimates/batch",
                {"scenarios": [scenario], "callback": {"url": r.url}},
                format="json",
            )
        callback = Callback.objects.get()
        assert callback.status == "pending"
        # attempt 1 claimed by a worker that died: its record open, its due time past
        Callback.objects.filter(pk=callback.pk).update(
            attempts=1, next_attempt_at=timezone.now() - timedelta(seconds=delivery.RESEND_GRACE_S + 1)
        )
        DeliveryAttempt.objects.create(callback=callback, attempt=1, started_at=timezone.now())
        monkeypatch.undo()
        assert tasks.housekeeping() == {"idempotency_purged": 0, "deliveries_resent": 1}
    assert len(r.received) == 1
    callback.refresh_from_db()
    assert (callback.status, callback.attempts) == ("delivered", 2)
    lost, sent = DeliveryAttempt.objects.filter(callback=callback).order_by("attempt")
    assert lost.error == delivery.LOST and lost.finished_at is not None and lost.status_code is None
    assert (sent.status_code, sent.error) == (200, "")
