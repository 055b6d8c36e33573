"""Adaptive sub-batches of a sweep chunk (sweeps.services.run_chunk): how many rows the core
evaluates per call, sized from the measured rate so that each call takes about SWEEP_SUB_BATCH_S
seconds. Pure arithmetic on rows and seconds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def first_sub_batch(*, sweep: Mapping[str, Any], target_s: float, first: int, largest: int) -> int:
    """Rows of a chunk's first sub-batch: `first` for the sweep's first chunks; once chunks are
    stored, sized from the sweep's own rate so far (scenarios done / the chunks' compute seconds),
    as next_sub_batch sizes the later ones. A given-MFU chunk of 50,000 rows is then one
    evaluation (the core costs ~10 ms per call: 2,000 + 16,000 + 32,000 rows cost 1.5x one call)."""
    done, seconds = int(sweep.get("done") or 0), float(sweep.get("compute_s") or 0.0)
    if done <= 0 or seconds <= 0:
        return first
    return next_sub_batch(rows=done, seconds=seconds, target_s=target_s, first=first, largest=largest)


SUB_BATCH_GROWTH = 8  # a sub-batch at most this many times the last: one noisy timing cannot overshoot


def next_sub_batch(*, rows: int, seconds: float, target_s: float, first: int, largest: int) -> int:
    """Rows of the next sub-batch: the last one's rate (rows / seconds) times `target_s`, at most
    SUB_BATCH_GROWTH times the last and within [first, largest]; `first` when target_s is 0.

    Why adaptive: the core costs a fixed ~10 ms per call plus per-row arithmetic, so small fixed
    sub-batches (2,000 rows) spend most of their time in per-call overhead, while the cancel and
    lease checks only need a sub-batch every fraction of a second, not every N rows."""
    if target_s <= 0:
        return first
    wanted = rows * target_s / max(seconds, 1e-6)
    return int(max(first, min(largest, rows * SUB_BATCH_GROWTH, wanted)))


# The first sub-batch of a sweep sized for a chance of meeting the deadline or by budget
# (estimator.contract.sweep.searched_sizings > 0): a row can cost a confidence search, up to ~40 ms,
# or a budget search, up to ~60 ms (estimator.limits: MAX_SWEEP_CONFIDENT_SIZINGS,
# MAX_SWEEP_BUDGET_SIZINGS), so 2,000 such rows would hold the chunk's lease (SWEEP_LEASE_S, 30 s)
# past its expiry before its first renewal; 200 are about 8 to 12 s. Later sub-batches are sized
# from the measured rate as any (next_sub_batch, never under this first size).
SEARCHED_SUB_BATCH = 200


def first_size(*, configured: int, searched: bool) -> int:
    """The first sub-batch of a chunk before its rate is known: the configured SWEEP_SUB_BATCH, at
    most SEARCHED_SUB_BATCH rows where the rows are sized by a search each (a chance of meeting the
    deadline, a budget)."""
    return min(configured, SEARCHED_SUB_BATCH) if searched else configured
