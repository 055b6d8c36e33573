#!/usr/bin/env python
"""The service under the red team's load and faults (issue 22), on a stack of its own: SQLite in a
temporary directory, its OWN redis-server on a free port (scripts/own_redis.py; the shared Redis
is never touched), gunicorn with config/gunicorn.py and the three embedded workers of
scripts/run_embedded.py (sweeps; batches at a lower CPU priority; webhooks on threads). Prints:

1. load: a normal client's single estimate, median and p95, alone and then while 10 clients post
   heavy 50-scenario batches within their limits (and 9 more clients plan single estimates), for
   --seconds (60); targets: loaded median within 1.5x of the unloaded one, p95 under 2 s;
2. slow receivers: two webhook receivers answering one byte every 4 s while another user's sweep
   starts: that sweep's queue wait (target: under 2 s);
3. faults, each once, in the middle of a batch and of a sweep with callbacks: kill -9 of the
   workers, of the web tier (with a keyed POST in flight: when is its Idempotency-Key free again),
   and of Redis (started again empty: its messages are lost); then every batch item and sweep
   chunk present exactly once, every webhook received with one delivery id, and the statuses.

    .venv/bin/python bench/service_faults.py                # about 5 minutes
    .venv/bin/python bench/service_faults.py --seconds 30   # a shorter load phase

Figures only (no asserts); the exit code is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
from scenarios import NORMAL  # bench/scenarios.py
from service_stack import Http, Receiver, Stack  # bench/service_stack.py: the stack under test

HEAVY = {  # a deadline: the cluster size is searched (several layout searches per scenario)
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"target_days": 30},
}
SWEEP_AXES = {  # 200 x 4 x 5 x 10 = 40,000 scenarios: 40 chunks of 1,000
    "cluster.cards": {"start": 256, "stop": 51200, "step": 256},
    "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb", "h800-sxm"],
    "efficiency.mfu": [0.3, 0.35, 0.4, 0.45, 0.5],
    "cost.cloud_price_per_card_hour": {"start": 1.0, "stop": 2.8, "step": 0.2},
}
SMALL_SWEEP = {"efficiency.mfu": [0.35, 0.45], "cluster.cards": [512, 1024]}
SLICE_WAIT_S = 12  # a batch task in hand finishes its slice (integrations.batch_work.SLICE_S = 10 s)


def heavy_batch(n: int = 50) -> list[dict]:
    return [{**HEAVY, "name": f"quote {i}", "cost": {"server_price": 100_000 + 1_000 * i}} for i in range(n)]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# ------------------------------------------------------------------------------------------------
# 1. Load


def normal_client(api: Http, token: str, stop: threading.Event, out: list, every: float) -> None:
    while not stop.is_set():
        status, _body, seconds, _ = api.call("POST", "/api/v1/estimates", token, NORMAL)
        out.append((status, seconds))
        stop.wait(every)


def batch_client(api: Http, token: str, stop: threading.Event, stats: Counter) -> None:
    """Post a heavy batch, read it again when Retry-After says until it is done, post the next; a
    429 waits its Retry-After too (a client within the limits)."""
    while not stop.is_set():
        status, body, _s, retry = api.call(
            "POST", "/api/v1/estimates/batch", token, {"scenarios": heavy_batch()}
        )
        stats[f"POST {status}"] += 1
        if status != 202:
            stop.wait(float(retry or 2))
            continue
        wait = float(retry or 2)
        while not stop.wait(wait):
            _status, got, _s, retry = api.call("GET", body["url"].split(str(api.port), 1)[1], token)
            if (got or {}).get("status") == "done":
                stats["batches done"] += 1
                stats["items planned"] += got["planned"]
                break
            wait = float(retry or 2)


def run_clients(api: Http, tokens: list[str], seconds: float, batches: bool) -> tuple[list, list, Counter]:
    """The measured client (an estimate every 0.5 s) and 9 others (every 5 s), and with `batches`
    the 10 batch clients, for `seconds`."""
    measured: list[tuple[int, float]] = []
    others: list[tuple[int, float]] = []
    stats: Counter = Counter()
    stop = threading.Event()
    threads = [threading.Thread(target=normal_client, args=(api, tokens[0], stop, measured, 0.5))]
    threads += [
        threading.Thread(target=normal_client, args=(api, tokens[i], stop, others, 5.0)) for i in range(1, 10)
    ]
    if batches:
        threads += [
            threading.Thread(target=batch_client, args=(api, tokens[i], stop, stats)) for i in range(10, 20)
        ]
    for th in threads:
        th.start()
    stop.wait(seconds)
    stop.set()
    for th in threads:
        th.join(90)
    return measured, others, stats


def summary(rows: list[tuple[int, float]]) -> tuple[list[float], str]:
    ok = [s for c, s in rows if c == 201]
    return (
        ok,
        f"{len(ok)} estimates, median {statistics.median(ok):.3f} s, p95 {pct(ok, 0.95):.3f} s, max {max(ok):.3f} s",
    )


def phase_load(stack: Stack, tokens: list[str], seconds: float) -> bool:
    """The same 10 single-estimate clients without and then with the 10 batch clients."""
    alone, alone_others, _ = run_clients(stack.http, tokens, 20, batches=False)
    loaded, loaded_others, stats = run_clients(stack.http, tokens, seconds, batches=True)
    a, a_text = summary(alone)
    b, b_text = summary(loaded)
    print("1. load: 10 clients plan single estimates (1 measured, every 0.5 s; 9 every 5 s), then 10 more")
    print(
        f"   post 50-scenario batches within their limits for {seconds:.0f} s (and read them when Retry-After says)"
    )
    print(f"   measured client, without batches (20 s): {a_text}")
    print(f"   measured client, with batches:           {b_text}")
    print(
        f"   the 9 others, without / with batches:    {summary(alone_others)[1]} / {summary(loaded_others)[1]}"
    )
    bad = Counter(c for c, _ in loaded + loaded_others if c != 201)
    print(f"   failed single estimates: {dict(bad) or 0}; batch clients: {dict(stats)}")
    ratio = statistics.median(b) / statistics.median(a)
    ok = ratio <= 1.5 and pct(b, 0.95) < 2.0 and not bad
    verdict = "PASS" if ok else "FAIL"
    print(
        f"   with/without median {ratio:.2f}x (target <= 1.5x), p95 {pct(b, 0.95):.2f} s (target < 2 s): {verdict}"
    )
    return ok


def drop_backlog(stack: Stack) -> None:
    """The load phase leaves batches queued behind the one being planned: they are ended in the
    bench's own database (their queued messages then do nothing), so the next phases start on an
    idle stack. Their count is printed: it is how far the batch workers were behind."""
    with sqlite3.connect(stack.db, timeout=30) as conn:
        left = conn.execute("select count(*) from integrations_batchitem where status=202").fetchone()[0]
        conn.execute("update integrations_batch set status='done' where status!='done'")
        conn.execute("update integrations_batchitem set status=500 where status=202")
    print(f"   (backlog when the load stopped: {left} batch items not planned yet; dropped)")
    time.sleep(SLICE_WAIT_S)


# ------------------------------------------------------------------------------------------------
# 2. Slow receivers


def phase_slow_receivers(stack: Stack, tokens: list[str]) -> bool:
    api = stack.http
    slow = [Receiver(every=4.0), Receiver(every=4.0)]
    try:
        for i, r in enumerate(slow):
            body = {"base": NORMAL, "axes": SMALL_SWEEP, "callback": {"url": r.url}}
            assert api.call("POST", "/api/v1/sweeps", tokens[20 + i], body)[0] == 202
        deadline = time.monotonic() + 60
        while sum(r.connections for r in slow) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)  # both deliveries are now being trickled
        _status, sweep, _s, _ = api.call(
            "POST", "/api/v1/sweeps", tokens[22], {"base": NORMAL, "axes": SMALL_SWEEP}
        )
        path = sweep["status_url"].split(str(api.port), 1)[1]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got = api.call("GET", path, tokens[22])[1]
            if got and got["status"] == "done":
                break
            time.sleep(0.3)
        wait = got["timings"]["queue_wait_s"] if got else float("nan")
    finally:
        for r in slow:
            r.close()
    ok = wait < 2.0
    print("2. slow receivers (2 webhook receivers answering 1 byte every 4 s, deliveries in flight)")
    print(
        f"   another user's sweep: queue wait {wait:.2f} s (target < 2 s), status {got and got['status']}: {'PASS' if ok else 'FAIL'}"
    )
    return ok


# ------------------------------------------------------------------------------------------------
# 3. Faults


def wait_rows(stack: Stack, sql: str, arg: int, at_least: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        count = stack.query(sql, arg)[0][0]
        if count >= at_least:
            return count
        time.sleep(0.1)
    return -1


def fault_batch(n: int = 50) -> list[dict]:
    """The fault phase's batch: lighter quotes (the 8B plan at 50 server prices), so that it is
    still running when the sweep has started on a busy host."""
    return [{**NORMAL, "name": f"quote {i}", "cost": {"server_price": 100_000 + 1_000 * i}} for i in range(n)]


def start_work(stack: Stack, token: str, receiver: Receiver) -> tuple[int, int, int, int]:
    """A batch and, once it has planned 3 items, a sweep, both with callbacks; returns their ids
    and how far each is when the sweep has stored its first chunk (the moment of the fault)."""
    api = stack.http
    callback = {"callback": {"url": receiver.url}}
    status, batch, _s, _ = api.call(
        "POST", "/api/v1/estimates/batch", token, {"scenarios": fault_batch(), **callback}
    )
    assert status == 202, (status, batch)
    items_sql = "select count(*) from integrations_batchitem where batch_id=? and status!=202"
    wait_rows(stack, items_sql, batch["id"], 3, timeout=300)
    status, sweep, _s, _ = api.call(
        "POST", "/api/v1/sweeps", token, {"base": NORMAL, "axes": SWEEP_AXES, **callback}
    )
    assert status == 202, (status, sweep)
    chunks_sql = "select count(*) from sweeps_sweepchunk where sweep_id=?"
    chunks = wait_rows(stack, chunks_sql, sweep["id"], 1, timeout=300)
    return batch["id"], sweep["id"], stack.query(items_sql, batch["id"])[0][0], chunks


def settle(stack: Stack, batch_id: int, sweep_id: int, since: float, timeout: float = 400):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        b = stack.query("select status from integrations_batch where id=?", batch_id)[0][0]
        s = stack.query("select status from sweeps_sweep where id=?", sweep_id)[0][0]
        delivered = stack.query(
            "select count(*) from integrations_callback where (batch_id=? or sweep_id=?) and status='delivered'",
            batch_id,
            sweep_id,
        )[0][0]
        if b == "done" and s not in ("queued", "running") and delivered == 2:
            return time.monotonic() - since
        time.sleep(0.3)
    return float("nan")


def verify(stack: Stack, batch_id: int, sweep_id: int, receiver: Receiver) -> tuple[bool, str]:
    items = stack.query(
        'select "index", status, estimate_id from integrations_batchitem where batch_id=?', batch_id
    )
    indexes = sorted(i for i, _, _ in items)
    estimates = [e for _, _, e in items if e is not None]
    statuses = Counter(s for _, s, _ in items)
    chunk_rows = stack.query(
        "select `index`, start, stop from sweeps_sweepchunk where sweep_id=? order by `index`", sweep_id
    )
    total, done, chunks_total, sweep_status = stack.query(
        "select total, done, chunks_total, status from sweeps_sweep where id=?", sweep_id
    )[0]
    ids = stack.query(
        "select event_id from integrations_callback where batch_id=? or sweep_id=?", batch_id, sweep_id
    )
    event_ids = {i for (i,) in ids}
    received = Counter(i for i in receiver.ids if i in event_ids)
    attempts = stack.query(
        "select count(*), sum(finished_at is null) from integrations_deliveryattempt d join integrations_callback c "
        "on d.callback_id=c.id where c.batch_id=? or c.sweep_id=?",
        batch_id,
        sweep_id,
    )[0]
    ok = (
        indexes == list(range(50))
        and len(estimates) == len(set(estimates)) == statuses.get(201, 0)
        and not statuses.get(202)
        and [c[0] for c in chunk_rows] == list(range(chunks_total))
        and sum(c[2] - c[1] for c in chunk_rows) == total == done
        and sweep_status == "done"
        and set(received) == event_ids
        and len(event_ids) == 2
    )
    text = (
        f"batch: {len(indexes)} items ({dict(statuses)}), {len(estimates)} estimates, {len(set(estimates))} distinct; "
        f"sweep {sweep_status}: {len(chunk_rows)}/{chunks_total} chunks, {done:,}/{total:,} rows; "
        f"webhooks: {len(event_ids)} events, received {dict(Counter(received.values()))} (times: events), "
        f"{attempts[0]} attempts ({attempts[1] or 0} left open)"
    )
    return ok, text


def fault(stack: Stack, token: str, name: str, act) -> bool:
    receiver = Receiver()
    try:
        batch_id, sweep_id, items, chunks = start_work(stack, token, receiver)
        t0 = time.monotonic()
        extra = act() or ""
        took = settle(stack, batch_id, sweep_id, t0)
        ok, text = verify(stack, batch_id, sweep_id, receiver)
    finally:
        receiver.close()
    total = stack.query("select chunks_total from sweeps_sweep where id=?", sweep_id)[0][0]
    print(
        f"   kill -9 {name} at {items}/50 items and {chunks}/{total} chunks: all done {took:.1f} s after; {extra}"
    )
    print(f"      {text}: {'PASS' if ok else 'FAIL'}")
    return ok


def kill_workers(stack: Stack):
    stack.kill_workers()
    time.sleep(2)
    stack.start_workers()
    return "workers restarted 2 s later"


def kill_web(stack: Stack, token: str):
    """A keyed POST is in flight (a heavy single estimate); gunicorn is killed under it. Then the
    web tier comes back and the client retries the same key until it is accepted."""
    key = f"bench-{uuid.uuid4().hex}"
    body = {"model": {"preset": "deepseek-v3"}, "training": {"tokens": 1.5e13}, "name": "in flight"}
    body |= {"hardware": {"accelerator": "h800-sxm"}, "cluster": {"target_days": 60}}
    t = threading.Thread(target=stack.http.call, args=("POST", "/api/v1/estimates", token, body, key))
    t.start()
    in_flight = "select count(*) from integrations_idempotencyrecord where key=? and status_code is null"
    deadline = time.monotonic() + 10
    while not stack.query(in_flight, key)[0][0] and time.monotonic() < deadline:
        time.sleep(0.01)
    was_in_flight = bool(stack.query(in_flight, key)[0][0])
    stack.kill_web()
    killed_at = time.time()
    lease = stack.query("select lease_expires_at from integrations_idempotencyrecord where key=?", key)
    lease_left = (
        datetime.fromisoformat(lease[0][0]).replace(tzinfo=UTC).timestamp() - killed_at
        if lease and lease[0][0]
        else float("nan")
    )
    t.join()
    killed = time.monotonic()
    stack.start_web()
    back = time.monotonic() - killed
    codes = []
    while True:
        status = stack.http.call("POST", "/api/v1/estimates", token, body, key)[0]
        codes.append(status)
        if status == 201 or time.monotonic() - killed > 120:
            break
        time.sleep(0.5)
    free = time.monotonic() - killed
    stored = stack.query("select count(*) from reports_estimate where name='in flight'")[0][0]
    return (
        f"web back {back:.1f} s after; the keyed request (in flight at the kill: {was_in_flight}; its key's lease "
        f"ran out {lease_left:.1f} s after the kill) accepted "
        f"{free:.1f} s after the kill (answers to the retries: {dict(Counter(codes))}; estimates stored: {stored})"
    )


def kill_redis(stack: Stack):
    stack.redis.stop()
    time.sleep(2)
    stack.redis.start()
    return f"Redis (own, port {stack.redis.port}) restarted empty 2 s later"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--phases", default="load,slow,faults", help="comma-separated: load, slow, faults")
    args = ap.parse_args()
    phases = set(args.phases.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-faults-"))
    stack = Stack(tmp)
    results = []
    try:
        tokens = stack.migrate_and_users(26)
        stack.start_workers()
        stack.start_web()
        print(
            f"stack: gunicorn (config/gunicorn.py, 2 workers) on :{stack.port}, 3 workers, own Redis :{stack.redis.port}, SQLite {tmp}"
        )
        if "load" in phases:
            results.append(phase_load(stack, tokens, args.seconds))
            drop_backlog(stack)
        if "slow" in phases:
            results.append(phase_slow_receivers(stack, tokens))
        if "faults" not in phases:
            return 0 if all(results) else 1
        print(
            "3. faults mid-batch (50 scenarios) and mid-sweep (40,000 scenarios, 40 chunks), both with callbacks"
        )
        results.append(fault(stack, tokens[23], "of the workers", lambda: kill_workers(stack)))
        results.append(fault(stack, tokens[24], "of the web tier", lambda: kill_web(stack, tokens[24])))
        results.append(fault(stack, tokens[25], "of Redis", lambda: kill_redis(stack)))
    finally:
        stack.close()
    print("ALL PASS" if all(results) else "SOME FAIL")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(machine.run(main))
