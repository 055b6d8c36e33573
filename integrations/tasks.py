"""Celery tasks of the integrations app: they take ids and are safe to run twice (a delivery
attempt is claimed before it is made: integrations.delivery)."""

from celery import shared_task
from django.conf import settings

from . import delivery, idempotency

DELIVER_TASK = "integrations.deliver"


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
        deliver.apply_async((callback_id, attempt + 1), countdown=delay)
    return outcome


@shared_task(
    name="integrations.housekeeping",
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def housekeeping() -> dict:
    """Periodic (CELERY_BEAT_SCHEDULE): forget idempotency records past their 24 hours, and send
    again a delivery attempt whose task message was lost (a worker killed mid-attempt)."""
    resent = delivery.overdue()
    for callback_id, attempt in resent:
        deliver.delay(callback_id, attempt)
    return {"idempotency_purged": idempotency.purge(), "deliveries_resent": len(resent)}
