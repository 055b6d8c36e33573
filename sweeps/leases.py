"""Chunk leases (ChunkLease): a worker claims a chunk before computing it and renews the claim
between sub-batches, so two workers never compute the same chunk and a cancel stops a worker
within one sub-batch (sweeps.services.run_chunk holds them; the watchdog re-queues only chunks
whose lease expired). Units: seconds (SWEEP_LEASE_S, config/settings.py holds its one default)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from .models import ChunkLease, Sweep


def lease_seconds() -> float:
    return float(settings.SWEEP_LEASE_S)


def acquire_lease(*, sweep_id: int, index: int, holder: str) -> bool:
    """Claim chunk `index` for `holder` unless another holder's lease is live. Race-safe: one
    conditional UPDATE takes over an expired lease; the unique (sweep, index) makes one of two
    concurrent first claims fail."""
    now = timezone.now()
    until = now + timedelta(seconds=lease_seconds())
    taken = ChunkLease.objects.filter(sweep_id=sweep_id, index=index, expires_at__lte=now).update(
        holder=holder[:240], expires_at=until, renewed_at=now, done=0
    )
    if taken:
        return True
    try:
        with transaction.atomic():
            ChunkLease.objects.create(
                sweep_id=sweep_id, index=index, holder=holder[:240], expires_at=until, renewed_at=now
            )
    except IntegrityError:
        return False  # a live lease of another holder (or one that just took the expired one)
    return True


def renew_lease(*, sweep_id: int, index: int, holder: str, done: int = 0) -> bool:
    """Extend `holder`'s lease while the sweep is active; False when the sweep was cancelled (or
    deleted) or the lease is no longer this holder's: the caller stops without storing.

    One conditional UPDATE, the sweep's status read in the same statement (not a query before
    it, which a cancel could pass between): the progress a lease shows is the progress at the last
    check of the status, so after a cancel a worker stops within the sub-batch in hand."""
    now = timezone.now()
    return bool(
        ChunkLease.objects.filter(
            sweep_id=sweep_id, index=index, holder=holder, sweep__status__in=Sweep.ACTIVE
        ).update(expires_at=now + timedelta(seconds=lease_seconds()), renewed_at=now, done=done)
    )
