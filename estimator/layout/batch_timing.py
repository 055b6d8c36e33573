"""Step times of a batch of candidates (layout.batch_search), the cluster size a per-candidate
column: `SizedProblem` (a LayoutProblem whose cards and fabric factors are arrays) and
`time_by_stem` (one step-time call per group of layouts that differ only in their ZeRO stage,
the stages a broadcast column). Units: seconds, tokens/s (layout.evaluation.evaluate_time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from estimator.arrays import FloatArray, unique_sorted
from estimator.layout.enumeration import axis_values
from estimator.layout.evaluation import evaluate_time
from estimator.layout.memory import RECOMPUTE_CODES
from estimator.layout.search import LayoutProblem, speed_bin

Columns = dict[str, npt.NDArray[Any]]  # candidate columns (tp, pp, ..., size, stem, row)
IntArray = npt.NDArray[np.int64]
SIZE_FIELDS = ("cards", "cross_leaf_bandwidth_factor", "nodes_per_leaf_group")
STEP_KEYS = ("tp", "pp", "dp", "ep", "etp", "cp", "mbs", "v", "m", "sp", "rc")  # what evaluate_time reads
SLICE_ROWS = 16_384  # candidates per vectorized slice: the arrays stay in the CPU's cache
GRID_MIN = 4_096  # a group of fewer (rows x stages) is timed with the other small ones (one call)


class SizedProblem:
    """A LayoutProblem whose cards and fabric factors are per-candidate arrays.

    evaluate_step and layout.evaluate_time use problem.cards (HFU, MFU: FLOP/s over cards · peak),
    problem.cross_leaf_bandwidth_factor and problem.nodes_per_leaf_group (collective and
    point-to-point bandwidths) only in numpy expressions, so arrays broadcast against the candidate
    arrays; every other attribute is the shared problem's."""

    def __init__(self, base: LayoutProblem, cards: FloatArray, cross: FloatArray, leaf_nodes: FloatArray):
        # the base's fields copied in: a field read is then an instance-dict hit, where through
        # __getattr__ alone each read first fails (an AttributeError built and dropped, several
        # thousand instructions; about a thousand reads per deadline plan)
        self.__dict__.update(vars(base))
        self._base = base
        self.cards = cards
        self.cross_leaf_bandwidth_factor = cross
        self.nodes_per_leaf_group = leaf_nodes

    def __getattr__(self, name: str) -> Any:
        """The base's properties (domain_cards, stage_split, ...): computed from its own fields."""
        return getattr(self._base, name)


def time_by_stem(
    problems: Sequence[LayoutProblem], base: LayoutProblem, c: Columns, rf: FloatArray
) -> tuple[FloatArray, list[dict[str, FloatArray]], tuple[IntArray, IntArray, IntArray]]:
    """Step times of the candidates c, computed once per (layout without its ZeRO stage, recompute
    share) with the stages left for it as a broadcast column: the per-layer terms do not depend on
    the stage, so evaluate_step computes them once per row (numpy broadcasting: the same element-wise
    numbers). Rows are grouped by the set of stages they need, so no column is computed in vain;
    groups too small to pay for a step-time call of their own (GRID_MIN elements) are timed
    together, a candidate per row (the per-call overhead of the model is what they would cost);
    fewer than GRID_MIN candidates in all make only small groups, so they go straight to that call.

    Returns (throughput bin per candidate, the slices' time dicts of shape (rows, stages), and per
    candidate its (slice, row in slice, column))."""
    n = c["stem"].size
    if n < GRID_MIN:  # every group is small: all timed together, a candidate per row, in order
        sized = SizedProblem(
            base,
            *(np.array([getattr(p, f) for p in problems], dtype=float)[c["size"], None] for f in SIZE_FIELDS),
        )
        grid = {k: c[k][:, None] for k in (*STEP_KEYS, "zero")}
        t = evaluate_time(sized, grid, rf[:, None])  # type: ignore[arg-type]
        every = np.arange(n)
        return speed_bin(t["tokens_per_s"][:, 0]), [t], (np.zeros(n, dtype=np.int64), every, 0 * every)
    stages = axis_values(base)["zero"]
    col = np.searchsorted(stages, c["zero"])
    # a row per (stem, recompute code); partial recompute's share differs per stage: a row each
    key = c["stem"] * 4 + c["rc"]
    partial = c["rc"] == RECOMPUTE_CODES["partial"]
    key = np.where(partial, 4 * (int(c["stem"].max(initial=0)) + 1) + np.arange(n), key)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    row = np.empty(order.size, dtype=np.int64)
    row[order] = np.cumsum(new) - 1
    heads = order[new]
    needs = np.bitwise_or.reduceat(np.left_shift(1, col[order]), np.flatnonzero(new))  # bit z: stage z
    per_size = {
        f: np.array([getattr(p, f) for p in problems], dtype=float)[c["size"][heads]] for f in SIZE_FIELDS
    }
    times: list[dict[str, FloatArray]] = []
    slice_of = np.empty(heads.size, dtype=np.int64)  # per row: its slice and its row there
    local = np.empty(heads.size, dtype=np.int64)
    ranks = np.full((heads.size, stages.size), -1, dtype=np.int64)  # per row: column of each stage
    loose = np.zeros(heads.size, dtype=bool)  # rows of the small groups
    for mask in unique_sorted(needs):
        cols = np.flatnonzero((int(mask) >> np.arange(stages.size)) & 1)
        group = np.flatnonzero(needs == mask)
        if group.size * cols.size < GRID_MIN:
            loose[group] = True
            continue
        ranks[np.ix_(group, cols)] = np.arange(cols.size)
        per = max(1, SLICE_ROWS // cols.size)
        for start in range(0, group.size, per):
            rows = group[start : start + per]
            sized = SizedProblem(base, *(v[rows, None] for v in per_size.values()))
            grid = {k: c[k][heads[rows], None] for k in STEP_KEYS}
            grid["zero"] = stages[None, cols]
            slice_of[rows], local[rows] = len(times), np.arange(rows.size)
            times.append(evaluate_time(sized, grid, rf[heads[rows], None]))  # type: ignore[arg-type]
    j, r, z = slice_of[row], local[row], ranks[row, col]  # per candidate: slice, row, column
    single = np.flatnonzero(loose[row])  # candidates of the small groups, timed one per row
    for start in range(0, single.size, SLICE_ROWS):
        idx = single[start : start + SLICE_ROWS]
        sized = SizedProblem(base, *(v[row[idx], None] for v in per_size.values()))
        grid = {k: c[k][idx, None] for k in (*STEP_KEYS, "zero")}
        j[idx], r[idx], z[idx] = len(times), np.arange(idx.size), 0
        times.append(evaluate_time(sized, grid, rf[idx, None]))  # type: ignore[arg-type]
    offsets = np.cumsum([0] + [t["tokens_per_s"].size for t in times])
    flat = np.concatenate([t["tokens_per_s"].ravel() for t in times])
    widths = np.array([t["tokens_per_s"].shape[1] for t in times])
    tokens = flat[offsets[j] + r * widths[j] + z]
    return speed_bin(tokens), times, (j, r, z)
