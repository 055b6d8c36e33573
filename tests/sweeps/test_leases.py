"""Chunk leases with real Celery workers on real Redis (issue 12): a chunk still being computed is
never handed to a second worker, a cancelled sweep stops within one sub-batch of the chunk in hand,
and a worker killed mid-chunk loses nothing (its chunk is computed again once its lease expires).

The chunks here are slow on purpose: without an MFU every row runs the layout search (a few ms),
so a chunk of 400 rows takes seconds while the watchdog runs on every status read with a 1 s
stall time. Workers log each chunk they compute ("computing") and each they stop ("stopped after
N scenarios"); the tests read those logs."""

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


def test_two_workers_never_compute_the_same_chunk(api, slow_base, workers, eager_watchdog):  # noqa: F811
    pool = [workers("a", **FIXED), workers("b", **FIXED)]
    body = start_sweep(api, slow_base, SLOW)
    final = wait_status(api, body, timeout=120)  # every poll runs the watchdog
    assert final["status"] == "done", final
    assert_stored_exactly_once(body["id"])
    counts = computed(pool, body["id"])
    chunks = Sweep.objects.get(pk=body["id"]).chunks_total
    assert counts == Counter(range(chunks)), counts  # each chunk computed once, by one worker
    assert not ChunkLease.objects.filter(sweep_id=body["id"]).exists()


def test_cancel_mid_chunk_stops_within_one_sub_batch(api, slow_base, workers, eager_watchdog):  # noqa: F811
    eager_watchdog.SWEEP_CHUNK_SIZE = 200  # one chunk of 200 rows: 8 sub-batches
    w = workers("c", **FIXED)
    body = start_sweep(api, slow_base, SLOW)
    lease = wait_for(
        lambda: ChunkLease.objects.filter(sweep_id=body["id"], done__gte=SUB_BATCH).first(),
        60,
        interval=0.05,
        what="a chunk in progress",
    )
    r = api.post(f"/api/v1/sweeps/{body['id']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    at_cancel = ChunkLease.objects.filter(pk=lease.pk).values_list("done", flat=True).first() or lease.done
    pattern = re.compile(rf"sweep {body['id']} chunk 0: stopped after (\d+) scenarios")
    stopped = wait_for(lambda: pattern.findall(w.log_path.read_text(errors="replace")), 30, what="the stop")
    assert int(stopped[0]) <= at_cancel + SUB_BATCH  # the sub-batch in hand, no more
    assert int(stopped[0]) < 200
    sweep = Sweep.objects.get(pk=body["id"])
    assert sweep.status == "cancelled"
    assert not SweepChunk.objects.filter(sweep=sweep).exists()  # the stopped chunk stored nothing
    assert sweep.done == 0 and sweep.chunks_done == 0  # and counted nothing
    assert not ChunkLease.objects.filter(sweep=sweep).exists()


def test_a_worker_killed_mid_chunk_loses_nothing(api, slow_base, workers, eager_watchdog):  # noqa: F811
    eager_watchdog.SWEEP_CHUNK_SIZE = 100  # 2 chunks
    victim = workers("victim", **FIXED)
    body = start_sweep(api, slow_base, SLOW)
    wait_for(
        lambda: ChunkLease.objects.filter(sweep_id=body["id"], done__gte=SUB_BATCH).exists(),
        60,
        interval=0.05,
        what="a chunk in progress",
    )
    victim.kill()  # its chunk is neither stored nor acknowledged; its lease runs out after 3 s
    rescuer = workers("rescuer", **FIXED)
    final = wait_status(api, body, timeout=120)
    assert final["status"] == "done", final
    assert final["progress"]["done"] == final["progress"]["total"] == 200
    assert_stored_exactly_once(body["id"])
    assert computed([rescuer], body["id"])[0] == 1  # the killed worker's chunk, computed again once
