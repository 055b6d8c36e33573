"""The workers' recovery loop (integrations.recovery): one pass queues again what lost broker
messages left behind (a stalled batch, an overdue delivery), once per stall period, and the loop
starts with a worker and stops with it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from integrations import batch_work, batches, callbacks, delivery, recovery
from integrations.models import Batch, Callback
from tests.sweeps.conftest import wait_for

pytestmark = pytest.mark.django_db


def test_one_pass_requeues_a_stalled_batch_and_an_overdue_delivery(user, scenario, monkeypatch, settings):
    sent_batches, sent_attempts = [], []
    monkeypatch.setattr(batches, "enqueue", lambda pk: True)
    monkeypatch.setattr(batch_work, "enqueue", lambda pk: sent_batches.append(pk) or True)
    monkeypatch.setattr(
        callbacks, "queue_attempt", lambda pk, n, countdown=0.0: sent_attempts.append((pk, n))
    )
    batch = batches.create_batch(data={"scenarios": [scenario]}, owner=user, base_url="http://testserver/")
    long_ago = timezone.now() - timedelta(seconds=settings.BATCH_STALL_S + 1)
    Batch.objects.filter(pk=batch.pk).update(progress_at=long_ago)
    hook = Callback.objects.create(
        owner=user,
        url="https://quotes.example.com/h",
        base_url="http://testserver/",
        status=Callback.Status.PENDING,
        event_id="msg_x",
        payload="{}",
        attempts=0,
        next_attempt_at=timezone.now() - timedelta(seconds=delivery.RESEND_GRACE_S + 1),
    )
    outcome = recovery.run_once()
    assert (outcome["batches_requeued"], outcome["deliveries_resent"]) == (1, 1)
    assert sent_batches == [batch.pk] and sent_attempts == [(hook.pk, 1)]
    assert recovery.run_once()["batches_requeued"] == 0  # its progress clock was reset by the claim


def test_the_loop_starts_once_and_stops(settings, monkeypatch):
    calls = []
    monkeypatch.setattr(recovery, "run_once", lambda: calls.append(1) or {})
    settings.RECOVERY_INTERVAL_S = 0.05
    try:
        assert recovery.start() is True
        assert recovery.start() is False  # one loop per process
        # two passes: at once, then one interval later (waited for, not slept: a loaded machine may
        # not schedule the thread within a fixed 0.3 s)
        wait_for(lambda: len(calls) >= 2, 30, interval=0.01, what="two recovery passes")
    finally:
        recovery.stop()
        recovery._thread.join(30)
    assert len(calls) >= 2 and not recovery._thread.is_alive()
    settings.RECOVERY_INTERVAL_S = 0
    assert recovery.start() is False  # turned off
