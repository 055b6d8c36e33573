"""Batches on real Celery worker subprocesses, on the test's own redis-server (never the shared
Redis): a worker killed with SIGKILL mid-batch, and Redis killed and started again empty
mid-batch. Each time every item ends planned exactly once, by the recovery loop of the workers
(no beat, no status read), and the webhook is delivered once."""

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from estimator import limits
from integrations.models import Batch, BatchItem, Callback
from reports.models import Estimate
from tests.sweeps.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

FAST_RECOVERY = {
    "BATCH_LEASE_S": "2",  # a dead worker's batch is free after 2 s
    "BATCH_STALL_S": "2",
    "RECOVERY_INTERVAL_S": "1",
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",  # the receiver is on 127.0.0.1 over http
    "WEBHOOK_ALLOW_HTTP": "1",
}


def heavy(n: int) -> list[dict]:
    base = {
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30},
    }
    return [{**base, "name": f"quote {i}"} for i in range(n)]


def post_batch(receiver_url: str, n: int) -> int:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("ops", password="pw-12345678"))
    r = client.post(
        "/api/v1/estimates/batch", {"scenarios": heavy(n), "callback": {"url": receiver_url}}, format="json"
    )
    assert r.status_code == 202, r.content
    return r.json()["id"]


def planned(batch_id: int) -> int:
    return BatchItem.objects.filter(batch_id=batch_id).exclude(status=202).count()


def wait_notified(r) -> None:
    """The receiver got the notification and the worker recorded it delivered: the receiver keeps
    the POST before it answers, so the worker marks the Callback delivered a few ms after the
    request shows in `r.received` (asserting it at once raced that update)."""
    wait_for(lambda: r.received, 60, what="the notification")
    wait_for(lambda: Callback.objects.filter(status="delivered").exists(), 30, what="the delivery record")


def assert_exactly_once(batch_id: int, n: int, received: list) -> None:
    items = list(BatchItem.objects.filter(batch_id=batch_id).order_by("index"))
    assert [i.index for i in items] == list(range(n)) and {i.status for i in items} == {201}
    assert Estimate.objects.count() == n == len({i.estimate_id for i in items})
    assert len(received) == 1 and json.loads(received[0]["body"])["data"]["planned"] == n
    assert Callback.objects.get().status == "delivered"


# As many items as a batch takes, polled every 50 ms, so the worker cannot finish them between two
# polls: a plan and its rows take 30-60 ms here, and twelve items polled every 200 ms (the first
# version) were once all planned within one poll (and always, 2 runs of 2, before Redis was killed).
MID_BATCH_ITEMS = limits.MAX_BATCH_SCENARIOS


def test_a_worker_killed_mid_batch_loses_nothing_and_plans_nothing_twice(
    own_workers, receiver, loopback_targets
):
    n = MID_BATCH_ITEMS
    victim = own_workers("victim", **FAST_RECOVERY)
    with receiver([204]) as r:
        batch_id = post_batch(r.url, n)
        wait_for(lambda: planned(batch_id) >= 2, 90, what="the first items", interval=0.05)
        victim.kill()
        assert planned(batch_id) < n
        own_workers("rescuer", **FAST_RECOVERY)
        wait_for(lambda: Batch.objects.get(pk=batch_id).status == "done", 120, what="the batch to end")
        wait_notified(r)
    assert_exactly_once(batch_id, n, r.received)
    assert Batch.objects.get(pk=batch_id).requeues >= 1


def test_redis_killed_mid_batch_then_back_completes_by_itself(
    own_workers, own_redis, receiver, loopback_targets
):
    n = MID_BATCH_ITEMS
    own_workers("w", **FAST_RECOVERY)
    with receiver([204]) as r:
        batch_id = post_batch(r.url, n)
        wait_for(lambda: planned(batch_id) >= 2, 90, what="the first items", interval=0.05)
        own_redis.stop()  # its messages are lost: nothing is kept on disk
        assert planned(batch_id) < n  # killed mid-batch indeed
        own_redis.start()
        wait_for(lambda: Batch.objects.get(pk=batch_id).status == "done", 120, what="the batch to end")
        wait_notified(r)
    assert_exactly_once(batch_id, n, r.received)
