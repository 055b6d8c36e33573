"""Sweep results at rest: the compact per-chunk encoding (compressed npz of every summary field)
and the per-chunk digests (best rows, Pareto candidates, heatmap minima, a point sample), folded
into a sweep's summary when its last chunk lands (sweeps.summary). Pure functions of arrays; no
database access."""

from __future__ import annotations

import io
import math
import zipfile
from typing import Any

import numpy as np

from estimator.contract import sweep as estimator_sweep
from estimator.plan.batch_reasons import REASON_CARDS_FIELD

from .ranking import mixed_currencies, ranked
from .row_reasons import ERROR, chunk_reasons, message_codes, with_reasons

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
# A sweep over models (or chips) compares like with like: each value of the first of these axes is a
# series with its own Pareto front and its own best rows (else the smallest model wins everything).
SERIES_FIELDS = ("model.preset", "model.params", "hardware.accelerator", "hardware.server")
SERIES_MAX = 12  # values of the series axis drawn as series (an axis with more is no series)


# --------------------------------------------------------------------------------------------
# Storage format


# "error" (row_reasons.ERROR): per-row message (None where planned), stored as codes + messages
# Member-name prefixes of the encoded columns (a field name never starts with "_"):
CONST = "_const."  # a column whose every element has the same bits: that one element
CODES, VALUES = "_codes.", "_values."  # a text column: int32 codes into its distinct values
STARTS, RUNS = "_starts.", "_runs."  # a column of long runs: where each run starts, its value
TEXTS, TEXT_VALUES = "_texts.", "_text_values."  # an object column of texts or None: as "error"
ROWS = "_rows"  # the row count, for the constant and run columns (absent from chunks stored before)
RUNS_MAX_SHARE = 0.25  # a column is stored as runs when it has at most this many runs per element
RUNS_MIN_ROWS = 4096  # ... and at least this many elements (two more zip members cost ~200 bytes)


def pack(arrays: dict[str, np.ndarray]) -> bytes:
    """Compressed .npz (one zip member per result field; no pickles; np.load reads it).

    Encoded so that deflate has less to read (unpack restores the same arrays, bit for bit): a
    column of one repeated value is stored as that value (`_const.<field>`), a column of long runs
    of one value (a figure that depends only on the slow axes: a grid's rows are in axis order) as
    where each run starts and its value (`_starts.`, `_runs.`), a text column as int32 codes into
    its distinct values (a 50,000-row `stack.id` is 8 MB of UTF-32 for two values), the object
    column "error" as codes into its distinct messages (-1: no message), any other object column of
    texts or None (a refused group's errors, batch_reasons.REASON_ERRORS_FIELD) so too (`_texts.`)."""
    out: dict[str, np.ndarray] = {ROWS: np.array([len(next(iter(arrays.values()), ()))], dtype=np.int64)}
    for name, value in arrays.items():
        if name == ERROR:
            codes, messages = message_codes(value)
            out["_error_code"], out["_error_messages"] = codes, messages
        elif value.dtype == object:
            out[TEXTS + name], out[TEXT_VALUES + name] = message_codes(value)
        elif (one := _constant(value)) is not None:
            out[CONST + name] = one
        elif (runs := _runs(value)) is not None:
            out[STARTS + name], out[RUNS + name] = runs
        elif value.dtype.kind == "U" and (coded := _text_codes(value)) is not None:
            out[CODES + name], out[VALUES + name] = coded
        else:
            out[name] = value
    buf = io.BytesIO()
    # np.savez_compressed's layout (a zip of .npy members, read by np.load) at deflate level
    # PACK_LEVEL (a 50,000-row chunk before the encodings: 73 ms and 440 kB at 3, 160 ms and 292 kB
    # at the default 6; with them, 17 ms and 335 kB at 3, most of it deflating 24 float columns)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=PACK_LEVEL) as zf:
        for name, value in out.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buf.getvalue()


PACK_LEVEL = 3  # zlib level of the stored chunks: half the time of level 6 for 1.5x the bytes


def _constant(value: np.ndarray) -> np.ndarray | None:
    """The first element (a 1-element array) of a 1-D numeric or boolean column of more than one
    element whose elements all have the same bits (so NaN == NaN and -0.0 != 0.0), else None."""
    width = value.dtype.itemsize
    if value.ndim != 1 or value.size < 2 or value.dtype.kind not in "biuf" or width not in (1, 2, 4, 8):
        return None
    bits = value.view(f"u{width}")
    return value[:1].copy() if bool((bits == bits[0]).all()) else None


def _runs(value: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(int32 start of each run of equal bits, the run's value) of a 1-D numeric or boolean column
    with at most RUNS_MAX_SHARE runs per element, else None (a 50,000-row chunk of a grid: its
    cards-only figures have 50 runs, its MFU-dependent ones 2,500, a price-dependent one 50,000)."""
    width = value.dtype.itemsize
    if (
        value.ndim != 1
        or value.size < RUNS_MIN_ROWS
        or value.dtype.kind not in "biuf"
        or width not in (1, 2, 4, 8)
    ):
        return None
    bits = value.view(f"u{width}")
    changes = np.flatnonzero(bits[1:] != bits[:-1]) + 1
    if changes.size + 1 > RUNS_MAX_SHARE * value.size:
        return None
    starts = np.concatenate(([0], changes)).astype(np.int32)
    return starts, value[starts]


TEXT_CODES_MAX = 64  # distinct values of a text column coded (one comparison pass each); more: as is


def _text_codes(value: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(int32 code per element, the distinct values in order of first appearance) of a 1-D text
    column of at most TEXT_CODES_MAX distinct values, else None. One vectorized comparison per
    distinct value, no sort (np.unique sorts the strings: 13 ms for 50,000 of 40 characters)."""
    if value.ndim != 1:
        return None
    codes = np.full(value.size, -1, dtype=np.int32)
    distinct: list[np.ndarray] = []
    while (left := np.flatnonzero(codes < 0)).size:
        if len(distinct) == TEXT_CODES_MAX:
            return None
        first = value[left[0]]
        codes[value == first] = len(distinct)
        distinct.append(first)
    return codes, np.array(distinct, dtype=value.dtype)


def unpack(blob: bytes | memoryview) -> dict[str, np.ndarray]:
    """The arrays pack() stored, in their order (chunks stored before the encodings read too)."""
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as npz:
        stored = {k: npz[k] for k in npz.files}
    n = int(stored.pop(ROWS)[0]) if ROWS in stored else 0
    arrays: dict[str, np.ndarray] = {}
    for key, value in stored.items():
        if key.startswith(CONST):
            arrays[key[len(CONST) :]] = np.repeat(value, n)
        elif key.startswith(STARTS):
            name = key[len(STARTS) :]
            arrays[name] = np.repeat(stored[RUNS + name], np.diff(np.append(value, n)))
        elif key.startswith(CODES):
            arrays[key[len(CODES) :]] = stored[VALUES + key[len(CODES) :]][value]
        elif key == "_error_code":
            lookup = np.array([None, *stored["_error_messages"].tolist()], dtype=object)
            arrays[ERROR] = lookup[value + 1]
        elif key.startswith(TEXTS):
            lookup = np.array([None, *stored[TEXT_VALUES + key[len(TEXTS) :]].tolist()], dtype=object)
            arrays[key[len(TEXTS) :]] = lookup[value + 1]
        elif not key.startswith((VALUES, RUNS, TEXT_VALUES, "_error_messages")):
            arrays[key] = value
    return with_reasons(arrays)  # a chunk stored before the reason columns: read with them


# --------------------------------------------------------------------------------------------
# Digests: what the summary needs, computed per chunk by the worker and merged at the end


def _round(x: float) -> float | None:
    x = float(x)
    return float(f"{x:.6g}") if math.isfinite(x) else None


def _feasible(arrays: dict[str, np.ndarray]) -> np.ndarray:
    n = len(next(iter(arrays.values())))
    fits = arrays.get(FITS)
    return np.ones(n, dtype=bool) if fits is None else np.asarray(fits, dtype=bool)


def heat_pairs(axes: list[estimator_sweep.Axis]) -> list[tuple[int, int]]:
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


def series_axis(axes: list[estimator_sweep.Axis]) -> int | None:
    """The axis whose values are the series (models first, then chips), or None."""
    for field in SERIES_FIELDS:
        for i, a in enumerate(axes):
            if a.field == field and 1 < len(a) <= SERIES_MAX:
                return i
    return None


def _best_rows(arrays, fields, metric: str, idx: np.ndarray, start: int, mixed: bool) -> list[dict] | None:
    """The BEST_K rows of `idx` lowest in `metric` (as ranked), with every numeric field."""
    values = ranked(arrays, metric, mixed)[idx]
    finite = np.isfinite(values)
    if not finite.any():
        return None
    k = min(BEST_K, values.size)
    top = np.argpartition(np.where(finite, values, np.inf), k - 1)[:k]
    return _rows_at(arrays, fields, idx[top], start)


def _rows_at(arrays, fields, at: np.ndarray, start: int) -> list[dict]:
    """Rows `at` (positions in the chunk) as {"index", field: JSON scalar}: one gather and one
    tolist per field, no NumPy scalar per cell: floats rounded (_round), ints and booleans as they are."""
    columns = [(f, _json_list(arrays[f][at])) for f in fields]
    return [
        {"index": start + i, **{f: column[r] for f, column in columns}} for r, i in enumerate(at.tolist())
    ]


def _json_list(values: np.ndarray) -> list:
    """A numeric or boolean array as JSON values: floats through _round, ints and booleans as is."""
    if values.dtype.kind == "f":
        return [_round(v) for v in values.tolist()]
    return values.tolist()


PIVOT_MIN_POINTS = 4096  # fewer points: pareto_front directly (the pivots would not pay)
PIVOT_SAMPLE = 64  # the pivots are on the front of every PIVOT_SAMPLE-th point ...
PIVOTS_MAX = 8  # ... at most this many, evenly spaced along it


def pareto(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """estimator.contract.sweep.pareto_front(x, y), the same indices in the same order, with
    fewer points sorted: points that a few pivots already remove are dropped first.

    pareto_front sorts by (x, y, index) and keeps a point when its y is below every earlier y; a
    point q is removed exactly when some point r sorts before it with y_r <= y_q. Any point r can
    witness that, so every point a pivot r removes is removed by pareto_front too, and the front
    of the points left is the front of all: each removed point's witness on the front, the first
    point reaching the running minimum before it, is left (it is on the front, which no pivot
    removes). The pivots are front points of a sample (cheap: 1/PIVOT_SAMPLE of the points);
    on a chunk they leave a few hundred of 50,000 points to sort."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < PIVOT_MIN_POINTS:
        return estimator_sweep.pareto_front(x, y)
    sample = np.arange(0, x.size, PIVOT_SAMPLE)
    pivots = sample[estimator_sweep.pareto_front(x[sample], y[sample])]
    pivots = pivots[np.unique(np.linspace(0, pivots.size - 1, min(PIVOTS_MAX, pivots.size)).astype(int))]
    left = np.isfinite(x) & np.isfinite(y)
    index = np.arange(x.size)
    for r in pivots.tolist():
        xr, yr = x[r], y[r]
        same_x = x == xr
        before = (xr < x) | (same_x & (yr < y)) | (same_x & (yr == y) & (r < index))
        left &= ~(before & (yr <= y))
    kept = np.flatnonzero(left)
    return kept[estimator_sweep.pareto_front(x[kept], y[kept])]


def _front(arrays, cost: str, idx: np.ndarray, start: int, mixed: bool) -> list[list]:
    x, y = arrays[DAYS][idx].astype(np.float64), ranked(arrays, cost, mixed)[idx]
    front = pareto(x, y)[:PARETO_MAX_POINTS]
    return [[start + int(idx[i]), _round(x[i]), _round(y[i])] for i in front]


def _series_digest(axes, start: int, arrays, fields, ok_idx: np.ndarray) -> dict | None:
    """Per value of the series axis: its Pareto fronts and its best rows by time and owned cost."""
    where = series_axis(axes)
    if where is None or DAYS not in arrays or ok_idx.size == 0:
        return None
    axis, mixed = axes[where], mixed_currencies(axes)
    n = len(next(iter(arrays.values())))
    pos = estimator_sweep.decode_indices(axes, start, start + n)[axis.field][ok_idx]
    out: dict[str, Any] = {"field": axis.field, "pareto": {}, "best": {}}
    for v in np.unique(pos):
        idx = ok_idx[pos == v]
        key = str(axis.values[int(v)])
        out["pareto"][key] = {c: _front(arrays, c, idx, start, mixed) for c in PARETO_COSTS if c in arrays}
        out["best"][key] = {
            m: rows
            for m in (DAYS, COST_OWNED)
            if m in arrays and (rows := _best_rows(arrays, fields, m, idx, start, mixed))
        }
    return out


def chunk_digest(axes: list[estimator_sweep.Axis], start: int, arrays: dict[str, np.ndarray]) -> dict:
    n = len(next(iter(arrays.values()))) if arrays else 0
    feasible = _feasible(arrays) if n else np.zeros(0, dtype=bool)
    digest: dict[str, Any] = {
        "n": n,
        "feasible": int(feasible.sum()),
        "best": {},
        "range": {},
        "pareto": {},
        "heat": {},
        **chunk_reasons(arrays),  # the rows without a plan: their reasons (row_reasons)
    }
    fields = [k for k in arrays if arrays[k].dtype.kind in "fiub" and k != REASON_CARDS_FIELD]  # planned rows
    ok_idx = np.flatnonzero(feasible)
    mixed = mixed_currencies(axes)
    for metric in RANK_METRICS:
        if metric not in arrays or ok_idx.size == 0:
            continue
        values = ranked(arrays, metric, mixed)[ok_idx]
        finite = np.isfinite(values)
        if not finite.any():
            continue
        digest["range"][metric] = [_round(values[finite].min()), _round(values[finite].max())]
        k = min(BEST_K, values.size)
        top = np.argpartition(np.where(finite, values, np.inf), k - 1)[:k]
        digest["best"][metric] = _rows_at(arrays, fields, ok_idx[top], start)
    if DAYS in arrays:
        for cost in PARETO_COSTS:
            if cost not in arrays or ok_idx.size == 0:
                continue
            x, y = arrays[DAYS][ok_idx].astype(np.float64), ranked(arrays, cost, mixed)[ok_idx]
            front = pareto(x, y)[:PARETO_MAX_POINTS]
            digest["pareto"][cost] = [[start + int(ok_idx[i]), _round(x[i]), _round(y[i])] for i in front]
    series = _series_digest(axes, start, arrays, fields, ok_idx)
    if series:
        digest["series"] = series
    if DAYS in arrays and ok_idx.size:
        step = max(1, ok_idx.size // SAMPLE_PER_CHUNK)
        picks = ok_idx[::step][:SAMPLE_PER_CHUNK]
        costs = {c: ranked(arrays, c, mixed) for c in PARETO_COSTS if c in arrays}
        digest["sample"] = [
            [
                start + int(i),
                _round(arrays[DAYS][i]),
                *(_round(costs[c][i]) if c in costs else None for c in PARETO_COSTS),
            ]
            for i in picks
        ]
    pos = estimator_sweep.decode_indices(axes, start, start + n)
    for i, j in heat_pairs(axes):
        ni = len(axes[i])
        nj = len(axes[j]) if j >= 0 else 1
        cell = pos[axes[i].field] * nj + (pos[axes[j].field] if j >= 0 else 0)
        for metric in HEAT_METRICS:
            if metric not in arrays:
                continue
            grid = np.full(ni * nj, np.inf)
            vals = np.where(feasible, ranked(arrays, metric, mixed), np.inf)
            vals = np.where(np.isfinite(vals), vals, np.inf)
            np.minimum.at(grid, cell, vals)
            digest["heat"][f"{i}|{j}|{metric}"] = [_round(v) if np.isfinite(v) else None for v in grid]
    return digest
