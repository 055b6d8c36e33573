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


@pytest.mark.django_db
def test_a_sweep_sized_for_a_chance_starts_in_sub_batches_of_at_most_200(base, settings, monkeypatch):
    """A confidence search per row (up to ~40 ms): 2,000 rows would outlast the 30 s lease before
    its first renewal, so the first sub-batch is sub_batch.SEARCHED_SUB_BATCH (200) rows; with a
    0 s target every one is (next_sub_batch): 450 rows as 200 + 200 + 50. The rows differ only in a
    price, so the chunk needs two searches (a 70B at MFU 0.45, 90 % in 30 and in 60 days)."""
    settings.SWEEP_SUB_BATCH, settings.SWEEP_SUB_BATCH_S, settings.SWEEP_CHUNK_SIZE = 2000, 0.0, 1000
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    confident = {**base, "cluster": {"target_days": 30, "deadline_confidence": 0.9}}
    prices = {"start": 0.01, "stop": 2.25, "step": 0.01}  # 225 values
    axes = {"cluster.target_days": [30, 60], "cost.electricity_per_kwh": prices}
    made = services.create_sweep(data={"name": "q", "base": confident, "axes": axes}, owner=None)
    assert made.total == 450
    sizes: list[int] = []
    real = batch.evaluate_columns

    def spy(base, columns, books=None):
        sizes.append(len(next(iter(columns.values()))))
        return real(base, columns, books)

    monkeypatch.setattr(batch, "evaluate_columns", spy)
    assert services.run_chunk(sweep_id=made.pk, index=0, worker="test") == "stored"
    assert sizes == [200, 200, 50]
    stored = unpack(SweepChunk.objects.get(sweep=made, index=0).data)
    assert stored["ok"].all() and (stored["compute.deadline_confidence"] == 0.9).all()
    plain = sub_batch.first_size(configured=2000, searched=False)
    assert plain == 2000 and sub_batch.first_size(configured=100, searched=True) == 100


@pytest.mark.django_db
def test_a_sweep_sized_by_budget_starts_in_sub_batches_of_at_most_200(base, settings, monkeypatch):
    """A budget search per row (up to ~60 ms) is bounded as a confidence search is: 450 rows as
    200 + 200 + 50 with a 0 s target; the rows differ only in a running price, so the chunk needs two
    searches (a 70B at MFU 0.45 on Ascend 910B2, 50 M and 100 M USD)."""
    settings.SWEEP_SUB_BATCH, settings.SWEEP_SUB_BATCH_S, settings.SWEEP_CHUNK_SIZE = 2000, 0.0, 1000
    monkeypatch.setattr(services, "enqueue_chunks", lambda *a, **k: 0)
    budgeted = {**base, "cluster": {"budget": 5e7}}
    prices = {"start": 0.01, "stop": 2.25, "step": 0.01}  # 225 values
    axes = {"cluster.budget": [5e7, 1e8], "cost.electricity_per_kwh": prices}
    made = services.create_sweep(data={"name": "b", "base": budgeted, "axes": axes}, owner=None)
    assert made.total == 450
    sizes: list[int] = []
    real = batch.evaluate_columns

    def spy(base, columns, books=None):
        sizes.append(len(next(iter(columns.values()))))
        return real(base, columns, books)

    monkeypatch.setattr(batch, "evaluate_columns", spy)
    assert services.run_chunk(sweep_id=made.pk, index=0, worker="test") == "stored"
    assert sizes == [200, 200, 50]
    stored = unpack(SweepChunk.objects.get(sweep=made, index=0).data)
    assert stored["ok"].all()
    # the electricity price changes no capex: each budget buys one cluster whatever it is
    assert (
        len(set(stored["compute.cards"][:225].tolist()))
        == len(set(stored["compute.cards"][225:].tolist()))
        == 1
    )
