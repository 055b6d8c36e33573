"""Sweep services: create, queue, run a chunk, store it once, finish, cancel, watchdog.

Views and tasks call these; these call the core (`estimator.sweep` for the axes, `estimator.batch`
for the vectorized evaluation). The database is the source of truth: a chunk is done when its row
exists, so re-running a task, re-queuing a chunk or a second worker picking it up stores nothing
twice and counts nothing twice.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import numpy as np
from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

import estimator
from estimator import sweep as estimator_sweep
from estimator.errors import FieldError, ScenarioError

from .digests import chunk_digest, merge_digests, pack
from .models import Sweep, SweepChunk

RUN_CHUNK_TASK = "sweeps.run_chunk"  # registered by sweeps.tasks (imported in SweepsConfig.ready)

log = logging.getLogger(__name__)


def setting(name: str) -> Any:
    """A SWEEP_* setting; config/settings.py holds the one default of each (no second copy here)."""
    return getattr(settings, name)


# --------------------------------------------------------------------------------------------
# Creating and queuing


def create_sweep(data: Any, owner=None, client_ip: str | None = None) -> Sweep:
    """Validate a sweep request and save it; its chunks are queued when the transaction commits.

    Raises ScenarioError (field paths `name`, `base.*`, `axes`, `axes.<field>`) for a bad request
    and for the limits: scenarios per sweep and active sweeps per user (or per anonymous client).
    """
    max_scenarios = int(setting("SWEEP_MAX_SCENARIOS"))
    if owner is None:
        max_scenarios = min(max_scenarios, int(setting("SWEEP_ANON_MAX_SCENARIOS")))
    name, base, axes = estimator_sweep.validate_sweep(data, max_scenarios=max_scenarios)
    total = estimator_sweep.scenario_count(axes)
    chunk_size = int(setting("SWEEP_CHUNK_SIZE"))
    with transaction.atomic():
        active = Sweep.objects.filter(status__in=Sweep.ACTIVE)
        if owner is not None:
            active, limit = active.filter(owner=owner), int(setting("SWEEP_MAX_ACTIVE_PER_USER"))
        else:
            active, limit = (
                active.filter(owner=None, client_ip=client_ip),
                int(setting("SWEEP_MAX_ACTIVE_ANON")),
            )
        if active.count() >= limit:
            raise ScenarioError(
                [
                    FieldError(
                        "axes", f"you have {limit} sweep(s) running; wait for one to finish or cancel it"
                    )
                ]
            )
        sweep = Sweep.objects.create(
            owner=owner,
            client_ip=client_ip if owner is None else None,
            name=name or (data.get("base", {}).get("name") or "")[:200],
            base=base,
            axes=[a.to_dict() for a in axes],
            total=total,
            chunk_size=chunk_size,
            chunks_total=math.ceil(total / chunk_size),
            engine_version=estimator.ENGINE_VERSION,
            catalog_version=catalog_version(),
            progress_at=timezone.now(),
        )
        sweep_id = sweep.pk
        transaction.on_commit(lambda: enqueue_chunks(sweep_id))
    return sweep


def catalog_version() -> str:
    try:
        from estimator import catalog

        for attr in ("CATALOG_VERSION", "catalog_version", "version"):
            value = getattr(catalog, attr, None)
            if callable(value):
                value = value()
            if value:
                return str(value)[:40]
    except Exception:  # the version is informative; never fail a sweep over it
        log.exception("catalog version unavailable")
    return ""


def enqueue_chunks(sweep_id: int, indexes: list[int] | None = None) -> int:
    """Publish one task per chunk (all chunks, or the given ones) that has no stored result.

    A broker that cannot be reached is recorded in `error` (the watchdog fails the sweep if it
    stays unreachable); it never raises into the request that created the sweep.
    """
    run_chunk = current_app.tasks[RUN_CHUNK_TASK]  # by name: tasks.py imports this module

    sweep = Sweep.objects.filter(pk=sweep_id).values("status", "chunks_total").first()
    if sweep is None or sweep["status"] not in Sweep.ACTIVE:
        return 0
    stored = set(SweepChunk.objects.filter(sweep_id=sweep_id).values_list("index", flat=True))
    wanted = range(sweep["chunks_total"]) if indexes is None else indexes
    todo = [i for i in wanted if i not in stored]
    sent = 0
    try:
        with run_chunk.app.producer_or_acquire() as producer:
            for index in todo:
                run_chunk.apply_async(
                    (sweep_id, index),
                    producer=producer,
                    retry=True,
                    retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5},
                )
                sent += 1
    except Exception as exc:  # kombu raises OperationalError and friends when the broker is down
        log.warning("sweep %s: queuing chunks failed: %s", sweep_id, exc)
        Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
            error=f"broker unavailable while queuing chunks ({type(exc).__name__}: {exc}); will retry"[:1000]
        )
    return sent


# --------------------------------------------------------------------------------------------
# Running a chunk (called by the Celery task)


def axes_of(sweep: Sweep | Mapping[str, Any]) -> list[estimator_sweep.Axis]:
    raw = sweep.axes if isinstance(sweep, Sweep) else sweep["axes"]
    return [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in raw]


def run_chunk(sweep_id: int, index: int, worker: str = "") -> str:
    """Evaluate and store chunk `index` of a sweep; safe to call any number of times.

    Returns what happened: "stored", "duplicate", "skipped" (sweep no longer active), "failed".
    """
    sweep = (
        Sweep.objects.filter(pk=sweep_id)
        .values("status", "base", "axes", "total", "chunk_size", "chunks_total")
        .first()
    )
    if sweep is None or sweep["status"] not in Sweep.ACTIVE:
        return "skipped"
    if index >= sweep["chunks_total"]:
        return "skipped"
    if SweepChunk.objects.filter(sweep_id=sweep_id, index=index).exists():
        maybe_finish(sweep_id)
        return "duplicate"
    now = timezone.now()
    Sweep.objects.filter(pk=sweep_id, status=Sweep.Status.QUEUED).update(
        status=Sweep.Status.RUNNING, started_at=now, progress_at=now
    )
    start = index * sweep["chunk_size"]
    stop = min(start + sweep["chunk_size"], sweep["total"])
    axes = axes_of(sweep)
    t0 = time.perf_counter()
    try:
        from estimator.batch import evaluate_columns

        columns = estimator_sweep.decode(axes, start, stop)
        arrays = {k: np.asarray(v) for k, v in evaluate_columns(sweep["base"], columns).items()}
        for key, value in arrays.items():
            if value.shape != (stop - start,):
                raise ValueError(f"the core returned {value.shape} for {key}, expected ({stop - start},)")
    except ScenarioError as exc:
        fail(sweep_id, f"chunk {index} (scenarios {start:,}-{stop - 1:,}): {exc}")
        return "failed"
    except Exception as exc:
        log.exception("sweep %s chunk %s crashed", sweep_id, index)
        fail(
            sweep_id,
            f"chunk {index} (scenarios {start:,}-{stop - 1:,}): internal error {type(exc).__name__}: {exc}",
        )
        return "failed"
    compute_s = time.perf_counter() - t0
    digest = chunk_digest(axes, start, arrays)
    blob = pack(arrays)
    return store_chunk(sweep_id, index, start, stop, blob, digest, compute_s, worker)


def store_chunk(sweep_id, index, start, stop, blob, digest, compute_s, worker="") -> str:
    """Insert the chunk row and count its scenarios in one transaction; a second insert of the
    same (sweep, index) hits the unique constraint and changes nothing."""
    try:
        with transaction.atomic():
            SweepChunk.objects.create(
                sweep_id=sweep_id,
                index=index,
                start=start,
                stop=stop,
                data=blob,
                digest=digest,
                compute_s=compute_s,
                worker=worker[:200],
            )
            Sweep.objects.filter(pk=sweep_id).update(
                done=F("done") + (stop - start),
                chunks_done=F("chunks_done") + 1,
                compute_s=F("compute_s") + compute_s,
                progress_at=timezone.now(),
            )
    except IntegrityError:
        maybe_finish(sweep_id)
        return "duplicate"
    maybe_finish(sweep_id)
    return "stored"


def maybe_finish(sweep_id: int) -> bool:
    """When every chunk is stored: merge the chunk digests into the summary and mark it done.
    The conditional update makes exactly one caller the finisher."""
    row = Sweep.objects.filter(pk=sweep_id).values("status", "chunks_done", "chunks_total", "axes").first()
    if row is None or row["status"] not in Sweep.ACTIVE or row["chunks_done"] < row["chunks_total"]:
        return False
    digests = list(
        SweepChunk.objects.filter(sweep_id=sweep_id).order_by("index").values_list("digest", flat=True)
    )
    summary = merge_digests(axes_of(row), digests)
    return bool(
        Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
            status=Sweep.Status.DONE, summary=summary, finished_at=timezone.now(), error=""
        )
    )


def fail(sweep_id: int, reason: str) -> None:
    now = timezone.now()
    Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
        status=Sweep.Status.FAILED, error=reason[:4000], finished_at=now
    )


def cancel(sweep: Sweep) -> bool:
    """Stop a sweep: queued chunk tasks see the status and do nothing; stored chunks stay."""
    changed = Sweep.objects.filter(pk=sweep.pk, status__in=Sweep.ACTIVE).update(
        status=Sweep.Status.CANCELLED, finished_at=timezone.now()
    )
    sweep.refresh_from_db()
    return bool(changed)


# --------------------------------------------------------------------------------------------
# Watchdog


def watchdog(sweep: Sweep) -> str:
    """Never a silent hang. For an active sweep with no progress for SWEEP_STALL_S seconds,
    re-queue its missing chunks (tasks are idempotent, so a slow chunk that still lands is
    harmless); after SWEEP_FAIL_AFTER_S seconds without progress, fail it with the reason.

    Called on every status read (API polls, the report page) and by the periodic
    `sweeps.tasks.watchdog_all` task. Returns "ok", "requeued" or "failed".
    """
    if not sweep.is_active:
        return "ok"
    now = timezone.now()
    last = sweep.progress_at or sweep.created_at
    idle = (now - last).total_seconds()
    stall_s = float(setting("SWEEP_STALL_S"))
    fail_s = float(setting("SWEEP_FAIL_AFTER_S"))
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
        fail(sweep.pk, reason)
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
    sent = enqueue_chunks(sweep.pk)
    log.warning("sweep %s: no progress for %.0f s, re-queued %s chunk(s)", sweep.pk, idle, sent)
    sweep.refresh_from_db()
    return "requeued"


def watchdog_all() -> dict[str, int]:
    counts: dict[str, int] = {}
    for sweep in Sweep.objects.filter(status__in=Sweep.ACTIVE):
        outcome = watchdog(sweep)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts
