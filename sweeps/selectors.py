"""Sweep selectors: the status payload and the stored results, read side only."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from api.timestamps import rfc3339
from estimator.contract import sweep as estimator_sweep
from teams.selectors import visible_to

from .digests import unpack
from .models import Sweep, SweepChunk
from .ranking import CURRENCY_FIELD
from .services import axes_of

# --------------------------------------------------------------------------------------------
# Selectors: who sees which sweep


def sweeps_of(*, user):
    """The user's own sweeps and those of the user's teams, newest first (none when anonymous)."""
    if not user or not user.is_authenticated:
        return Sweep.objects.none()
    return Sweep.objects.filter(visible_to(user=user))


def visible_sweep(*, user, pk) -> Sweep:
    """Sweep `pk` if the user may see it; Sweep.DoesNotExist otherwise (existence not disclosed)."""
    if not 0 < int(pk) < 2**63:
        raise Sweep.DoesNotExist
    return sweeps_of(user=user).get(pk=pk)


# --------------------------------------------------------------------------------------------
# Selectors: status and results


def status_payload(*, sweep: Sweep, request=None) -> dict[str, Any]:
    from django.urls import reverse
    from django.utils import translation

    def url(name: str, *args) -> str:
        with translation.override(settings.LANGUAGE_CODE):  # language-neutral links
            path = reverse(name, args=args)
        return request.build_absolute_uri(path) if request is not None else path

    timings: dict[str, Any] = {
        "created_at": rfc3339(sweep.created_at),
        "started_at": rfc3339(sweep.started_at),
        "finished_at": rfc3339(sweep.finished_at),
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
        "progress": {
            "done": sweep.done,
            "total": sweep.total,
            "chunks_done": sweep.chunks_done,
            "chunks_total": sweep.chunks_total,
        },
        "timings": timings,
        "error": sweep.error,
        "axes": [compact_axis(axis=a) for a in sweep.axes],
        "base": sweep.base,
        "summary": sweep.summary if sweep.status == Sweep.Status.DONE else None,
        "currency": sweep_currency(sweep=sweep),
        "engine_version": sweep.engine_version,
        "catalog_version": sweep.catalog_version,
        "team": sweep.team.slug if sweep.team is not None else None,
        "price_books": {
            ref: {k: doc[k] for k in ("name", "version", "currency", "price_date")}
            for ref, doc in (sweep.price_books or {}).items()
        },
        "share_url": url("sweeps_pages:report", sweep.share_token),
        "status_url": url("sweeps_api:detail", sweep.pk)
        if owned
        else url("sweeps_api:shared", sweep.share_token),
        "results_url": url("sweeps_api:results", sweep.pk)
        if owned
        else url("sweeps_api:shared-results", sweep.share_token),
    }


AXIS_VALUES_SHOWN = 1000


def sweep_currency(*, sweep: Sweep) -> str | None:
    """The ISO 4217 currency of every amount of the sweep (rows, summary); None when
    cost.currency is an axis: then each row's is in that column, and the summary's money rankings
    are in USD (sweeps.ranking, summary["ranked_in"])."""
    if any(a["field"] == CURRENCY_FIELD for a in sweep.axes):
        return None
    return str((sweep.base.get("cost") or {}).get("currency") or "USD")


def compact_axis(*, axis: dict) -> dict:
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


def result_columns(*, sweep: Sweep) -> list[str]:
    chunk = SweepChunk.objects.filter(sweep=sweep).only("data").first()
    fields = list(unpack(chunk.data)) if chunk else []
    return ["index"] + [a["field"] for a in sweep.axes] + fields


def iter_result_columns(*, sweep: Sweep, start: int = 0, stop: int | None = None, block_rows: int = 0):
    """Yield (column names, column arrays) blocks for scenarios [start, stop) in index order: the
    index, the axis values, then the stored result fields; one chunk unpacked at a time and at most
    `block_rows` rows per block (0: a chunk's rows in one block). Missing chunks (still running)
    are skipped."""
    stop = sweep.total if stop is None else min(stop, sweep.total)
    if start >= stop:
        return
    axes = axes_of(sweep=sweep)
    first, last = start // sweep.chunk_size, (stop - 1) // sweep.chunk_size
    for chunk in (
        SweepChunk.objects.filter(sweep=sweep, index__gte=first, index__lte=last).order_by("index").iterator()
    ):
        arrays = unpack(chunk.data)
        lo, hi = max(start, chunk.start), min(stop, chunk.stop)
        step = block_rows if block_rows > 0 else hi - lo
        for a in range(lo, hi, step):
            b = min(a + step, hi)
            cols = {"index": np.arange(a, b)}
            cols.update(estimator_sweep.decode(axes, a, b))
            for key, value in arrays.items():
                cols[key] = value[a - chunk.start : b - chunk.start]
            yield list(cols), list(cols.values())


def result_page(*, sweep: Sweep, page: int, page_size: int) -> dict[str, Any]:
    start = (page - 1) * page_size
    stop = min(start + page_size, sweep.total)
    columns: list[str] = []
    rows: list[list] = []
    for names, cols in iter_result_columns(sweep=sweep, start=start, stop=stop):
        columns = names
        rows.extend(map(list, zip(*(_json_cells(c) for c in cols), strict=True)))
    if not columns:
        columns = ["index"] + [a["field"] for a in sweep.axes]
    pages = max(1, math.ceil(sweep.total / page_size))
    return {
        "page": page,
        "pages": pages,
        "page_size": page_size,
        "count": sweep.total,
        "columns": columns,
        "rows": rows,
    }


def _json_cells(values: np.ndarray) -> list:
    """A column's values for JSON: non-finite floats as null (JSON has no NaN), the rest as is;
    number columns converted at once, only other columns visited value by value."""
    cells = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(~np.isfinite(values)).tolist():
            cells[i] = None
        return cells
    if values.dtype.kind in "biuU":
        return cells
    return [_clean(v) for v in cells]


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def scenario_of(*, sweep: Sweep, index: int) -> dict:
    return estimator_sweep.scenario_at(sweep.base, axes_of(sweep=sweep), index)
