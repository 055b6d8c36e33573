"""Chunk leases with real Celery workers on real Redis (issue 12): a chunk still being computed is
never handed to a second worker, a cancelled sweep stops within one sub-batch of the chunk in hand,
and a worker killed mid-chunk loses nothing (its chunk is computed again once its lease expires).

Without an MFU every row runs the layout search, yet only ~0.25-1 ms a row here (a sub-batch of 25
rows: ~10-20 ms). The tests that act on a chunk in progress (cancel, kill) give it 2,000-4,000 of
LONG's rows, so it is still in hand ~0.5-1 s after the test sees it start, many times the few ms
the test needs to act: SLOW's 100-200-row chunks (the first version) took ~50-100 ms, about one
50 ms poll, and could end before the test saw them in progress. Workers log each chunk they
compute ("computing") and each they stop ("stopped after N scenarios"); the tests read those logs."""

import re
from collections import Counter

import pytest

from sweeps.models import ChunkLease, Sweep, SweepChunk

from .conftest import wait_for
from .test_worker import api, assert_stored_exactly_once, start_sweep, status, wait_status  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SUB_BATCH = 25
# fixed sub-batches (no adaptive sizing), so "within one sub-batch" is a known number of rows
FIXED = {"SWEEP_SUB_BATCH": str(SUB_BATCH), "SWEEP_SUB_BATCH_S": "0"}
SLOW = {  # 100 x 2 = 200 scenarios, no MFU given: each row searches layouts
    "cluster.cards": {"start": 64, "stop": 6400, "step": 64},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm"],
}
LONG = {  # 1000 x 4 = 4,000 scenarios, no MFU: ~1-2 s of layout searches on one worker
    "cluster.cards": {"start": 64, "stop": 64000, "step": 64},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb", "h800-sxm"],
}


@pytest.fixture
def slow_base(base):
    base.pop("efficiency")
    return base


@pytest.fixture
def eager_watchdog(settings):
    """Re-queue after 1 s without progress: before leases this re-queued chunks still computing."""
    settings.SWEEP_STALL_S = 1
    settings.SWEEP_FAIL_AFTER_S = 120
    settings.SWEEP_CHUNK_SIZE = 50
    settings.SWEEP_MAX_ACTIVE_PER_USER = 10
    return settings


def computed(logs: list, sweep_id: int) -> Counter:
    pattern = re.compile(rf"sweep {sweep_id} chunk (\d+): computing")
    return Counter(int(m) for w in logs for m in pattern.findall(w.log_path.read_text(errors="replace")))


def leases_dropped(sweep_id: int) -> None:
    """Every lease of the sweep is deleted, waited for: a worker drops its lease after the chunk's
    last step (run_chunk's `finally`), after it logs the stop or stores the chunk that ends the
    sweep, so a read right after the log line or the final status may still find it."""
    wait_for(
        lambda: not ChunkLease.objects.filter(sweep_id=sweep_id).exists(),
        30,
        interval=0.05,
        what="the workers to drop their leases",
    )


def test_two_workers_never_compute_the_same_chunk(api, slow_base, workers, eager_watchdog):  # noqa: F811
    pool = [workers("a", **FIXED), workers("b", **FIXED)]
    body = start_sweep(api, slow_base, SLOW)
    final = wait_status(api, body, timeout=120)  # every poll runs the watchdog
    assert final["status"] == "done", final
    assert_stored_exactly_once(body["id"])
    counts = computed(pool, body["id"])
    chunks = Sweep.objects.get(pk=body["id"]).chunks_total
    assert counts == Counter(range(chunks)), counts  # each chunk computed once, by one worker
    leases_dropped(body["id"])


def lease_done(pk: int) -> int | None:
    """The rows the lease's holder had done at its last renewal (None once the lease is gone)."""
    return ChunkLease.objects.filter(pk=pk).values_list("done", flat=True).first()


CANCEL_SUB_BATCH = 500  # ~120 ms of rows or more: >= 10x the ~10 ms the cancel request takes


def test_cancel_mid_chunk_stops_within_one_sub_batch(api, slow_base, workers, eager_watchdog):  # noqa: F811
    eager_watchdog.SWEEP_CHUNK_SIZE = 4000  # one chunk of 4,000 rows: 8 sub-batches, ~1 s
    w = workers("c", SWEEP_SUB_BATCH=str(CANCEL_SUB_BATCH), SWEEP_SUB_BATCH_S="0")
    body = start_sweep(api, slow_base, LONG)
    lease = wait_for(
        lambda: ChunkLease.objects.filter(sweep_id=body["id"], done__gte=CANCEL_SUB_BATCH).first(),
        60,
        interval=0.02,
        what="a chunk in progress",
    )
    before = lease_done(lease.pk)
    assert before is not None, "the chunk ended before the test could cancel it"
    r = api.post(f"/api/v1/sweeps/{body['id']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    # The lease's progress at the cancel: read just after it (a renewal after the cancel fails, so
    # it holds still) unless the worker already stopped and dropped its lease; then the read just
    # before it plus the one renewal the ~10 ms request may have let pass (a sub-batch: ~120 ms).
    after = lease_done(lease.pk)
    at_cancel = after if after is not None else before + CANCEL_SUB_BATCH
    pattern = re.compile(rf"sweep {body['id']} chunk 0: stopped after (\d+) scenarios")
    stopped = wait_for(lambda: pattern.findall(w.log_path.read_text(errors="replace")), 30, what="the stop")
    assert int(stopped[0]) <= at_cancel + CANCEL_SUB_BATCH  # the sub-batch in hand, no more
    assert int(stopped[0]) < 4000
    sweep = Sweep.objects.get(pk=body["id"])
    assert sweep.status == "cancelled"
    assert not SweepChunk.objects.filter(sweep=sweep).exists()  # the stopped chunk stored nothing
    assert sweep.done == 0 and sweep.chunks_done == 0  # and counted nothing
    leases_dropped(sweep.pk)


def test_a_worker_killed_mid_chunk_loses_nothing(api, slow_base, workers, eager_watchdog):  # noqa: F811
    eager_watchdog.SWEEP_CHUNK_SIZE = 2000  # 2 chunks of 80 sub-batches each
    victim = workers("victim", **FIXED)
    body = start_sweep(api, slow_base, LONG)
    lease = wait_for(
        lambda: ChunkLease.objects.filter(sweep_id=body["id"], done__gte=SUB_BATCH).first(),
        60,
        interval=0.05,
        what="a chunk in progress",
    )
    victim.kill()  # its chunk is neither stored nor acknowledged; its lease runs out after 3 s
    assert not SweepChunk.objects.filter(sweep_id=body["id"], index=lease.index).exists()
    rescuer = workers("rescuer", **FIXED)
    final = wait_status(api, body, timeout=120)
    assert final["status"] == "done", final
    assert final["progress"]["done"] == final["progress"]["total"] == 4000
    assert_stored_exactly_once(body["id"])
    # the killed worker's chunk (the one the test saw in progress), computed again once
    assert computed([rescuer], body["id"])[lease.index] == 1
