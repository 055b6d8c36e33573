"""The sweep watchdog: never a silent hang. A sweep with no progress is re-queued, then failed with
its reason (watchdog); watchdog_all runs it over every active sweep (the periodic task
sweeps.tasks.watchdog_all, integrations.recovery). The re-queue goes through
sweeps.services.enqueue_chunks (looked up there at each call), the failure through sweeps.services.fail.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from . import services
from .models import ChunkLease, Sweep

log = logging.getLogger(__name__)


def watchdog(*, sweep: Sweep) -> str:
    """Never a silent hang. For an active sweep with no progress (no chunk stored and no live
    lease renewed) for SWEEP_STALL_S seconds, re-queue its missing chunks whose lease expired (a
    chunk still being computed is left to its worker); after SWEEP_FAIL_AFTER_S seconds without
    progress, fail it with the reason.

    Called on every status read (API polls, the report page) and by the periodic
    `sweeps.tasks.watchdog_all` task. Returns "ok", "requeued" or "failed".
    """
    if not sweep.is_active:
        return "ok"
    now = timezone.now()
    last = sweep.progress_at or sweep.created_at
    heartbeat = (
        ChunkLease.objects.filter(sweep=sweep, expires_at__gt=now)
        .order_by("-renewed_at")
        .values_list("renewed_at", flat=True)
        .first()
    )
    if heartbeat is not None and heartbeat > last:
        last = heartbeat  # a chunk is being computed right now: that is progress
    idle = (now - last).total_seconds()
    stall_s = float(services.setting(name="SWEEP_STALL_S"))
    fail_s = float(services.setting(name="SWEEP_FAIL_AFTER_S"))
    busy_elsewhere = (
        Sweep.objects.filter(status__in=Sweep.ACTIVE, progress_at__gte=now - timedelta(seconds=stall_s))
        .exclude(pk=sweep.pk)
        .exists()
    )
    if idle >= fail_s and not busy_elsewhere:  # workers busy with other sweeps are not a hang
        why = sweep.error or "no worker picked up its chunks"
        reason = (
            f"no progress for {idle:.0f} s ({sweep.chunks_done} of {sweep.chunks_total} chunks stored): "
            f"workers or broker unavailable; last problem: {why}"
        )
        services.fail(sweep_id=sweep.pk, reason=reason)
        sweep.refresh_from_db()
        return "failed"
    if idle < stall_s:
        return "ok"
    if sweep.requeued_at and (now - sweep.requeued_at).total_seconds() < stall_s:
        return "ok"
    # claim this re-queue: one per stall period across web processes and the periodic task
    claimed = Sweep.objects.filter(
        pk=sweep.pk, requeued_at=sweep.requeued_at, status__in=Sweep.ACTIVE
    ).update(requeues=F("requeues") + 1, requeued_at=now)
    if not claimed:
        return "ok"
    sent = services.enqueue_chunks(sweep_id=sweep.pk)
    log.warning("sweep %s: no progress for %.0f s, re-queued %s chunk(s)", sweep.pk, idle, sent)
    sweep.refresh_from_db()
    return "requeued"


def watchdog_all() -> dict[str, int]:
    counts: dict[str, int] = {}
    for sweep in Sweep.objects.filter(status__in=Sweep.ACTIVE):
        outcome = watchdog(sweep=sweep)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts
