"""Celery app. Broker: Redis when REDIS_URL is set, otherwise kombu's filesystem transport
(no server needed) under var/broker, so `make run` works on a fresh clone.

Queues: "celery" (sweep chunks and the periodic tasks), "batches" (integrations.run_batch) and
"webhooks" (integrations.deliver), each served by its own workers (scripts/run_embedded.py,
docker-compose.yml), so a batch or a slow webhook receiver never waits in front of a sweep. Every
worker runs the recovery loop (integrations.recovery) from its start."""

import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

QUEUES = ("celery", "batches", "webhooks")

app = Celery("clusterplan")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_routes = {
    "integrations.deliver": {"queue": "webhooks"},
    "integrations.run_batch": {"queue": "batches"},
}
app.autodiscover_tasks()


@worker_ready.connect  # -P solo / threads: this process runs the tasks (before it consumes any)
@worker_process_init.connect  # prefork: each child
def _warm_core(**_signal: object) -> None:
    """Import the core and load its catalog before the first task: otherwise the first chunk of a
    sweep pays 1-3 s of imports, and a worker that answers a ping is not yet ready to compute."""
    import estimator.plan.batch  # noqa: F401  (the chunk's entry point; imports the catalog)


@worker_ready.connect
def _start_recovery(**_signal: object) -> None:
    from integrations import recovery

    recovery.start()


@worker_shutdown.connect
def _stop_recovery(**_signal: object) -> None:
    from integrations import recovery

    recovery.stop()
