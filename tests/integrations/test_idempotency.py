"""Idempotency-Key on the API's POSTs (integrations.idempotency, integrations.middleware)."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations import idempotency
from integrations.models import Batch, IdempotencyRecord
from reports.models import Estimate
from sweeps.models import Sweep

pytestmark = pytest.mark.django_db

KEY = "3f2b6c1e-8d4a-4c55-9a0e-7b1d2e3f4a5b"


def post(client, path, body, key=KEY, **extra):
    return client.post(
        path, json.dumps(body), content_type="application/json", HTTP_IDEMPOTENCY_KEY=key, **extra
    )


def test_a_retried_post_creates_one_estimate_and_answers_the_first_response(user_client, scenario):
    first = post(user_client, "/api/v1/estimates", scenario)
    again = post(user_client, "/api/v1/estimates", scenario)
    assert first.status_code == again.status_code == 201
    assert Estimate.objects.count() == 1
    assert again.json() == first.json()
    assert (
        again["Location"] == first["Location"] == f"http://testserver/api/v1/estimates/{first.json()['id']}"
    )
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first


def test_the_same_key_with_another_body_answers_409_in_the_one_error_shape(user_client, scenario):
    assert post(user_client, "/api/v1/estimates", scenario).status_code == 201
    changed = {**scenario, "cluster": {"cards": 128}}
    r = post(user_client, "/api/v1/estimates", changed)
    assert r.status_code == 409
    assert r.json()["errors"][0]["field"] == "Idempotency-Key"
    assert Estimate.objects.count() == 1
    # the same body on another endpoint is another request too
    assert post(user_client, "/api/v1/estimates/batch", scenario).status_code == 409


def test_without_the_header_every_post_runs(user_client, scenario):
    for _ in range(2):
        r = user_client.post("/api/v1/estimates", scenario, format="json")
        assert r.status_code == 201
    assert Estimate.objects.count() == 2


@pytest.mark.parametrize(
    "key",
    ["short", "x" * 256, "has space in it 1234", "ümlaut-0123456789abc", ""],
)
def test_a_key_of_the_wrong_length_or_characters_answers_400(user_client, scenario, key):
    r = post(user_client, "/api/v1/estimates", scenario, key=key)
    assert r.status_code == 400
    assert r.json() == {
        "errors": [{"field": "Idempotency-Key", "message": f"must be {idempotency.KEY_RULE}"}]
    }
    assert Estimate.objects.count() == 0


def test_a_quoted_key_is_the_same_key(user_client, scenario):
    post(user_client, "/api/v1/estimates", scenario)
    assert post(user_client, "/api/v1/estimates", scenario, key=f'"{KEY}"')["Idempotent-Replayed"] == "true"
    assert Estimate.objects.count() == 1


def test_keys_are_scoped_to_the_caller(user_client, other_client, api_client, scenario):
    post(user_client, "/api/v1/estimates", scenario)
    r = post(other_client, "/api/v1/estimates", scenario)  # bob's key is not alice's
    assert r.status_code == 201 and "Idempotent-Replayed" not in r
    post(api_client, "/api/v1/estimates", scenario, REMOTE_ADDR="198.51.100.7")
    post(api_client, "/api/v1/estimates", scenario, REMOTE_ADDR="198.51.100.7")  # a repeat
    post(api_client, "/api/v1/estimates", scenario, REMOTE_ADDR="198.51.100.8")  # another address
    assert Estimate.objects.count() == 4
    assert Estimate.objects.filter(owner=None).count() == 2


def test_a_refusal_is_repeated_too(user_client, scenario):
    bad = {**scenario, "training": {"tokens": -1}}
    first = post(user_client, "/api/v1/estimates", bad)
    again = post(user_client, "/api/v1/estimates", bad)
    assert first.status_code == again.status_code == 400
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"


def test_a_repeat_while_the_first_request_runs_answers_409_and_creates_nothing(user, user_client, scenario):
    """What a concurrent repeat finds: the first request's record, still without a response."""
    r = post(user_client, "/api/v1/estimates", scenario)
    record = IdempotencyRecord.objects.get()
    IdempotencyRecord.objects.filter(pk=record.pk).update(status_code=None, body=b"")
    r = post(user_client, "/api/v1/estimates", scenario)
    assert r.status_code == 409 and r["Retry-After"] == "1"
    assert "still being processed" in r.json()["errors"][0]["message"]
    assert Estimate.objects.count() == 1
    # a first request whose process died: its heartbeat stopped, so its lease ran out a moment ago
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert post(user_client, "/api/v1/estimates", scenario).status_code == 201
    assert Estimate.objects.count() == 2
    assert IdempotencyRecord.objects.get().lease_expires_at is None  # answered: no lease any more


def test_after_24_hours_the_key_is_new_again_and_purged(user_client, scenario):
    post(user_client, "/api/v1/estimates", scenario)
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=24, seconds=1))
    r = post(user_client, "/api/v1/estimates", scenario)
    assert r.status_code == 201 and "Idempotent-Replayed" not in r
    assert Estimate.objects.count() == 2
    other = "a" * 16
    post(user_client, "/api/v1/estimates", scenario, key=other)
    IdempotencyRecord.objects.filter(key=other).update(created_at=timezone.now() - timedelta(hours=25))
    assert idempotency.purge() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == [KEY]


def test_batch_and_sweep_posts_are_idempotent_too(user_client, scenario, monkeypatch):
    from sweeps import services

    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    batch = {"scenarios": [scenario, scenario]}
    a, b = (post(user_client, "/api/v1/estimates/batch", batch, key="batch-key-0000000001") for _ in range(2))
    assert a.status_code == b.status_code == 202 and a.json() == b.json()
    assert Batch.objects.count() == 1 and Batch.objects.get().items.count() == 2
    sweep = {"name": "s", "base": scenario, "axes": {"efficiency.mfu": [0.4, 0.5]}}
    a, b = (post(user_client, "/api/v1/sweeps", sweep, key="sweep-key-0000000001") for _ in range(2))
    assert a.status_code == b.status_code == 202 and a.json() == b.json()
    assert Sweep.objects.count() == 1


def test_a_server_error_is_not_remembered(user_client, scenario, monkeypatch):
    from reports import services

    calls = []

    def broken(**kwargs):
        calls.append(1)
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "create_estimate", broken)
    user_client.raise_request_exception = False
    assert post(user_client, "/api/v1/estimates", scenario).status_code == 500
    assert post(user_client, "/api/v1/estimates", scenario).status_code == 500
    assert len(calls) == 2 and IdempotencyRecord.objects.count() == 0


def test_the_schema_documents_the_header_on_every_post(api_client):
    schema = api_client.get("/api/v1/schema", HTTP_ACCEPT="application/json").json()
    posts = {path: ops["post"] for path, ops in schema["paths"].items() if "post" in ops}
    assert {"/api/v1/estimates", "/api/v1/estimates/batch", "/api/v1/sweeps"} <= set(posts)
    for path, op in posts.items():
        names = [p["name"] for p in op.get("parameters", []) if p["in"] == "header"]
        assert names.count("Idempotency-Key") == 1, path
        assert "409" in op["responses"], path


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_create_one_estimate(live_server, user, scenario, monkeypatch):
    """Two clients send the same keyed POST at the same moment to the threaded live server; the
    planning holds until the other request has its answer, so they overlap. One runs; the other
    answers 409 (still running)."""
    import threading
    import urllib.error
    import urllib.request

    from accounts.services import issue_token
    from reports import services

    original = services.create_estimate

    answered = threading.Event()  # the other request has its answer: the planning may finish

    def slow(**kwargs):
        answered.wait(30)  # (no fixed sleep: both would plan and the test fails, after 30 s)
        return original(**kwargs)

    monkeypatch.setattr(services, "create_estimate", slow)
    _, token = issue_token(user=user, name="quoting system")
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def send():
        req = urllib.request.Request(
            f"{live_server.url}/api/v1/estimates",
            data=json.dumps(scenario).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Token {token}",
                "Idempotency-Key": KEY,
            },
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)
            answered.set()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert sorted(statuses) == [201, 409]
    assert Estimate.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_keeps_a_running_request_leased_and_a_dead_one_frees_its_key(settings):
    """IDEMPOTENCY_LEASE_S = 0.6 s, renewed every 0.2 s: while the heartbeat runs the lease stays
    ahead of the clock, past 3 lease periods; once it stops (the process died), the lease runs
    out within one period and claim() hands the key to the repeat."""
    import threading
    import time

    settings.IDEMPOTENCY_LEASE_S = 0.6
    first = idempotency.claim("user:1", KEY, "f" * 64, "/api/v1/estimates")
    assert first.record is not None
    stop = threading.Event()
    beat = threading.Thread(target=idempotency._heartbeat, args=(first.record.pk, stop))
    beat.start()
    try:
        time.sleep(1.8)  # three lease periods: without renewals it would have expired
        assert IdempotencyRecord.objects.get().lease_expires_at > timezone.now()
        assert idempotency.claim("user:1", KEY, "f" * 64, "/api/v1/estimates").response.status_code == 409
    finally:
        stop.set()
        beat.join()
    time.sleep(0.7)  # one lease period after the last beat
    again = idempotency.claim("user:1", KEY, "f" * 64, "/api/v1/estimates")
    assert again.record is not None and again.record.pk == first.record.pk
