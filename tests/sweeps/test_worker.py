"""A real Celery worker subprocess on real Redis (not eager): completion with the core's answers,
SIGKILL of the worker mid-sweep, and Redis killed mid-sweep (the test's own redis-server, never
the shared one). Status is read through the API, as a client would, which also runs the watchdog,
except where the test is that nobody reads it."""

import random
import time

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from estimator.dotted import get_path
from estimator.plan.batch import SUMMARY_FIELDS
from estimator.plan.compose import estimate
from sweeps import selectors
from sweeps.models import Sweep, SweepChunk

from .conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SMALL = {  # 24 x 4 x 5 = 480 scenarios
    "cluster.cards": {"start": 256, "stop": 6144, "step": 256},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb", "h800-sxm"],
    "efficiency.mfu": [0.3, 0.35, 0.4, 0.45, 0.5],
}
LARGE = {  # 1000 x 4 x 5 x 20 = 400,000 scenarios; 200 chunks of 2,000 (many task round trips)
    "cluster.cards": {"start": 64, "stop": 64000, "step": 64},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb", "h800-sxm"],
    "efficiency.mfu": [0.3, 0.35, 0.4, 0.45, 0.5],
    "cost.cloud_price_per_card_hour": {"start": 1.0, "stop": 4.8, "step": 0.2},
}


@pytest.fixture
def api(db):
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("ops", password="pw-12345678"))
    return client


def start_sweep(api, base, axes) -> dict:
    r = api.post("/api/v1/sweeps", {"name": "it", "base": base, "axes": axes}, format="json")
    assert r.status_code == 202, r.content
    return r.json()


def status(api, body) -> dict:
    r = api.get(body["status_url"])
    assert r.status_code == 200, r.content
    return r.json()


def wait_status(api, body, timeout, done_at_least=None, final=("done", "failed", "cancelled")) -> dict:
    def check():
        s = status(api, body)
        if done_at_least is not None:
            return s if s["progress"]["done"] >= done_at_least or s["status"] in final else None
        return s if s["status"] in final else None

    return wait_for(check, timeout, interval=0.25, what=f"sweep {body['id']}")


def assert_stored_exactly_once(sweep_id: int) -> None:
    sweep = Sweep.objects.get(pk=sweep_id)
    chunks = list(
        SweepChunk.objects.filter(sweep=sweep).order_by("index").values_list("index", "start", "stop")
    )
    assert [c[0] for c in chunks] == list(range(sweep.chunks_total))
    assert sum(stop - start for _, start, stop in chunks) == sweep.total == sweep.done
    assert all(chunks[i][2] == chunks[i + 1][1] for i in range(len(chunks) - 1))


def test_a_sweep_completes_with_the_cores_answers(api, base, workers, fast_watchdog):
    workers("w")
    body = start_sweep(api, base, SMALL)
    final = wait_status(api, body, timeout=60)
    assert final["status"] == "done", final
    assert final["progress"]["done"] == final["progress"]["total"] == 480
    assert final["summary"]["best"]["compute.wall_clock_days"]
    assert_stored_exactly_once(body["id"])
    sweep = Sweep.objects.get(pk=body["id"])
    chunk = SweepChunk.objects.filter(sweep=sweep).first()
    assert chunk.worker.startswith("w-0@")
    rows = selectors.result_page(sweep=sweep, page=1, page_size=480)
    cols = rows["columns"]
    for index in random.Random(5).sample(range(480), 6):
        row = dict(zip(cols, rows["rows"][index], strict=True))
        result = estimate(selectors.scenario_of(sweep=sweep, index=index))["result"]
        for field in SUMMARY_FIELDS:
            node = get_path(result, field)
            assert row[field] == pytest.approx(node, rel=1e-9, nan_ok=True), (index, field)


def test_killing_the_worker_mid_sweep_loses_nothing_and_stores_nothing_twice(
    api, base, workers, fast_watchdog
):
    first = workers("victim")
    body = start_sweep(api, base, LARGE)
    s = wait_status(api, body, timeout=60, done_at_least=20_000)
    assert s["status"] == "running" and s["progress"]["done"] < s["progress"]["total"], s
    first.kill()  # SIGKILL: its chunk in hand is never acknowledged
    mid = status(api, body)["progress"]["done"]
    workers("rescuer")
    final = wait_status(api, body, timeout=90)
    assert final["status"] == "done", final
    assert mid < final["progress"]["done"] == final["progress"]["total"]
    assert_stored_exactly_once(body["id"])
    assert SweepChunk.objects.filter(sweep_id=body["id"], worker__startswith="rescuer").exists()


def test_redis_killed_mid_sweep_then_back_completes_without_anyone_reading_it(
    api, base, own_workers, own_redis, fast_watchdog
):
    """The test's own redis-server is killed (its queued chunk messages are lost: it keeps nothing on
    disk) and started again empty. The worker's own recovery loop (integrations.recovery) re-queues
    the lost chunks: nobody reads the sweep's status and no beat runs."""
    own_workers("w", SWEEP_STALL_S="3", RECOVERY_INTERVAL_S="1")
    body = start_sweep(api, base, LARGE)
    wait_status(api, body, timeout=60, done_at_least=10_000)
    own_redis.stop()
    time.sleep(4)
    own_redis.start()
    sweep = wait_for(
        lambda: Sweep.objects.filter(pk=body["id"]).exclude(status__in=Sweep.ACTIVE).first(),
        90,
        what="the sweep to end without a status read",
    )
    assert sweep.status == "done", sweep.error
    assert_stored_exactly_once(body["id"])
    assert sweep.requeues >= 1


def test_redis_down_for_good_ends_in_a_clear_failure(api, base, own_workers, own_redis, fast_watchdog):
    fast_watchdog.SWEEP_FAIL_AFTER_S = 8
    own_workers("w")
    body = start_sweep(api, base, LARGE)
    wait_status(api, body, timeout=60, done_at_least=10_000)
    started = time.monotonic()
    own_redis.stop()
    # it fails SWEEP_FAIL_AFTER_S = 8 s after the last progress (8.3 s here): 60 s is >= 5x that
    final = wait_status(api, body, timeout=60)
    assert final["status"] == "failed", final
    assert "no progress" in final["error"] and "broker" in final["error"], final["error"]
    assert time.monotonic() - started < 60
