"""Celery tasks: they take ids, call a service, and are safe to run twice (acks_late, so a worker
killed mid-chunk leaves the message to be redelivered; the chunk lease and the unique chunk row
make a rerun a no-op). Every task has a soft time limit (the service stops and says why) and a
hard one (the worker process is replaced) from settings."""

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from . import services


@shared_task(
    name=services.RUN_CHUNK_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    # a database that is briefly unreachable or locked: try again (the chunk is idempotent)
    autoretry_for=(OperationalError,),
    retry_backoff=1,
    retry_backoff_max=30,
    max_retries=6,
    soft_time_limit=settings.SWEEP_CHUNK_SOFT_S,
    time_limit=settings.SWEEP_CHUNK_HARD_S,
)
def run_chunk(sweep_id: int, index: int) -> str:
    return services.run_chunk(sweep_id, index, worker=run_chunk.request.hostname or "")


@shared_task(
    name="sweeps.watchdog",
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
)
def watchdog_all() -> dict:
    """Periodic (celery beat, see CELERY_BEAT_SCHEDULE): re-queue lost chunks, fail hung sweeps."""
    return services.watchdog_all()
