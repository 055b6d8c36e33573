"""Sweep services: create, queue, run a chunk, store it once, finish, cancel (the stall watchdog:
sweeps.watchdog).

Views and tasks call these; these call the core (`estimator.contract.sweep` for the axes, `estimator.plan.batch`
for the vectorized evaluation). The database is the source of truth: a chunk is done when its row
exists, so re-running a task, re-queuing a chunk or a second worker picking it up stores nothing
twice and counts nothing twice.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np
from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

import estimator
from estimator import limits
from estimator.contract import sweep as estimator_sweep
from estimator.contract.price_book import PriceBook, parse_book
from estimator.contract.resolve import resolve as resolve_scenario
from estimator.errors import FieldError, ScenarioError
from estimator.jsonio import check_tree
from pricebooks.services import book_documents
from teams.selectors import team_for

from .digests import chunk_digest, pack
from .leases import acquire_lease, renew_lease
from .models import ChunkLease, Sweep, SweepChunk
from .signals import sweep_finished
from .sub_batch import first_size, first_sub_batch, next_sub_batch
from .summary import merge_digests

RUN_CHUNK_TASK = "sweeps.run_chunk"  # registered by sweeps.tasks (imported in SweepsConfig.ready)

log = logging.getLogger(__name__)


def setting(*, name: str) -> Any:
    """A SWEEP_* setting; config/settings.py holds the one default of each (no second copy here)."""
    return getattr(settings, name)


# --------------------------------------------------------------------------------------------
# Creating and queuing


def _book_refs(data: Any) -> dict[str, str]:
    """{reference: field path} of the price books a sweep request names, in its base and on a
    `cost.price_book` axis (only string values: anything else is the core's to refuse)."""
    if not isinstance(data, dict):
        return {}
    refs: dict[str, str] = {}
    base = data.get("base")
    cost = base.get("cost") if isinstance(base, dict) else None
    if isinstance(cost, dict) and isinstance(cost.get("price_book"), str):
        refs[cost["price_book"]] = "base.cost.price_book"
    axes = data.get("axes")
    values = axes.get("cost.price_book") if isinstance(axes, dict) else None
    if isinstance(values, list):
        refs.update({v: "axes.cost.price_book" for v in values if isinstance(v, str)})
    return refs


def books_of(*, sweep: Sweep | Mapping[str, Any]) -> dict[str, PriceBook]:
    """The core's `books` argument from what the sweep stored at creation (never the request's user)."""
    raw = sweep.price_books if isinstance(sweep, Sweep) else sweep.get("price_books") or {}
    return {ref: parse_book(doc) for ref, doc in raw.items()}


def create_sweep(*, data: Any, owner=None, client_ip: str | None = None, team: str | None = None) -> Sweep:
    """Validate a sweep request and save it; its chunks are queued when the transaction commits.

    The sweep goes to the team named by slug `team` (default: the owner's only team); price books
    named in the base or on a `cost.price_book` axis are resolved among the owner's teams' books
    and stored with the sweep, so the workers need no user.

    Raises ScenarioError (field paths `name`, `base.*`, `axes`, `axes.<field>`, `team`) for a bad
    request and for the limits: scenarios per sweep and active sweeps per user (or per anonymous client).
    """
    max_scenarios = min(int(setting(name="SWEEP_MAX_SCENARIOS")), limits.MAX_SWEEP_ROWS)
    if owner is None:
        max_scenarios = min(max_scenarios, int(setting(name="SWEEP_ANON_MAX_SCENARIOS")))
    _check_active(owner, client_ip)  # before any validation work: a refused request costs little
    precheck(data=data)
    chosen_team = team_for(user=owner, slug=team)
    documents = {ref: doc for ref, (_v, doc) in book_documents(user=owner, refs=_book_refs(data)).items()}
    books = {ref: parse_book(doc) for ref, doc in documents.items()}
    name, base, axes = estimator_sweep.validate_sweep(
        data, max_scenarios=max_scenarios, resolve=lambda s: resolve_scenario(s, books)
    )
    total = estimator_sweep.scenario_count(axes)
    chunk_size = int(setting(name="SWEEP_CHUNK_SIZE"))
    with transaction.atomic():
        _check_active(owner, client_ip)
        sweep = Sweep.objects.create(
            owner=owner,
            team=chosen_team,
            price_books=documents,
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
        transaction.on_commit(lambda: enqueue_chunks(sweep_id=sweep_id))
    return sweep


def _check_active(owner, client_ip: str | None) -> None:
    """The active-sweep cap: per user, or per client address without an account."""
    active = Sweep.objects.filter(status__in=Sweep.ACTIVE)
    if owner is not None:
        active, limit = active.filter(owner=owner), int(setting(name="SWEEP_MAX_ACTIVE_PER_USER"))
    else:
        active, limit = (
            active.filter(owner=None, client_ip=client_ip),
            int(setting(name="SWEEP_MAX_ACTIVE_ANON")),
        )
    if active.count() >= limit:
        raise ScenarioError(
            [FieldError("axes", f"you have {limit} sweep(s) running; wait for one to finish or cancel it")]
        )


def precheck(*, data: Any) -> None:
    """The work budget of a sweep request (estimator.limits), checked before the core validates
    it, so validation itself stays bounded: text a database can store and bounded nesting
    everywhere; at most MAX_SWEEP_AXES axes; at most MAX_TEXT_AXIS_VALUES values on a string or
    boolean axis (each of them is validated against the base) and MAX_AXIS_VALUES on a numeric one
    (a bounded sample of them is validated); ranges whose step gives no or too many values."""
    check_tree(data)
    axes = data.get("axes") if isinstance(data, dict) else None
    if not isinstance(axes, dict):
        return  # the core says what is wrong with it
    if len(axes) > limits.MAX_SWEEP_AXES:
        raise ScenarioError(f"has {len(axes)} axes; the limit is {limits.MAX_SWEEP_AXES}", "axes")
    errors = []
    for field, spec in axes.items():
        path = f"axes.{field}"
        if isinstance(spec, list):
            textual = any(isinstance(v, str | bool) for v in spec)
            cap = limits.MAX_TEXT_AXIS_VALUES if textual else limits.MAX_AXIS_VALUES
            if len(spec) > cap:
                kind = "string or boolean" if textual else "numeric"
                errors.append(
                    FieldError(path, f"has {len(spec):,} values; the limit is {cap:,} on a {kind} axis")
                )
        elif isinstance(spec, dict):
            problem = _range_problem(spec)
            if problem:
                errors.append(FieldError(path, *problem))
    if errors:
        raise ScenarioError(errors)


def _range_problem(spec: dict) -> tuple[str, str, dict] | None:
    """Why a {start, stop, step} range cannot be swept (sentence, code, params), or None (malformed
    ones: the core says)."""
    values = [spec.get(k) for k in ("start", "stop", "step")]
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != 3:
        return None
    start, stop, step = numbers
    if not all(math.isfinite(v) for v in (start, stop, step)) or step <= 0 or stop < start:
        return None
    span = (stop - start) / step
    if not math.isfinite(span) or span + 1 > limits.MAX_AXIS_VALUES:
        limit = limits.MAX_AXIS_VALUES
        return (
            f"the step gives more than {limit:,} values; the limit per axis",
            "range-too-many-values",
            {"max_values": limit},
        )
    count = math.floor(span + 1e-9) + 1
    points = {float(f"{start + i * step:.12g}") for i in range(count)}
    if len(points) < count:
        return (
            "the step is too small for these numbers: some values would be equal",
            "range-step-too-small",
            {},
        )
    return None


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


def enqueue_chunks(*, sweep_id: int, indexes: list[int] | None = None) -> int:
    """Publish one task per chunk (all chunks, or the given ones) that has no stored result.

    A broker that cannot be reached is recorded in `error` (the watchdog fails the sweep if it
    stays unreachable); it never raises into the request that created the sweep.
    """
    run_chunk = current_app.tasks[RUN_CHUNK_TASK]  # by name: tasks.py imports this module

    sweep = Sweep.objects.filter(pk=sweep_id).values("status", "chunks_total").first()
    if sweep is None or sweep["status"] not in Sweep.ACTIVE:
        return 0
    stored = set(SweepChunk.objects.filter(sweep_id=sweep_id).values_list("index", flat=True))
    leased = set(
        ChunkLease.objects.filter(sweep_id=sweep_id, expires_at__gt=timezone.now()).values_list(
            "index", flat=True
        )
    )
    wanted = range(sweep["chunks_total"]) if indexes is None else indexes
    todo = [i for i in wanted if i not in stored and i not in leased]
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


def axes_of(*, sweep: Sweep | Mapping[str, Any]) -> list[estimator_sweep.Axis]:
    raw = sweep.axes if isinstance(sweep, Sweep) else sweep["axes"]
    return [estimator_sweep.Axis(a["field"], tuple(a["values"])) for a in raw]


def run_chunk(*, sweep_id: int, index: int, worker: str = "") -> str:
    """Evaluate and store chunk `index` of a sweep; safe to call any number of times.

    The chunk is computed under a lease (ChunkLease) in sub-batches: the first of SWEEP_SUB_BATCH
    scenarios (or sized from the sweep's rate once chunks are stored, first_sub_batch), the next
    ones sized to take about SWEEP_SUB_BATCH_S (next_sub_batch). Between
    sub-batches the lease is renewed (the watchdog's heartbeat) and the sweep's status read, so a
    cancelled sweep stops within one sub-batch. Returns what happened: "stored",
    "duplicate", "leased" (another worker holds a live lease), "skipped" (sweep no longer active),
    "stopped" (cancelled or lease lost mid-chunk), "failed".
    """
    sweep = (
        Sweep.objects.filter(pk=sweep_id)
        .values(
            "status",
            "base",
            "axes",
            "total",
            "chunk_size",
            "chunks_total",
            "price_books",
            "done",
            "compute_s",
        )
        .first()
    )
    if sweep is None or sweep["status"] not in Sweep.ACTIVE:
        return "skipped"
    if index >= sweep["chunks_total"]:
        return "skipped"
    if _stored(sweep_id, index):
        return "duplicate"
    holder = f"{worker or 'local'}:{uuid.uuid4().hex[:12]}"
    if not acquire_lease(sweep_id=sweep_id, index=index, holder=holder):
        log.info("sweep %s chunk %s: leased by another worker, left to it", sweep_id, index)
        return "leased"
    try:
        # a twin message's worker may have stored the chunk and dropped its lease between the first
        # look and this lease: looked at again under the lease, it is never computed twice
        if _stored(sweep_id, index):
            return "duplicate"
        log.info("sweep %s chunk %s: computing (lease %s)", sweep_id, index, holder)
        return _compute_and_store(sweep_id, index, sweep, holder, worker)
    finally:
        ChunkLease.objects.filter(sweep_id=sweep_id, index=index, holder=holder).delete()


def _stored(sweep_id: int, index: int) -> bool:
    """Chunk `index` is stored already (the sweep's finish checked again: a redelivered last chunk
    may be what completes it)."""
    if not SweepChunk.objects.filter(sweep_id=sweep_id, index=index).exists():
        return False
    maybe_finish(sweep_id=sweep_id)
    return True


def _compute_and_store(sweep_id: int, index: int, sweep: Mapping[str, Any], holder: str, worker: str) -> str:
    now = timezone.now()
    Sweep.objects.filter(pk=sweep_id, status=Sweep.Status.QUEUED).update(
        status=Sweep.Status.RUNNING, started_at=now, progress_at=now
    )
    start = index * sweep["chunk_size"]
    stop = min(start + sweep["chunk_size"], sweep["total"])
    axes = axes_of(sweep=sweep)
    first = max(1, int(setting(name="SWEEP_SUB_BATCH")))
    largest = max(first, int(setting(name="SWEEP_SUB_BATCH_MAX")))
    searched = estimator_sweep.searched_sizings(sweep["base"], axes) > 0  # a search per row: slower
    first = first_size(configured=first, searched=searched)
    target_s = float(setting(name="SWEEP_SUB_BATCH_S"))
    books = books_of(sweep=sweep)
    t0 = time.perf_counter()
    try:
        from estimator.plan.batch import evaluate_columns

        parts: list[dict[str, np.ndarray]] = []
        lo, sub = start, first_sub_batch(sweep=sweep, target_s=target_s, first=first, largest=largest)
        while lo < stop:
            if lo > start and not renew_lease(sweep_id=sweep_id, index=index, holder=holder, done=lo - start):
                # cancelled, deleted, or the lease was lost (and taken over): store nothing
                log.info("sweep %s chunk %s: stopped after %s scenarios", sweep_id, index, lo - start)
                return "stopped"
            hi = min(lo + sub, stop)
            t_sub = time.perf_counter()
            columns = estimator_sweep.decode(axes, lo, hi)
            part = {k: np.asarray(v) for k, v in evaluate_columns(sweep["base"], columns, books).items()}
            for key, value in part.items():
                if value.shape != (hi - lo,):
                    raise ValueError(f"the core returned {value.shape} for {key}, expected ({hi - lo},)")
            parts.append(part)
            sub = next_sub_batch(
                rows=hi - lo,
                seconds=time.perf_counter() - t_sub,
                target_s=target_s,
                first=first,
                largest=largest,
            )
            lo = hi
        arrays = parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    except ScenarioError as exc:
        fail(sweep_id=sweep_id, reason=f"chunk {index} (scenarios {start:,}-{stop - 1:,}): {exc}")
        return "failed"
    except SoftTimeLimitExceeded as exc:  # Celery's soft limit (sweeps.tasks) interrupts a chunk
        fail(
            sweep_id=sweep_id,
            reason=f"chunk {index} (scenarios {start:,}-{stop - 1:,}) exceeded its time limit ({exc})",
        )
        return "failed"
    except Exception as exc:
        log.exception("sweep %s chunk %s crashed", sweep_id, index)
        fail(
            sweep_id=sweep_id,
            reason=f"chunk {index} (scenarios {start:,}-{stop - 1:,}): internal error {type(exc).__name__}: {exc}",
        )
        return "failed"
    if not renew_lease(sweep_id=sweep_id, index=index, holder=holder, done=stop - start):
        return "stopped"
    compute_s = time.perf_counter() - t0
    digest = chunk_digest(axes, start, arrays)
    blob = pack(arrays)
    return store_chunk(
        sweep_id=sweep_id,
        index=index,
        start=start,
        stop=stop,
        blob=blob,
        digest=digest,
        compute_s=compute_s,
        worker=worker,
    )


def store_chunk(*, sweep_id, index, start, stop, blob, digest, compute_s, worker="") -> str:
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
        maybe_finish(sweep_id=sweep_id)
        return "duplicate"
    maybe_finish(sweep_id=sweep_id)
    return "stored"


DIGESTS_READ_AT_ONCE = 4  # chunk digests fetched per database round trip while folding (~250 kB each)


def maybe_finish(*, sweep_id: int) -> bool:
    """When every chunk is stored: fold the chunk digests into the summary, read one at a time
    (sweeps.summary: the finisher's memory does not grow with the chunks), and mark it done. The
    conditional update makes exactly one caller the finisher."""
    row = Sweep.objects.filter(pk=sweep_id).values("status", "chunks_done", "chunks_total", "axes").first()
    if row is None or row["status"] not in Sweep.ACTIVE or row["chunks_done"] < row["chunks_total"]:
        return False
    digests = (
        SweepChunk.objects.filter(sweep_id=sweep_id)
        .order_by("index")
        .values_list("digest", flat=True)
        .iterator(chunk_size=DIGESTS_READ_AT_ONCE)
    )
    summary = merge_digests(axes_of(sweep=row), digests)
    finished = Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
        status=Sweep.Status.DONE, summary=summary, finished_at=timezone.now(), error=""
    )
    sweep_finished.send_robust(Sweep, sweep_id=sweep_id)  # webhooks (integrations.receivers)
    return bool(finished)


def fail(*, sweep_id: int, reason: str) -> None:
    now = timezone.now()
    Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
        status=Sweep.Status.FAILED, error=reason[:4000], finished_at=now
    )
    sweep_finished.send_robust(Sweep, sweep_id=sweep_id)


def cancel(*, sweep: Sweep) -> bool:
    """Stop a sweep: queued chunk tasks see the status and do nothing; stored chunks stay."""
    changed = Sweep.objects.filter(pk=sweep.pk, status__in=Sweep.ACTIVE).update(
        status=Sweep.Status.CANCELLED, finished_at=timezone.now()
    )
    sweep_finished.send_robust(Sweep, sweep_id=sweep.pk)
    sweep.refresh_from_db()
    return bool(changed)
