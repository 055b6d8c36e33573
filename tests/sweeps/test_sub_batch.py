"""Adaptive sub-batches (sweeps.sub_batch.next_sub_batch): sized from the measured rate, bounded,
and a chunk computed in growing sub-batches stores what one whole-chunk evaluation gives."""

import numpy as np
import pytest

from estimator.contract import sweep as estimator_sweep
from estimator.plan import batch
from sweeps import services, sub_batch
from sweeps.digests import unpack
from sweeps.models import SweepChunk

from .test_services import AXES, sweep, user  # noqa: F401


@pytest.mark.parametrize(
    ("rows", "seconds", "target", "expected"),
    [
        (2000, 0.02, 0.3, 16000),  # 100k rows/s x 0.3 s = 30,000, held to 8 x 2,000
        (16000, 0.04, 0.3, 120000),  # 400k rows/s x 0.3 s = 120,000 (under 8 x 16,000)
        (100000, 0.1, 0.3, 200000),  # 300,000 wanted, held to the largest (200,000)
        (2000, 3.0, 0.3, 2000),  # slow rows: 200 wanted, never under the first size
        (2000, 0.02, 0.0, 2000),  # target 0: fixed sub-batches of the first size
    ],
)
def test_next_sub_batch_from_the_measured_rate(rows, seconds, target, expected):
    got = sub_batch.next_sub_batch(rows=rows, seconds=seconds, target_s=target, first=2000, largest=200000)
    assert got == expected


@pytest.mark.parametrize(
    ("done", "compute_s", "expected"),
    [
        (0, 0.0, 2000),  # nothing stored yet: the first size
        (50000, 0.05, 200000),  # 1M rows/s x 0.3 s = 300,000, held to the largest
        (100000, 1.0, 30000),  # 100k rows/s x 0.3 s
        (50000, 100.0, 2000),  # slow rows (predicted MFU): 150 wanted, never under the first size
    ],
)
def test_a_chunk_starts_at_the_sweeps_measured_rate(done, compute_s, expected):
    progress = {"done": done, "compute_s": compute_s}
    got = sub_batch.first_sub_batch(sweep=progress, target_s=0.3, first=2000, largest=200000)
    assert got == expected


@pytest.mark.django_db
def test_a_chunk_in_growing_sub_batches_equals_one_evaluation(sweep, settings, monkeypatch):  # noqa: F811
    """First 3 rows, then at most 5 (3 x 8 = 24 and a 10 s target ask for more): a 50-row chunk is
    computed as 3 + 5 x 9 + 2 rows, with the lease renewed between them."""
    settings.SWEEP_SUB_BATCH, settings.SWEEP_SUB_BATCH_MAX, settings.SWEEP_SUB_BATCH_S = 3, 5, 10.0
    sizes: list[int] = []
    real = batch.evaluate_columns

    def spy(base, columns, books=None):
        sizes.append(len(next(iter(columns.values()))))
        return real(base, columns, books)

    monkeypatch.setattr(batch, "evaluate_columns", spy)
    assert services.run_chunk(sweep_id=sweep.pk, index=0, worker="test") == "stored"
    assert sizes == [3] + [5] * 9 + [2]
    stored = unpack(SweepChunk.objects.get(sweep=sweep, index=0).data)
    whole = real(sweep.base, estimator_sweep.decode(services.axes_of(sweep=sweep), 0, 50), None)
    for key, value in whole.items():
        np.testing.assert_array_equal(stored[key], np.asarray(value), err_msg=key)


@pytest.mark.django_db
def test_a_later_chunk_starts_at_the_sweeps_rate(sweep, settings, monkeypatch):  # noqa: F811
    """With 100 scenarios done in 1 s of compute, 10 s asks for 1,000 rows, held to the largest (5):
    chunk 1 is ten sub-batches of 5, not 3 + 5 x 9 + 2 as a sweep's first chunk is."""
    settings.SWEEP_SUB_BATCH, settings.SWEEP_SUB_BATCH_MAX, settings.SWEEP_SUB_BATCH_S = 3, 5, 10.0
    type(sweep).objects.filter(pk=sweep.pk).update(done=100, compute_s=1.0)
    sizes: list[int] = []
    real = batch.evaluate_columns

    def spy(base, columns, books=None):
        sizes.append(len(next(iter(columns.values()))))
        return real(base, columns, books)

    monkeypatch.setattr(batch, "evaluate_columns", spy)
    assert services.run_chunk(sweep_id=sweep.pk, index=1, worker="test") == "stored"
    assert sizes == [5] * 10
