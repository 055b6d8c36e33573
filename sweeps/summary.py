"""A sweep's summary from its chunks' digests (sweeps.digests.chunk_digest), folded one digest at a
time in chunk order: counts, per-metric ranges and best rows, Pareto fronts (overall and per
series), heatmap grids, the point sample. Pure functions of the digests; no database access.

Folded, not gathered: the finisher (sweeps.services.maybe_finish) reads the digests one by one and
holds only what the summary can still need (candidate best rows and front points, cut back to the
BEST_K best rows and to the front once more than ROWS_KEPT and FRONT_KEPT gather; one running grid
per heatmap; the sample points), not every chunk's digest (about 250 kB of JSON each, 20 of them
for 1,000,000 scenarios), so its memory does not grow with the rows. A cut changes nothing of what
the merge of the whole list gives:
- the best rows: the BEST_K first in best_first order, a total order (ranking value, then the
  unique scenario index), of the rows kept and a digest's are the BEST_K first of all so far;
- a Pareto front: the front of (the front so far + a digest's points). estimator.contract.sweep.
  pareto_front keeps a point when its y is below every y sorted before it (by x, y, then position);
  a point off the front has a point before it with a y at most its own, so dropping it changes no
  other point's verdict, and the front's points (distinct in x) keep their places before the
  digest's points, as in the whole list;
- a heatmap cell: the minimum, which folds."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from estimator.contract import sweep as estimator_sweep

from .digests import BEST_K, COST_OWNED, DAYS, PARETO_COSTS, RANK_METRICS, SAMPLE_MAX, _round
from .ranking import RANKED_IN, best_first, mixed_currencies
from .row_reasons import ReasonFold

Axes = list[estimator_sweep.Axis]


def merge_digests(axes: Axes, digests: Iterable[dict]) -> dict:
    """The sweep summary of `digests` (in chunk order, read once: a generator does)."""
    fold = _Fold(axes)
    for d in digests:
        fold.add(d)
    return fold.summary()


def _front(points: list[list]) -> list[list]:
    """The Pareto front of stored [index, x, y] points (None: not finite), in pareto_front's order."""
    if not points:
        return []
    arr = np.array([[np.nan if p[1] is None else p[1], np.nan if p[2] is None else p[2]] for p in points])
    return [points[i] for i in estimator_sweep.pareto_front(arr[:, 0], arr[:, 1])]


# Candidates held before they are cut back (a cut per digest would cost a sort per digest and per
# series value: 1.9x the time of the gathered merge on 20 chunks); the fold's memory stays bounded.
FRONT_KEPT = 2048  # points of one front
ROWS_KEPT = 8 * BEST_K  # best rows of one metric


def _more_points(kept: list[list], points: list[list]) -> list[list]:
    """The candidate points with a digest's: cut back to their front past FRONT_KEPT."""
    kept.extend(points)
    return _front(kept) if len(kept) > FRONT_KEPT else kept


class _Fold:
    """What the summary still needs after the digests so far (see the module's docstring)."""

    def __init__(self, axes: Axes) -> None:
        self.axes, self.mixed = axes, mixed_currencies(axes)
        self.scenarios = self.feasible = 0
        self.reasons = ReasonFold()  # the rows without a plan: their reasons (row_reasons)
        self.range: dict[str, list] = {}  # metric: [lowest, highest]
        self.best: dict[str, list[dict]] = {}  # metric: candidate rows (its BEST_K and a few more)
        self.pareto: dict[str, list[list]] = {}  # cost: candidate points (its front and a few more)
        self.series_field: str | None = None
        self.series_pareto: dict[str, dict[str, list[list]]] = {}  # value: cost: candidate points
        self.series_best: dict[str, dict[str, list[dict]]] = {}  # value: metric: candidate rows
        self.sample: list[list] = []
        self.heat: dict[str, np.ndarray] = {}  # "i|j|metric": the running minimum per cell

    def _top(self, kept: list[dict], rows: list[dict], metric: str) -> list[dict]:
        """The candidate rows with a digest's: cut back to the BEST_K best past ROWS_KEPT."""
        kept.extend(rows)
        return best_first(kept, metric, self.mixed)[:BEST_K] if len(kept) > ROWS_KEPT else kept

    def _best(self, kept: list[dict], metric: str) -> list[dict]:
        return best_first(kept, metric, self.mixed)[:BEST_K]

    def add(self, d: dict) -> None:
        self.scenarios += d.get("n", 0)
        self.feasible += d.get("feasible", 0)
        self.reasons.add(d)
        for metric, (lo, hi) in d.get("range", {}).items():
            was = self.range.get(metric)
            self.range[metric] = [lo, hi] if was is None else [min(was[0], lo), max(was[1], hi)]
        for metric, rows in d.get("best", {}).items():
            self.best[metric] = self._top(self.best.get(metric, []), rows, metric)
        for cost, points in d.get("pareto", {}).items():
            if points or cost in self.pareto:  # a cost with points in some chunk has a front, maybe []
                self.pareto[cost] = _more_points(self.pareto.get(cost, []), points)
        if d.get("series"):
            self._add_series(d["series"])
        self.sample.extend(d.get("sample", []))
        for key, cells in d.get("heat", {}).items():
            grid = np.array([np.inf if v is None else v for v in cells])
            self.heat[key] = grid if key not in self.heat else np.minimum(self.heat[key], grid)

    def _add_series(self, part: dict) -> None:
        self.series_field = self.series_field or part["field"]
        for value, fronts in part["pareto"].items():
            kept = self.series_pareto.setdefault(value, {})
            for cost in PARETO_COSTS:
                kept[cost] = _more_points(kept.get(cost, []), fronts.get(cost, []))
        for value, by_metric in part["best"].items():
            kept_rows = self.series_best.setdefault(value, {})
            for metric in (DAYS, COST_OWNED):
                rows = self._top(kept_rows.get(metric, []), by_metric.get(metric, []), metric)
                if rows:
                    kept_rows[metric] = rows

    def summary(self) -> dict:
        out: dict[str, Any] = {
            "scenarios": self.scenarios,
            "feasible": self.feasible,
            "range": {m: self.range[m] for m in RANK_METRICS if m in self.best and m in self.range},
            "best": {m: self._best(self.best[m], m) for m in RANK_METRICS if m in self.best},
            "pareto": {c: _front(self.pareto[c]) for c in PARETO_COSTS if c in self.pareto},
            "heat": [self._heatmap(key) for key in sorted(self.heat)],
            **self.reasons.summary(),
        }
        if self.mixed:
            out[RANKED_IN] = "USD"
        series = self._series()
        if series:
            out["series"] = series
        out["sample"] = self.sample[:: max(1, math.ceil(len(self.sample) / SAMPLE_MAX))]
        out["sample_fields"] = ["index", DAYS, *PARETO_COSTS]
        return out

    def _heatmap(self, key: str) -> dict:
        i_s, j_s, metric = key.split("|", 2)
        i, j = int(i_s), int(j_s)
        ni, nj = len(self.axes[i]), len(self.axes[j]) if j >= 0 else 1
        grid = self.heat[key].reshape(ni, nj)
        return {
            "x": self.axes[j].field if j >= 0 else None,
            "y": self.axes[i].field,
            "metric": metric,
            "z": [[_round(v) if np.isfinite(v) else None for v in row] for row in grid],
        }

    def _series_rows(self, value: str) -> dict[str, list[dict]]:
        rows = self.series_best.get(value, {})
        return {m: self._best(rows[m], m) for m in (DAYS, COST_OWNED) if m in rows}

    def _series(self) -> dict | None:
        """Per series value (in the axis' order): the front of all fronts and the best rows."""
        if self.series_field is None:
            return None
        axis = next(a for a in self.axes if a.field == self.series_field)
        values = [str(v) for v in axis.values if str(v) in self.series_pareto]
        return {
            "field": self.series_field,
            "values": values,
            "pareto": {
                v: {c: _front(self.series_pareto[v].get(c, [])) for c in PARETO_COSTS} for v in values
            },
            "best": {v: self._series_rows(v) for v in values},
        }
