"""Sweep results at rest: the compact per-chunk encoding (compressed npz of every summary field)
and the per-chunk digests (best rows, Pareto candidates, heatmap minima, a point sample) merged into
a sweep's summary when its last chunk lands. Pure functions of arrays; no database access."""

from __future__ import annotations

import io
import math
import zipfile
from typing import Any

import numpy as np

from estimator.contract import sweep as estimator_sweep

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


ERROR = "error"  # per-row message (None where the row was planned); stored as codes + messages


def pack(arrays: dict[str, np.ndarray]) -> bytes:
    """Compressed .npz (one zip member per result field; no pickles). The object column "error"
    is stored as int32 codes into a unicode array of its distinct messages."""
    out = {k: v for k, v in arrays.items() if k != ERROR}
    if ERROR in arrays:
        messages: list[str] = []
        codes = np.full(len(arrays[ERROR]), -1, dtype=np.int32)
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
    # np.savez_compressed's layout (a zip of .npy members, read by np.load) at deflate level
    # PACK_LEVEL (a 50,000-row chunk: 73 ms and 440 kB at 3, 160 ms and 292 kB at the default 6)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=PACK_LEVEL) as zf:
        for name, value in out.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buf.getvalue()


PACK_LEVEL = 3  # zlib level of the stored chunks: half the time of level 6 for 1.5x the bytes


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


def _best_rows(arrays, fields, metric: str, idx: np.ndarray, start: int) -> list[dict] | None:
    """The BEST_K rows of `idx` lowest in `metric`, with every numeric field."""
    values = arrays[metric].astype(np.float64)[idx]
    finite = np.isfinite(values)
    if not finite.any():
        return None
    k = min(BEST_K, values.size)
    top = np.argpartition(np.where(finite, values, np.inf), k - 1)[:k]
    return [
        {"index": start + int(idx[t]), **{f: _json_scalar(arrays[f][int(idx[t])]) for f in fields}}
        for t in top
    ]


def _front(arrays, cost: str, idx: np.ndarray, start: int) -> list[list]:
    x, y = arrays[DAYS][idx].astype(np.float64), arrays[cost][idx].astype(np.float64)
    front = estimator_sweep.pareto_front(x, y)[:PARETO_MAX_POINTS]
    return [[start + int(idx[i]), _round(x[i]), _round(y[i])] for i in front]


def _series_digest(axes, start: int, arrays, fields, ok_idx: np.ndarray) -> dict | None:
    """Per value of the series axis: its Pareto fronts and its best rows by time and owned cost."""
    where = series_axis(axes)
    if where is None or DAYS not in arrays or ok_idx.size == 0:
        return None
    axis = axes[where]
    n = len(next(iter(arrays.values())))
    pos = estimator_sweep.decode_indices(axes, start, start + n)[axis.field][ok_idx]
    out: dict[str, Any] = {"field": axis.field, "pareto": {}, "best": {}}
    for v in np.unique(pos):
        idx = ok_idx[pos == v]
        key = str(axis.values[int(v)])
        out["pareto"][key] = {c: _front(arrays, c, idx, start) for c in PARETO_COSTS if c in arrays}
        out["best"][key] = {
            m: rows
            for m in (DAYS, COST_OWNED)
            if m in arrays and (rows := _best_rows(arrays, fields, m, idx, start))
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
        "errors": {},
    }
    if ERROR in arrays:
        msgs, counts = np.unique(
            np.array([m for m in arrays[ERROR] if m is not None], dtype=str), return_counts=True
        )
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
            front = estimator_sweep.pareto_front(x, y)[:PARETO_MAX_POINTS]
            digest["pareto"][cost] = [[start + int(ok_idx[i]), _round(x[i]), _round(y[i])] for i in front]
    series = _series_digest(axes, start, arrays, fields, ok_idx)
    if series:
        digest["series"] = series
    if DAYS in arrays and ok_idx.size:
        step = max(1, ok_idx.size // SAMPLE_PER_CHUNK)
        picks = ok_idx[::step][:SAMPLE_PER_CHUNK]
        digest["sample"] = [
            [
                start + int(i),
                _round(arrays[DAYS][i]),
                *(_round(arrays[c][i]) if c in arrays else None for c in PARETO_COSTS),
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
        return _round(float(v))
    return v


def merge_digests(axes: list[estimator_sweep.Axis], digests: list[dict]) -> dict:
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
        arr = np.array(
            [[p[1] if p[1] is not None else np.nan, p[2] if p[2] is not None else np.nan] for p in points]
        )
        front = estimator_sweep.pareto_front(arr[:, 0], arr[:, 1])
        summary["pareto"][cost] = [points[i] for i in front]
    series = _merge_series(axes, [d["series"] for d in digests if d.get("series")])
    if series:
        summary["series"] = series
    sample = [p for d in digests for p in d.get("sample", [])]
    summary["sample"] = sample[:: max(1, math.ceil(len(sample) / SAMPLE_MAX))]
    summary["sample_fields"] = ["index", DAYS, *PARETO_COSTS]
    for key in sorted({k for d in digests for k in d.get("heat", {})}):
        i, j, metric = key.split("|", 2)
        i, j = int(i), int(j)
        grids = [
            np.array([np.inf if v is None else v for v in d["heat"][key]])
            for d in digests
            if key in d.get("heat", {})
        ]
        grid = np.minimum.reduce(grids)
        ni = len(axes[i])
        nj = len(axes[j]) if j >= 0 else 1
        summary["heat"].append(
            {
                "x": axes[j].field if j >= 0 else None,
                "y": axes[i].field,
                "metric": metric,
                "z": [[_round(v) if np.isfinite(v) else None for v in row] for row in grid.reshape(ni, nj)],
            }
        )
    return summary


def _merged_front(points: list[list]) -> list[list]:
    if not points:
        return []
    arr = np.array([[np.nan if p[1] is None else p[1], np.nan if p[2] is None else p[2]] for p in points])
    return [points[i] for i in estimator_sweep.pareto_front(arr[:, 0], arr[:, 1])]


def _merge_series(axes: list[estimator_sweep.Axis], parts: list[dict]) -> dict | None:
    """The chunks' series digests merged: per series value (in the axis' order), the front of all
    fronts and the best rows."""
    if not parts:
        return None
    seen = {v for part in parts for v in part["pareto"]}
    axis = next(a for a in axes if a.field == parts[0]["field"])
    values = [str(v) for v in axis.values if str(v) in seen]
    out: dict[str, Any] = {"field": parts[0]["field"], "values": values, "pareto": {}, "best": {}}
    for v in values:
        out["pareto"][v] = {
            c: _merged_front([p for part in parts for p in part["pareto"].get(v, {}).get(c, [])])
            for c in PARETO_COSTS
        }
        out["best"][v] = {}
        for metric in (DAYS, COST_OWNED):
            rows = [r for part in parts for r in part["best"].get(v, {}).get(metric, [])]
            rows.sort(key=lambda r: (r.get(metric) if r.get(metric) is not None else math.inf, r["index"]))
            if rows:
                out["best"][v][metric] = rows[:BEST_K]
    return out
