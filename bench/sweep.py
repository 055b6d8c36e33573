#!/usr/bin/env python
"""Sweep throughput through the whole path: POST /api/v1/sweeps -> Celery (Redis) -> workers ->
stored chunks -> status "done". Prints scenarios per second with 1 and with 2 worker processes and
the wall time of a 1,000,000-scenario compute-and-cost sweep.

    .venv/bin/python bench/sweep.py                       # SQLite in a temp dir, its own redis-server
    .venv/bin/python bench/sweep.py --database-url postgres://postgres@127.0.0.1:5432/clusterplan_bench
    .venv/bin/python bench/sweep.py --scenarios 200000 --workers 1 2 4 --chunk-size 25000
    .venv/bin/python bench/sweep.py --predicted --workers 2 --chunk-size 12600

--predicted: a sweep without `efficiency.mfu`, each row planned with its best layout: 2 models
(Llama 3.1 70B, Qwen3-30B-A3B) x 3 accelerators (H100, 910B2, H800) x 200 card counts (64 to
12,800) x 12 token budgets x 7 cloud prices = 100,800 scenarios, 1,200 distinct layout searches.
Prints the progress (scenarios stored) as it arrives.
--predicted-distinct: the worst case, every row its own layout search: 2 models x 3 accelerators x
16,667 card counts (8 to 133,336 in steps of 8) = 100,002 scenarios without an MFU.

Each worker is `celery -A config worker -P solo` (one process, one core). The clock runs from the
API call to the moment the sweep's status is "done" (every chunk stored, summary merged); it starts
once every worker answers a ping (Celery's remote control), so start-up is not counted. Without
--redis-url the bench starts its own throw-away redis-server on a free port and stops it at the end.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BASE = {
    "name": "bench: 70B, 1T tokens",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12, "seq_len": 4096},
    "hardware": {"accelerator": "ascend-910b2"},
    "cluster": {"cards": 1024},
    "efficiency": {"mfu": 0.45},
}


# The sub-batch sizing of the worker: "new" the adaptive one (settings' defaults), "old" fixed
# sub-batches of 2,000 rows (the path before issue 27), for the comparison in the same run.
PATHS = {"new": {}, "old": {"SWEEP_SUB_BATCH": "2000", "SWEEP_SUB_BATCH_S": "0"}}


def axes_for(n: int) -> dict:
    """About n scenarios: cards x 5 accelerators x 10 MFUs x 20 cloud prices (1,000 cards -> 1M)."""
    cards = max(1, round(n / 1000))
    return {
        "cluster.cards": {"start": 64, "stop": 64 * cards, "step": 64},
        "hardware.accelerator": ["ascend-910b2", "h100-sxm", "a100-sxm-80gb", "h800-sxm", "mi300x"],
        "efficiency.mfu": {"start": 0.3, "stop": 0.525, "step": 0.025},
        "cost.cloud_price_per_card_hour": {"start": 1.0, "stop": 4.8, "step": 0.2},
    }


PREDICTED_BASE = {
    "name": "bench: predicted MFU",
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 1e12},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 64},
}
PREDICTED_AXES = {
    "model.preset": ["llama-3.1-70b", "qwen3-30b-a3b"],
    "hardware.accelerator": ["h100-sxm", "ascend-910b2", "h800-sxm"],
    "cluster.cards": {"start": 64, "stop": 12800, "step": 64},
    "training.tokens": {"start": 5e11, "stop": 6e12, "step": 5e11},
    "cost.cloud_price_per_card_hour": {"start": 1.0, "stop": 4.0, "step": 0.5},
}


PREDICTED_DISTINCT_AXES = {
    "model.preset": ["llama-3.1-70b", "qwen3-30b-a3b"],
    "hardware.accelerator": ["h100-sxm", "ascend-910b2", "h800-sxm"],
    "cluster.cards": {"start": 8, "stop": 133336, "step": 8},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--chunk-size", type=int, default=50_000)
    ap.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", ""),
        help="a Redis to use (it is FLUSHDB'ed); default: start a private redis-server",
    )
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", ""))
    ap.add_argument(
        "--paths",
        nargs="+",
        choices=sorted(PATHS),
        default=["old", "new"],
        help="sub-batch sizing (see PATHS)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per worker count (best is reported)")
    ap.add_argument("--predicted", action="store_true", help="100,800 scenarios without an MFU (see above)")
    ap.add_argument("--predicted-distinct", action="store_true", help="100,002 rows, each its own search")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    own_redis = None
    if not args.redis_url:
        own_redis, args.redis_url = start_redis()
    try:
        return run_bench(args, tmp)
    finally:
        if own_redis is not None:
            own_redis.terminate()
            own_redis.wait(10)


def start_redis() -> tuple[subprocess.Popen, str]:
    """A private redis-server on a free port, nothing persisted; ready when it answers PING."""
    import redis

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if redis.Redis.from_url(url).ping():
                return proc, url
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("redis-server did not start")


def wait_for_workers(names: list[str], timeout: float = 60.0) -> float:
    """Seconds until every named worker answers Celery's remote-control ping (its consumer is up)."""
    from config.celery import app

    t0 = time.perf_counter()
    missing = set(names)
    while missing:
        if time.perf_counter() - t0 > timeout:
            raise SystemExit(f"workers did not answer a ping within {timeout:.0f} s: {sorted(missing)}")
        for reply in app.control.ping(destination=sorted(missing), timeout=0.5):
            missing -= set(reply)
    return time.perf_counter() - t0


def run_bench(args: argparse.Namespace, tmp: Path) -> int:
    db_url = args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}"
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CLUSTERPLAN_VAR_DIR": str(tmp),
            "DATABASE_URL": db_url,
            "REDIS_URL": args.redis_url,
            "SWEEP_CHUNK_SIZE": str(args.chunk_size),
            "SECURE_HTTPS": "0",
            "SWEEP_MAX_ACTIVE_PER_USER": "100",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "WARNING",
        }
    )
    os.environ.update(env)
    import django

    django.setup()
    import redis
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from sweeps.models import Sweep, SweepChunk

    call_command("migrate", verbosity=0, interactive=False)
    r = redis.Redis.from_url(args.redis_url)
    r.flushdb()
    user, _ = get_user_model().objects.get_or_create(username="bench")
    api = APIClient()
    api.force_authenticate(user)
    if args.predicted_distinct:
        args.predicted = True
    axes = PREDICTED_AXES if args.predicted else axes_for(args.scenarios)
    axes = PREDICTED_DISTINCT_AXES if args.predicted_distinct else axes
    base = PREDICTED_BASE if args.predicted else BASE

    import platform

    print(
        f"ClusterPlan sweep bench: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"db={db_url.split('://')[0]}, broker={args.redis_url}, chunk={args.chunk_size:,}"
    )
    results = []
    for n_workers, path in [(w, p) for w in args.workers for p in args.paths]:
        procs = []
        logs = []
        names = [f"bench{i}-{path}@{socket.gethostname()}" for i in range(n_workers)]
        for i in range(n_workers):
            log = (tmp / f"worker-{n_workers}-{path}-{i}.log").open("wb")
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-P",
                        "solo",
                        "-l",
                        "warning",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                        "-n",
                        names[i],
                    ],
                    cwd=ROOT,
                    env={**env, **PATHS[path]},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        try:
            ready_s = wait_for_workers(names)
            print(f"  {path}: {n_workers} worker(s) answered a ping after {ready_s:.1f} s")
            best = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                resp = api.post(
                    "/api/v1/sweeps",
                    {"name": f"bench {n_workers}w {path}", "base": base, "axes": axes},
                    format="json",
                )
                t_api = time.perf_counter() - t0
                assert resp.status_code == 202, resp.content
                sweep_id = resp.json()["id"]
                seen = -1
                while True:
                    s = Sweep.objects.filter(pk=sweep_id).values("status", "done", "total").get()
                    if args.predicted and s["done"] != seen:
                        seen = s["done"]
                        print(
                            f"    {time.perf_counter() - t0:6.1f} s: {seen:,} / {s['total']:,} scenarios stored"
                        )
                    if s["status"] not in ("queued", "running"):
                        break
                    time.sleep(0.02)
                wall = time.perf_counter() - t0
                sweep = Sweep.objects.get(pk=sweep_id)
                if sweep.status != "done":
                    print(f"  sweep {sweep_id} ended {sweep.status}: {sweep.error}")
                    return 1
                stored = sum(
                    len(b) for b in SweepChunk.objects.filter(sweep=sweep).values_list("data", flat=True)
                )
                run = {
                    "path": path,
                    "workers": n_workers,
                    "scenarios": sweep.total,
                    "wall_s": wall,
                    "api_s": t_api,
                    "rate": sweep.total / wall,
                    "compute_s": sweep.compute_s,
                    "chunks": sweep.chunks_total,
                    "stored_mb": stored / 1e6,
                }
                if best is None or run["wall_s"] < best["wall_s"]:
                    best = run
            best["peak_rss_mb"] = [peak_rss_mb(p.pid) for p in procs]
            results.append(best)
            print(
                f"  {path}: {best['workers']} worker(s): {best['scenarios']:,} scenarios in {best['wall_s']:.2f} s "
                f"-> {best['rate']:,.0f} scenarios/s ({best['rate'] / best['workers']:,.0f} per worker); "
                f"POST {best['api_s'] * 1000:.0f} ms (validation + queuing {best['chunks']} chunks); core time "
                f"{best['compute_s']:.2f} s; stored {best['stored_mb']:.1f} MB; worker peak RSS "
                + ", ".join(f"{m:.0f} MB" for m in best["peak_rss_mb"])
            )
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
            for log in logs:
                log.close()
    r.flushdb()
    walls = {(run["workers"], run["path"]): run["wall_s"] for run in results}
    for n_workers in args.workers:
        if (n_workers, "old") in walls and (n_workers, "new") in walls:
            ratio = walls[(n_workers, "old")] / walls[(n_workers, "new")]
            print(f"  ratio old/new wall, {n_workers} worker(s): {ratio:.2f}x")
    return 0


def peak_rss_mb(pid: int) -> float:
    """A live process's peak resident memory (VmHWM in /proc/<pid>/status), in MB; 0 if unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


if __name__ == "__main__":
    sys.exit(machine.run(main))
