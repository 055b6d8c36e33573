"""Sweep services: create, queue, run a chunk, store it once, finish, cancel, watchdog.

Views and tasks call these; these call the core (`estimator.sweep` for the axes, `estimator.batch`
for the vectorized evaluation). The database is the source of truth: a chunk is done when its row
exists, so re-running a task, re-queuing a chunk or a second worker picking it up stores nothing
twice and counts nothing twice.
"""

from __future__ import annotations

import io
import logging
import math
import time
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

import estimator
from estimator import sweep as core
from estimator.errors import FieldError, ScenarioError

from .models import Sweep, SweepChunk

log = logging.getLogger(__name__)

# Result fields used by the summary, best tables, heatmaps and Pareto front (those the core returns).
DAYS = "compute.wall_clock_days"
COST_OWNED = "cost.run.owned"
COST_CLOUD = "cost.run.cloud"
RANK_METRICS = (DAYS, COST_OWNED, COST_CLOUD, "cost.capex.total", "power.facility_w")
HEAT_METRICS = (DAYS, COST_OWNED)
PARETO_COSTS = (COST_OWNED, COST_CLOUD)
FITS = "ok"  # the core's per-row flag: planned (True) or not (False, with an error message)
BEST_K = 10
HEAT_MAX_CELLS = 2048
HEAT_MAX_PAIRS = 3
PARETO_MAX_POINTS = 5000
SAMPLE_PER_CHUNK = 200  # points per chunk drawn behind the Pareto front (evenly spaced)
SAMPLE_MAX = 2000


def setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


# --------------------------------------------------------------------------------------------
# Creating and queuing


def create_sweep(data: Any, owner=None, client_ip: str | None = None) -> Sweep:
    """Validate a sweep request and save it; its chunks are queued when the transaction commits.

    Raises ScenarioError (field paths `name`, `base.*`, `axes`, `axes.<field>`) for a bad request
    and for the limits: scenarios per sweep and active sweeps per user (or per anonymous client).
    """
    max_scenarios = int(setting("SWEEP_MAX_SCENARIOS", core.MAX_SCENARIOS))
    if owner is None:
        max_scenarios = min(max_scenarios, int(setting("SWEEP_ANON_MAX_SCENARIOS", 200_000)))
    name, base, axes = core.validate_sweep(data, max_scenarios=max_scenarios)
    total = core.scenario_count(axes)
    chunk_size = int(setting("SWEEP_CHUNK_SIZE", 25_000))
    with transaction.atomic():
        active = Sweep.objects.filter(status__in=Sweep.ACTIVE)
        if owner is not None:
            active, limit = active.filter(owner=owner), int(setting("SWEEP_MAX_ACTIVE_PER_USER", 3))
        else:
            active, limit = active.filter(owner=None, client_ip=client_ip), int(setting("SWEEP_MAX_ACTIVE_ANON", 1))
        if active.count() >= limit:
            raise ScenarioError(
                [FieldError("axes", f"you have {limit} sweep(s) running; wait for one to finish or cancel it")]
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
    from .tasks import run_chunk

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
                run_chunk.apply_async((sweep_id, index), producer=producer, retry=True,
                                      retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5})
                sent += 1
    except Exception as exc:  # kombu raises OperationalError and friends when the broker is down
        log.warning("sweep %s: queuing chunks failed: %s", sweep_id, exc)
        Sweep.objects.filter(pk=sweep_id, status__in=Sweep.ACTIVE).update(
            error=f"broker unavailable while queuing chunks ({type(exc).__name__}: {exc}); will retry"[:1000]
        )
    return sent


# --------------------------------------------------------------------------------------------
# Running a chunk (called by the Celery task)


def axes_of(sweep: Sweep | dict) -> list[core.Axis]:
    raw = sweep.axes if isinstance(sweep, Sweep) else sweep["axes"]
    return [core.Axis(a["field"], tuple(a["values"])) for a in raw]


def run_chunk(sweep_id: int, index: int, worker: str = "") -> str:
    """Evaluate and store chunk `index` of a sweep; safe to call any number of times.

    Returns what happened: "stored", "duplicate", "skipped" (sweep no longer active), "failed".
    """
    sweep = Sweep.objects.filter(pk=sweep_id).values(
        "status", "base", "axes", "total", "chunk_size", "chunks_total"
    ).first()
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

        columns = core.decode(axes, start, stop)
        arrays = {k: np.asarray(v) for k, v in evaluate_columns(sweep["base"], columns).items()}
        for key, value in arrays.items():
            if value.shape != (stop - start,):
                raise ValueError(f"the core returned {value.shape} for {key}, expected ({stop - start},)")
    except ScenarioError as exc:
        fail(sweep_id, f"chunk {index} (scenarios {start:,}-{stop - 1:,}): {exc}")
        return "failed"
    except Exception as exc:
        log.exception("sweep %s chunk %s crashed", sweep_id, index)
        fail(sweep_id, f"chunk {index} (scenarios {start:,}-{stop - 1:,}): internal error {type(exc).__name__}: {exc}")
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
                sweep_id=sweep_id, index=index, start=start, stop=stop, data=blob, digest=digest,
                compute_s=compute_s, worker=worker[:200],
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
    digests = list(SweepChunk.objects.filter(sweep_id=sweep_id).order_by("index").values_list("digest", flat=True))
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
    stall_s = float(setting("SWEEP_STALL_S", 60))
    fail_s = float(setting("SWEEP_FAIL_AFTER_S", 600))
    busy_elsewhere = Sweep.objects.filter(
        status__in=Sweep.ACTIVE, progress_at__gte=now - timedelta(seconds=stall_s)
    ).exclude(pk=sweep.pk).exists()
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
    claimed = Sweep.objects.filter(pk=sweep.pk, requeued_at=sweep.requeued_at, status__in=Sweep.ACTIVE).update(
        requeues=F("requeues") + 1, requeued_at=now
    )
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


# --------------------------------------------------------------------------------------------
# Storage format


ERROR = "error"  # per-row message (None where the row was planned); stored as codes + messages


def pack(arrays: dict[str, np.ndarray]) -> bytes:
    """Compressed .npz (one zip member per result field; no pickles). The object column "error"
    is stored as int32 codes into a unicode array of its distinct messages."""
    out = {k: v for k, v in arrays.items() if k != ERROR}
    if ERROR in arrays:
        messages, codes = [], np.full(len(arrays[ERROR]), -1, dtype=np.int32)
        seen: dict[str, int] = {}
        for i, msg in enumerate(arrays[ERROR]):
            if msg is not None:
                code = seen.get(msg)
                if code is None:
                    code = seen[msg] = len(messages)
                    messages.append(str(msg))
                codes[i] = code
        out["_error_code"] = codes
        out["_error_messages"] = np.array(messages or [""], dtype=str)
    buf = io.BytesIO()
    np.savez_compressed(buf, **out)
    return buf.getvalue()


def unpack(blob: bytes | memoryview) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    codes, messages = arrays.pop("_error_code", None), arrays.pop("_error_messages", None)
    if codes is not None:
        lookup = np.array([None, *messages.tolist()], dtype=object)
        arrays[ERROR] = lookup[codes + 1]
    return arrays


# --------------------------------------------------------------------------------------------
# Digests: what the summary needs, computed per chunk by the worker and merged at the end


def _round(x: float) -> float | None:
    x = float(x)
    return float(f"{x:.6g}") if math.isfinite(x) else None


def _feasible(arrays: dict[str, np.ndarray]) -> np.ndarray:
    n = len(next(iter(arrays.values())))
    fits = arrays.get(FITS)
    mask = np.ones(n, dtype=bool) if fits is None else np.asarray(fits, dtype=bool)
    return mask


def heat_pairs(axes: list[core.Axis]) -> list[tuple[int, int]]:
    """Axis pairs (i, j) drawn as heatmaps: small enough grids, at most HEAT_MAX_PAIRS, preferring
    pairs that involve a categorical axis (accelerator, preset) and the first axes."""
    pairs = [
        (i, j)
        for i in range(len(axes))
        for j in range(i + 1, len(axes))
        if len(axes[i]) * len(axes[j]) <= HEAT_MAX_CELLS and len(axes[i]) > 1 and len(axes[j]) > 1
    ]
    pairs.sort(key=lambda p: (not (axes[p[0]].kind == "str" or axes[p[1]].kind == "str"), p))
    if not pairs and len(axes) == 1 and len(axes[0]) <= HEAT_MAX_CELLS:
        return [(0, -1)]  # one axis: a one-row strip
    return pairs[:HEAT_MAX_PAIRS]


def chunk_digest(axes: list[core.Axis], start: int, arrays: dict[str, np.ndarray]) -> dict:
    n = len(next(iter(arrays.values()))) if arrays else 0
    feasible = _feasible(arrays) if n else np.zeros(0, dtype=bool)
    digest: dict[str, Any] = {"n": n, "feasible": int(feasible.sum()), "best": {}, "range": {}, "pareto": {}, "heat": {},
                              "errors": {}}
    if ERROR in arrays:
        msgs, counts = np.unique(np.array([m for m in arrays[ERROR] if m is not None], dtype=str), return_counts=True)
        top = np.argsort(-counts)[:10]
        digest["errors"] = {str(msgs[i])[:500]: int(counts[i]) for i in top}
    fields = [k for k in arrays if arrays[k].dtype.kind in "fiub"]
    ok_idx = np.flatnonzero(feasible)
    for metric in RANK_METRICS:
        if metric not in arrays or ok_idx.size == 0:
            continue
        values = arrays[metric].astype(np.float64)[ok_idx]
        finite = np.isfinite(values)
        if not finite.any():
            continue
        digest["range"][metric] = [_round(values[finite].min()), _round(values[finite].max())]
        k = min(BEST_K, values.size)
        top = np.argpartition(np.where(finite, values, np.inf), k - 1)[:k]
        rows = []
        for t in top:
            i = int(ok_idx[t])
            rows.append({"index": start + i, **{f: _json_scalar(arrays[f][i]) for f in fields}})
        digest["best"][metric] = rows
    if DAYS in arrays:
        for cost in PARETO_COSTS:
            if cost not in arrays or ok_idx.size == 0:
                continue
            x, y = arrays[DAYS][ok_idx].astype(np.float64), arrays[cost][ok_idx].astype(np.float64)
            front = core.pareto_front(x, y)[:PARETO_MAX_POINTS]
            digest["pareto"][cost] = [[start + int(ok_idx[i]), _round(x[i]), _round(y[i])] for i in front]
    if DAYS in arrays and ok_idx.size:
        step = max(1, ok_idx.size // SAMPLE_PER_CHUNK)
        picks = ok_idx[::step][:SAMPLE_PER_CHUNK]
        digest["sample"] = [
            [start + int(i), _round(arrays[DAYS][i]), *(_round(arrays[c][i]) if c in arrays else None for c in PARETO_COSTS)]
            for i in picks
        ]
    pos = core.decode_indices(axes, start, start + n)
    for i, j in heat_pairs(axes):
        ni = len(axes[i])
        nj = len(axes[j]) if j >= 0 else 1
        cell = pos[axes[i].field] * nj + (pos[axes[j].field] if j >= 0 else 0)
        for metric in HEAT_METRICS:
            if metric not in arrays:
                continue
            grid = np.full(ni * nj, np.inf)
            vals = np.where(feasible, arrays[metric].astype(np.float64), np.inf)
            vals = np.where(np.isfinite(vals), vals, np.inf)
            np.minimum.at(grid, cell, vals)
            digest["heat"][f"{i}|{j}|{metric}"] = [_round(v) if np.isfinite(v) else None for v in grid]
    return digest


def _json_scalar(v: Any) -> Any:
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating | float):
        return _round(v)
    return v


def merge_digests(axes: list[core.Axis], digests: list[dict]) -> dict:
    """The sweep summary: counts, per-metric ranges and best rows, Pareto fronts, heatmap grids."""
    summary: dict[str, Any] = {
        "scenarios": sum(d.get("n", 0) for d in digests),
        "feasible": sum(d.get("feasible", 0) for d in digests),
        "range": {},
        "best": {},
        "pareto": {},
        "heat": [],
        "errors": {},
    }
    for d in digests:
        for msg, count in d.get("errors", {}).items():
            summary["errors"][msg] = summary["errors"].get(msg, 0) + count
    summary["errors"] = dict(sorted(summary["errors"].items(), key=lambda kv: -kv[1])[:10])
    metrics = {m for d in digests for m in d.get("best", {})}
    for metric in RANK_METRICS:
        if metric not in metrics:
            continue
        lo = [d["range"][metric][0] for d in digests if metric in d.get("range", {})]
        hi = [d["range"][metric][1] for d in digests if metric in d.get("range", {})]
        summary["range"][metric] = [min(lo), max(hi)]
        rows = [r for d in digests for r in d.get("best", {}).get(metric, [])]
        rows.sort(key=lambda r: (r.get(metric) if r.get(metric) is not None else math.inf, r["index"]))
        summary["best"][metric] = rows[:BEST_K]
    for cost in PARETO_COSTS:
        points = [p for d in digests for p in d.get("pareto", {}).get(cost, [])]
        if not points:
            continue
        arr = np.array([[p[1] if p[1] is not None else np.nan, p[2] if p[2] is not None else np.nan] for p in points])
        front = core.pareto_front(arr[:, 0], arr[:, 1])
        summary["pareto"][cost] = [points[i] for i in front]
    sample = [p for d in digests for p in d.get("sample", [])]
    summary["sample"] = sample[:: max(1, math.ceil(len(sample) / SAMPLE_MAX))]
    summary["sample_fields"] = ["index", DAYS, *PARETO_COSTS]
    for key in sorted({k for d in digests for k in d.get("heat", {})}):
        i, j, metric = key.split("|", 2)
        i, j = int(i), int(j)
        grids = [np.array([np.inf if v is None else v for v in d["heat"][key]]) for d in digests if key in d.get("heat", {})]
        grid = np.minimum.reduce(grids)
        ni = len(axes[i])
        nj = len(axes[j]) if j >= 0 else 1
        summary["heat"].append({
            "x": axes[j].field if j >= 0 else None,
            "y": axes[i].field,
            "metric": metric,
            "z": [[_round(v) if np.isfinite(v) else None for v in row] for row in grid.reshape(ni, nj)],
        })
    return summary


# --------------------------------------------------------------------------------------------
# Selectors: status and results


def status_payload(sweep: Sweep, request=None) -> dict[str, Any]:
    from django.urls import reverse
    from django.utils import translation

    def url(name: str, *args) -> str:
        with translation.override(settings.LANGUAGE_CODE):  # language-neutral links
            path = reverse(name, args=args)
        return request.build_absolute_uri(path) if request is not None else path

    timings = {
        "created_at": sweep.created_at.isoformat() if sweep.created_at else None,
        "started_at": sweep.started_at.isoformat() if sweep.started_at else None,
        "finished_at": sweep.finished_at.isoformat() if sweep.finished_at else None,
        "queue_wait_s": _seconds(sweep.created_at, sweep.started_at),
        "elapsed_s": _seconds(sweep.created_at, sweep.finished_at or timezone.now()),  # as the user waits
        "compute_s": round(sweep.compute_s, 3),
    }
    if sweep.finished_at and sweep.done and timings["elapsed_s"]:
        timings["scenarios_per_s"] = round(sweep.done / max(timings["elapsed_s"], 1e-6))
    owned = sweep.owner_id is not None
    return {
        "id": sweep.pk,
        "name": sweep.name,
        "status": sweep.status,
        "progress": {"done": sweep.done, "total": sweep.total, "chunks_done": sweep.chunks_done,
                     "chunks_total": sweep.chunks_total},
        "timings": timings,
        "error": sweep.error,
        "axes": [compact_axis(a) for a in sweep.axes],
        "base": sweep.base,
        "summary": sweep.summary if sweep.status == Sweep.Status.DONE else None,
        "engine_version": sweep.engine_version,
        "catalog_version": sweep.catalog_version,
        "share_url": url("sweeps_pages:report", sweep.share_token),
        "status_url": url("sweeps_api:detail", sweep.pk) if owned else url("sweeps_api:shared", sweep.share_token),
        "results_url": url("sweeps_api:results", sweep.pk) if owned else url("sweeps_api:shared-results", sweep.share_token),
    }


AXIS_VALUES_SHOWN = 1000


def compact_axis(axis: dict) -> dict:
    """An axis for the status JSON: every value up to AXIS_VALUES_SHOWN, else first and last (the
    results carry each row's values)."""
    values = axis["values"]
    out = {"field": axis["field"], "count": len(values), "first": values[0], "last": values[-1]}
    if len(values) <= AXIS_VALUES_SHOWN:
        out["values"] = values
    return out


def _seconds(a, b) -> float | None:
    if a is None or b is None:
        return None
    return round((b - a).total_seconds(), 3)


def result_columns(sweep: Sweep) -> list[str]:
    chunk = SweepChunk.objects.filter(sweep=sweep).only("data").first()
    fields = list(unpack(chunk.data)) if chunk else []
    return ["index"] + [a["field"] for a in sweep.axes] + fields


def iter_result_rows(sweep: Sweep, start: int = 0, stop: int | None = None):
    """Yield (columns, rows) blocks for scenarios [start, stop) in index order, one chunk at a
    time (memory bounded by a chunk). Missing chunks (still running) are skipped."""
    stop = sweep.total if stop is None else min(stop, sweep.total)
    if start >= stop:
        return
    axes = axes_of(sweep)
    first, last = start // sweep.chunk_size, (stop - 1) // sweep.chunk_size
    for chunk in SweepChunk.objects.filter(sweep=sweep, index__gte=first, index__lte=last).order_by("index").iterator():
        arrays = unpack(chunk.data)
        lo, hi = max(start, chunk.start), min(stop, chunk.stop)
        inputs = core.decode(axes, lo, hi)
        cols = {"index": np.arange(lo, hi)}
        cols.update(inputs)
        for key, value in arrays.items():
            cols[key] = value[lo - chunk.start: hi - chunk.start]
        yield list(cols), [list(row) for row in zip(*(c.tolist() for c in cols.values()), strict=True)]


def result_page(sweep: Sweep, page: int, page_size: int) -> dict[str, Any]:
    start = (page - 1) * page_size
    stop = min(start + page_size, sweep.total)
    columns: list[str] = []
    rows: list[list] = []
    for cols, block in iter_result_rows(sweep, start, stop):
        columns = cols
        rows.extend(block)
    if not columns:
        columns = ["index"] + [a["field"] for a in sweep.axes]
    pages = max(1, math.ceil(sweep.total / page_size))
    return {"page": page, "pages": pages, "page_size": page_size, "count": sweep.total, "columns": columns,
            "rows": [[_clean(v) for v in row] for row in rows]}


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def scenario_of(sweep: Sweep, index: int) -> dict:
    return core.scenario_at(sweep.base, axes_of(sweep), index)
