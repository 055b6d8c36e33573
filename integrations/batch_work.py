"""The workers' side of a batch (the Celery task integrations.run_batch): plan its waiting items in
order under a lease, each exactly once, and end it with its webhook.

Exactly once: an item's estimate and the item's update from "waiting" to planned are one
transaction, the update conditional on the item still waiting, so two runners (a lease taken over
from a worker believed dead, a redelivered message) can never both store it. The lease (holder,
expiry, renewed before every item) keeps a second runner from starting while one is alive; a run
plans for at most SLICE_S and then queues the rest, so batches of several callers take turns.

A worker killed mid-item loses only that item's uncommitted transaction: the item is still
waiting, the lease expires (BATCH_LEASE_S), and the recovery loop (integrations.recovery) queues
the batch again once it has made no progress for BATCH_STALL_S (`resume_stalled`)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from estimator.errors import ScenarioError
from reports.services import prepare_estimate

from . import callbacks, events
from .batches import PENDING, RUN_BATCH_TASK, counts, enqueue, prefixed
from .models import Batch, BatchItem, Callback

__all__ = ["RUN_BATCH_TASK", "resume_stalled", "run"]

SLICE_S = 10.0  # planning per task run; then the rest goes to the back of the queue

log = logging.getLogger(__name__)


class _AlreadyStoredError(Exception):
    """Another runner stored this item first: roll this estimate back."""


def _lease_s() -> float:
    return float(settings.BATCH_LEASE_S)


def acquire(batch_id: int, holder: str) -> bool:
    """Take the batch's lease unless a live one is someone else's (one conditional UPDATE)."""
    now = timezone.now()
    free = Q(lease_expires_at=None) | Q(lease_expires_at__lte=now)
    return bool(
        Batch.objects.filter(free, pk=batch_id, status__in=Batch.ACTIVE).update(
            lease_holder=holder[:100], lease_expires_at=now + timedelta(seconds=_lease_s())
        )
    )


def renew(batch_id: int, holder: str) -> bool:
    """Extend our lease (progress, for the recovery loop); False when it is no longer ours."""
    now = timezone.now()
    return bool(
        Batch.objects.filter(pk=batch_id, lease_holder=holder[:100], status__in=Batch.ACTIVE).update(
            lease_expires_at=now + timedelta(seconds=_lease_s()), progress_at=now
        )
    )


def release(batch_id: int, holder: str) -> None:
    Batch.objects.filter(pk=batch_id, lease_holder=holder[:100]).update(
        lease_holder="", lease_expires_at=None
    )


def run(batch_id: int, worker: str = "", clock: Callable[[], float] = time.monotonic) -> str:
    """Plan waiting items of a batch for up to SLICE_S. Returns "done" (the batch ended here),
    "more" (the rest is queued), "leased" (another runner holds it), "skipped" (not active),
    "stopped" (the lease was lost)."""
    holder = f"{worker or 'local'}:{uuid.uuid4().hex[:12]}"
    if not acquire(batch_id, holder):
        return "leased" if Batch.objects.filter(pk=batch_id, status__in=Batch.ACTIVE).exists() else "skipped"
    more = False
    try:
        now = timezone.now()
        Batch.objects.filter(pk=batch_id, status=Batch.Status.QUEUED).update(
            status=Batch.Status.RUNNING, progress_at=now
        )
        batch = Batch.objects.select_related("owner").get(pk=batch_id)
        started = clock()
        waiting = BatchItem.objects.filter(batch_id=batch_id, status=PENDING).order_by("index")
        for item in waiting.only("pk", "index"):
            if clock() - started > SLICE_S:
                more = True
                break
            if not renew(batch_id, holder):
                return "stopped"
            plan_item(batch, item.pk, item.index)
    finally:
        release(batch_id, holder)
    if more:
        enqueue(batch_id)
        return "more"
    return "done" if finish(batch_id) else "stopped"


def plan_item(batch: Batch, item_pk: int, index: int) -> None:
    """Item `index`: its estimate, or its reason; stored only if it is still waiting. Planned
    outside any transaction (a long write transaction would lock SQLite for everyone), stored in a
    short one: the estimate's INSERT and the item's conditional UPDATE, together or not at all."""
    scenario = batch.scenarios[index] if index < len(batch.scenarios) else None
    try:
        estimate = prepare_estimate(data=scenario, owner=batch.owner, team=batch.team_choice)
        with transaction.atomic():
            estimate.save(force_insert=True)
            if not BatchItem.objects.filter(pk=item_pk, status=PENDING).update(status=201, estimate=estimate):
                raise _AlreadyStoredError
    except _AlreadyStoredError:
        return
    except ScenarioError as exc:
        BatchItem.objects.filter(pk=item_pk, status=PENDING).update(status=400, errors=prefixed(exc, index))
    except SoftTimeLimitExceeded:
        raise  # the task's time is up: this item stays waiting for the next run
    except Exception as exc:  # a bug must not lose the item: it ends with its reason
        log.exception("batch %s item %s crashed", batch.pk, index)
        message = f"not planned: internal error ({type(exc).__name__}); send this scenario again"
        BatchItem.objects.filter(pk=item_pk, status=PENDING).update(
            status=500, errors=[{"field": f"scenarios.{index}", "message": message}]
        )


def finish(batch_id: int) -> bool:
    """When no item waits: the batch is done (one caller wins the conditional update) and its
    callback fires (once: integrations.callbacks.fire)."""
    if BatchItem.objects.filter(batch_id=batch_id, status=PENDING).exists():
        return False
    ended = Batch.objects.filter(pk=batch_id, status__in=Batch.ACTIVE).update(
        status=Batch.Status.DONE, finished_at=timezone.now(), scenarios=[]
    )
    callback = Callback.objects.filter(batch_id=batch_id, status=Callback.Status.WAITING).first()
    if callback is not None:  # also when another runner ended it and died before firing
        batch = Batch.objects.get(pk=batch_id)
        callbacks.fire(callback, "batch.done", events.batch_data(batch, callback.base_url, counts(batch)))
    return bool(ended)


def resume_stalled() -> int:
    """Queue again every active batch with no progress for BATCH_STALL_S and no live lease (its
    message was lost with the broker, or its worker died); returns how many."""
    now = timezone.now()
    stalled = Batch.objects.filter(
        Q(lease_expires_at=None) | Q(lease_expires_at__lte=now),
        status__in=Batch.ACTIVE,
        progress_at__lt=now - timedelta(seconds=float(settings.BATCH_STALL_S)),
    )
    sent = 0
    for pk, progress_at in stalled.values_list("pk", "progress_at"):
        # claim this re-queue (one per stall period, whichever worker's loop sees it first)
        if Batch.objects.filter(pk=pk, progress_at=progress_at).update(
            progress_at=now, requeues=F("requeues") + 1
        ):
            sent += int(enqueue(pk))
    return sent
