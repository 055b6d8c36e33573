"""Celery tasks of the integrations app: they take ids and are safe to run twice (a delivery
attempt is claimed before it is made: integrations.delivery). Deliveries go to the "webhooks"
queue and their own workers (config.celery routes them), so a slow receiver never holds a worker
a sweep or a batch needs."""

from celery import shared_task
from django.conf import settings

from sweeps.tasks import IDEMPOTENT_DB_TASK

from . import batch_work, callbacks, delivery, idempotency

DELIVER_TASK = callbacks.DELIVER_TASK


@shared_task(
    name=DELIVER_TASK,
    acks_late=True,
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def deliver(callback_id: int, attempt: int) -> str:
    """Attempt `attempt` of a notification; after a failure the next attempt is queued with an
    exponential backoff (WEBHOOK_BACKOFF_S doubling up to WEBHOOK_BACKOFF_MAX_S), until
    WEBHOOK_MAX_ATTEMPTS."""
    outcome, delay = delivery.attempt(callback_id, attempt)
    if outcome == "retry":
        callbacks.queue_attempt(callback_id, attempt + 1, countdown=delay)
    return outcome


@shared_task(
    name=batch_work.RUN_BATCH_TASK,
    **IDEMPOTENT_DB_TASK,  # items already planned stay planned on a retry
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def run_batch(batch_id: int) -> str:
    """Plan a slice of a batch's waiting items (integrations.batch_work), then queue the rest."""
    return batch_work.run(batch_id, worker=run_batch.request.hostname or "")


@shared_task(
    name="integrations.housekeeping",
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def housekeeping() -> dict:
    """Periodic (CELERY_BEAT_SCHEDULE): forget idempotency records past their 24 hours, and send
    again a delivery attempt whose task message was lost (a worker killed mid-attempt; the workers'
    recovery loop does this too, without beat)."""
    resent = delivery.overdue()
    for callback_id, attempt in resent:
        callbacks.queue_attempt(callback_id, attempt)
    return {"idempotency_purged": idempotency.purge(), "deliveries_resent": len(resent)}
