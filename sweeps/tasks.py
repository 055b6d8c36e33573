"""Celery tasks: they take ids, call a service, and are safe to run twice (acks_late, so a worker
killed mid-chunk leaves the message to be redelivered; the chunk lease and the unique chunk row
make a rerun a no-op). Every task has a soft time limit (the service stops and says why) and a
hard one (the worker process is replaced) from settings."""

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from . import services, watchdog

# An idempotent task's delivery and retry policy: acknowledged after it ran (a killed worker leaves
# the message to another), and a database briefly unreachable or locked is tried again with backoff.
# Sweep chunks and batches (integrations.tasks) share it.
IDEMPOTENT_DB_TASK = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "max_retries": 6,
}


@shared_task(
    name=services.RUN_CHUNK_TASK,
    **IDEMPOTENT_DB_TASK,
    soft_time_limit=settings.SWEEP_CHUNK_SOFT_S,
    time_limit=settings.SWEEP_CHUNK_HARD_S,
)
def run_chunk(sweep_id: int, index: int) -> str:
    return services.run_chunk(sweep_id=sweep_id, index=index, worker=run_chunk.request.hostname or "")


@shared_task(
    name="sweeps.watchdog",
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def watchdog_all() -> dict:
    """Periodic (celery beat, see CELERY_BEAT_SCHEDULE): re-queue lost chunks, fail hung sweeps."""
    return watchdog.watchdog_all()
