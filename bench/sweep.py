#!/usr/bin/env python
"""Sweep throughput through the whole path: POST /api/v1/sweeps -> Celery (Redis) -> workers ->
stored chunks -> status "done". Prints scenarios per second with 1 and with 2 worker processes and
the wall time of a 1,000,000-scenario compute-and-cost sweep.

    .venv/bin/python bench/sweep.py                       # SQLite in a temp dir, its own redis-server
    .venv/bin/python bench/sweep.py --database-url postgres://USER@HOST:5432/DB   # a database of your own
    .venv/bin/python bench/sweep.py --scenarios 200000 --workers 1 2 4 --chunk-size 25000
    .venv/bin/python bench/sweep.py --predicted --workers 2 --chunk-size 12600

--predicted: a sweep without `efficiency.mfu`, each row planned with its best layout: 2 models
(Llama 3.1 70B, Qwen3-30B-A3B) x 3 accelerators (H100, 910B2, H800) x 200 card counts (64 to
12,800) x 12 token budgets x 7 cloud prices = 100,800 scenarios, 1,200 distinct layout searches.
Prints the progress (scenarios stored) as it arrives.
--predicted-distinct: the worst case, every row its own layout search: 2 models x 3 accelerators x
16,667 card counts (8 to 133,336 in steps of 8) = 100,002 scenarios without an MFU.

Each worker is `celery -A config worker -P solo` (one process, one core), started afresh for each
sweep size and path (so its peak RSS belongs to that size). The clock runs from the API call to the
moment the sweep's status is "done" (every chunk stored, summary merged); it starts once every
worker answers a ping (Celery's remote control), so start-up is not counted. Besides the wall time
it prints the CPU seconds the workers and the bench process (API call, polling) spent on the sweep,
which depend far less on the machine's load than the wall time, scenarios per worker CPU-second,
the workers' CPU share of the wall time, the 1-minute load average, and each worker's resident
memory when it answered the ping and at its peak. Without --redis-url the bench starts its own
throw-away redis-server on a free port and stops it at the end; a --redis-url database must be
empty (the bench never flushes a Redis it did not start) and the bench deletes its own keys in it.

Issue 27's target (1,000,000 given-MFU rows end to end < 10 s on 2 workers, memory flat in the
rows), the old fixed sub-batches beside the new, and the code of checkout DIR before it:

    .venv/bin/python bench/sweep.py --workers 2 --scenarios 100000 1000000 --paths old new --repeat 3 --compare DIR

    .venv/bin/python bench/sweep.py --workers 2 --scenarios 100000 1000000 --compare /tmp/before

--compare DIR first runs this same bench (same arguments) on the code of another checkout DIR (e.g.
the code before a change: its API in the bench process and its workers), so before and after print
in one run under the same load, measured alike.

Before the timed sweeps each set of workers gets one untimed warm-up sweep (--warmup rows, 0 for
none): the first task of a fresh worker and the first POST of the bench process pay for imports and
catalog loading (about 0.5 s), which a long-running deployment pays once; its wall time is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
from sweep_workers import (
    clear_bench_keys,
    cpu_seconds,
    given_redis,
    peak_rss_mb,
    rss_mb,
    start_redis,
    start_workers,
    stop_workers,
    wait_for_workers,
)

# The checkout whose code is benched (the API in this process, the workers' cwd): this one, or the
# one --compare names (BENCH_ROOT, set for the child run), driven by this same bench.
ROOT = Path(os.environ.get("BENCH_ROOT") or Path(__file__).resolve().parent.parent).resolve()
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
    ap.add_argument("--scenarios", type=int, nargs="+", default=[1_000_000], help="sweep sizes")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--chunk-size", type=int, default=50_000)
    ap.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", ""),
        help="a Redis database to use, empty at the start (never flushed; see given_redis); "
        "default: start a private redis-server",
    )
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", ""))
    ap.add_argument(
        "--paths",
        nargs="+",
        choices=sorted(PATHS),
        default=["old", "new"],
        help="sub-batch sizing (see PATHS)",
    )
    ap.add_argument("--compare", metavar="DIR", help="first run the same bench on the checkout DIR")
    ap.add_argument("--warmup", type=int, default=100_000, help="rows of the untimed warm-up sweep")
    ap.add_argument("--profile", metavar="DIR", help="run the workers under cProfile, statistics in DIR")
    ap.add_argument(
        "--download", action="store_true", help="then download the whole results CSV through the API (timed)"
    )
    ap.add_argument(
        "--chunk-profile",
        type=int,
        metavar="N",
        default=0,
        help="instead: N chunks of a given-MFU sweep run in this process (no broker), timed, then profiled",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per worker count (best is reported)")
    ap.add_argument("--predicted", action="store_true", help="100,800 scenarios without an MFU (see above)")
    ap.add_argument("--predicted-distinct", action="store_true", help="100,002 rows, each its own search")
    args = ap.parse_args()
    baseline = compare(args) if args.compare else {}
    # Celery's loader puts the working directory first on sys.path: it must be the benched checkout,
    # or this process (the API) would import another checkout's code than its workers.
    os.chdir(ROOT)

    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    if args.chunk_profile:
        try:
            return chunk_profile(args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    own_redis = None
    if args.redis_url:
        given_redis(args.redis_url)
    else:
        own_redis, args.redis_url = start_redis()
    try:
        return run_bench(args, tmp, baseline)
    finally:
        if own_redis is None:
            clear_bench_keys(args.redis_url)
        if own_redis is not None:
            own_redis.terminate()
            own_redis.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


RESULT_LINE = re.compile(r"^\s+(\w+): (\d+) worker\(s\): ([\d,]+) scenarios in ([\d.]+) s")


def compare(args: argparse.Namespace) -> dict[tuple[int, int, str], float]:
    """This bench with the same arguments on checkout DIR's code, in a child process (its output
    printed as it comes); {(workers, scenarios, path): wall seconds} read off its lines."""
    root = Path(args.compare).resolve()
    argv = [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]]
    at = argv.index("--compare")
    del argv[at : at + 2]
    print(f"--- baseline: the code of {root}", flush=True)
    proc = subprocess.Popen(
        argv, env={**os.environ, "BENCH_ROOT": str(root)}, stdout=subprocess.PIPE, text=True
    )
    walls: dict[tuple[int, int, str], float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        print("  |" + line.rstrip(), flush=True)
        m = RESULT_LINE.match(line)
        if m:
            walls[(int(m[2]), int(m[3].replace(",", "")), m[1])] = float(m[4])
    if proc.wait():
        raise SystemExit(f"the baseline bench failed ({proc.returncode})")
    print(f"--- this checkout: {ROOT}", flush=True)
    return walls


def chunk_profile(args: argparse.Namespace, tmp: Path) -> int:
    """A worker's chunk end to end in this process (sweeps.services.run_chunk: lease, sub-batches,
    digest, packing, storing): a given-MFU sweep of --scenarios rows in chunks of --chunk-size on
    SQLite, its chunk 0 run first (imports, and the sweep's measured rate), then N chunks timed
    (CPU per chunk) and N more under cProfile (the top by cumulative time)."""
    import cProfile
    import pstats
    from unittest import mock

    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CLUSTERPLAN_VAR_DIR": str(tmp),
            "DATABASE_URL": args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}",
            "REDIS_URL": "",
            "CACHE_URL": "",
            "SWEEP_CHUNK_SIZE": str(args.chunk_size),
            "SWEEP_MAX_ACTIVE_PER_USER": "100",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from sweeps import services

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    n = args.chunk_profile
    with mock.patch.object(services, "enqueue_chunks", return_value=0):
        data = {"name": "chunk profile", "base": BASE, "axes": axes_for(args.scenarios[0])}
        sweep = services.create_sweep(data=data, owner=user)
    if sweep.chunks_total < 1 + 2 * n:
        raise SystemExit(f"{sweep.chunks_total} chunks: --scenarios too small for {n} timed and {n} profiled")
    assert services.run_chunk(sweep_id=sweep.pk, index=0) == "stored"
    t0 = time.process_time()
    for i in range(1, 1 + n):
        assert services.run_chunk(sweep_id=sweep.pk, index=i) == "stored"
    cpu = (time.process_time() - t0) / n
    print(
        f"chunk of {args.chunk_size:,} given-MFU rows, end to end in process: {cpu * 1000:.0f} ms CPU (mean of {n})"
    )
    profile = cProfile.Profile()
    profile.enable()
    for i in range(1 + n, 1 + 2 * n):
        services.run_chunk(sweep_id=sweep.pk, index=i)
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    return 0


def run_bench(args: argparse.Namespace, tmp: Path, baseline: dict[tuple[int, int, str], float]) -> int:
    db_url = args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}"
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CLUSTERPLAN_VAR_DIR": str(tmp),
            "DATABASE_URL": db_url,
            "REDIS_URL": args.redis_url,
            "CACHE_URL": args.redis_url,  # the bench's Redis, never a cache the caller's environment names
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
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    api = APIClient()
    api.force_authenticate(user)
    if args.predicted_distinct:
        args.predicted = True

    import platform

    print(
        f"ClusterPlan sweep bench: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"db={db_url.split('://')[0]}, broker={args.redis_url}, chunk={args.chunk_size:,}"
    )
    results = []
    for n, n_workers, path in [(n, w, p) for n in args.scenarios for w in args.workers for p in args.paths]:
        procs, logs = start_workers(n_workers, path, n, tmp, {**env, **PATHS[path]}, args.profile, root=ROOT)
        try:
            ready_s = wait_for_workers([name for name, _ in procs])
            ready_rss = [rss_mb(p.pid) for _, p in procs]
            print(f"  {path}: {n_workers} worker(s) answered a ping after {ready_s:.1f} s")
            if args.warmup:
                warm = run_once(args, api, args.warmup, n_workers, path, [p for _, p in procs], warmup=True)
                if warm is None:
                    return 1
                print(
                    f"  {path}: warm-up sweep of {warm['scenarios']:,} scenarios: {warm['wall_s']:.2f} s (untimed)"
                )
            best = None
            for _ in range(args.repeat):
                run = run_once(args, api, n, n_workers, path, [p for _, p in procs])
                if run is None:
                    return 1
                if best is None or run["wall_s"] < best["wall_s"]:
                    best = run
            assert best is not None
            best["peak_rss_mb"] = [peak_rss_mb(p.pid) for _, p in procs]
            best["ready_rss_mb"] = ready_rss
            results.append(best)
            print_run(best)
            if args.download:
                print_download(api, best["id"], best["scenarios"])
        finally:
            stop_workers([p for _, p in procs], logs)
    print_ratios(args, results, baseline)
    print_target(results, predicted=args.predicted)
    return 0


def run_once(
    args, api, n: int, n_workers: int, path: str, procs: list[subprocess.Popen], warmup: bool = False
) -> dict | None:
    """POST one sweep, poll its status until it ends; the run's figures (None if it did not end done).
    A warm-up sweep is always the given-MFU one of about n rows."""
    from sweeps.models import Sweep, SweepChunk

    predicted = args.predicted and not warmup
    axes = PREDICTED_AXES if predicted else axes_for(n)
    axes = PREDICTED_DISTINCT_AXES if predicted and args.predicted_distinct else axes
    base = PREDICTED_BASE if predicted else BASE
    cpu0 = [cpu_seconds(p.pid) for p in procs]
    own0 = time.process_time()
    t0 = time.perf_counter()
    resp = api.post(
        "/api/v1/sweeps", {"name": f"bench {n_workers}w {path}", "base": base, "axes": axes}, format="json"
    )
    t_api = time.perf_counter() - t0
    assert resp.status_code == 202, resp.content
    sweep_id = resp.json()["id"]
    seen = -1
    while True:
        s = Sweep.objects.filter(pk=sweep_id).values("status", "done", "total").get()
        if predicted and s["done"] != seen:
            seen = s["done"]
            print(f"    {time.perf_counter() - t0:6.1f} s: {seen:,} / {s['total']:,} scenarios stored")
        if s["status"] not in ("queued", "running"):
            break
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    own = time.process_time() - own0
    workers_cpu = sum(cpu_seconds(p.pid) - c for p, c in zip(procs, cpu0, strict=True))
    sweep = Sweep.objects.get(pk=sweep_id)
    if sweep.status != "done":
        print(f"  sweep {sweep_id} ended {sweep.status}: {sweep.error}")
        return None
    stored = sum(len(b) for b in SweepChunk.objects.filter(sweep=sweep).values_list("data", flat=True))
    stamps = sorted(SweepChunk.objects.filter(sweep=sweep).values_list("created_at", flat=True))
    # seconds after the sweep's row was made: its first and last chunk stored, its summary done
    timeline = [(t - sweep.created_at).total_seconds() for t in (stamps[0], stamps[-1], sweep.finished_at)]
    return {
        "id": sweep_id,
        "path": path,
        "workers": n_workers,
        "scenarios": sweep.total,
        "wall_s": wall,
        "api_s": t_api,
        "rate": sweep.total / wall,
        "compute_s": sweep.compute_s,
        "chunks": sweep.chunks_total,
        "stored_mb": stored / 1e6,
        "workers_cpu_s": workers_cpu,
        "bench_cpu_s": own,
        "load_1min": os.getloadavg()[0],
        "timeline_s": timeline,
    }


def print_run(run: dict) -> None:
    """One run's line: wall time and rate, then what the load moves less: the workers' CPU seconds,
    scenarios per worker CPU-second, and their CPU share of the wall time (100%: every worker busy
    all along; less: waiting for the broker, the database or a core another process holds); when
    the chunks were stored and the summary done (seconds after the sweep's row was made)."""
    cpu = run["workers_cpu_s"]
    busy = cpu / max(run["wall_s"] * run["workers"], 1e-9)
    first, last, done = run["timeline_s"]
    rss = ", ".join(
        f"{a:.0f} -> {m:.0f} MB" for a, m in zip(run["ready_rss_mb"], run["peak_rss_mb"], strict=True)
    )
    print(
        f"  {run['path']}: {run['workers']} worker(s): {run['scenarios']:,} scenarios in {run['wall_s']:.2f} s "
        f"-> {run['rate']:,.0f} scenarios/s ({run['rate'] / run['workers']:,.0f} per worker); "
        f"POST {run['api_s'] * 1000:.0f} ms (validation + queuing {run['chunks']} chunks); core time "
        f"{run['compute_s']:.2f} s; CPU: workers {cpu:.2f} s ({run['scenarios'] / max(cpu, 1e-9):,.0f} "
        f"scenarios per CPU-second, busy {busy:.0%} of the wall time), bench (POST, polling) "
        f"{run['bench_cpu_s']:.2f} s; load average {run['load_1min']:.2f} (1 min); chunks stored "
        f"+{first:.2f} to +{last:.2f} s, summary done +{done:.2f} s; stored {run['stored_mb']:.1f} MB; "
        f"worker RSS at ping -> peak {rss}",
        flush=True,
    )


def print_download(api, sweep_id: int, rows: int) -> None:
    """GET the sweep's results as CSV through the API (in this process) and read every byte: wall
    and CPU seconds, bytes, a digest of the body (equal digests: the same CSV), and this process's
    peak RSS before and after (memory flat in the rows when it hardly grows)."""
    import hashlib
    import resource

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu0, t0 = time.process_time(), time.perf_counter()
    response = api.get(f"/api/v1/sweeps/{sweep_id}/results?format=csv")
    assert response.status_code == 200, response.status_code
    digest, size = hashlib.sha256(), 0
    for part in response.streaming_content:
        digest.update(part)
        size += len(part)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"  download: CSV of {rows:,} rows in {wall:.2f} s ({cpu:.2f} s CPU), {size / 1e6:.0f} MB, "
        f"sha256 {digest.hexdigest()[:16]}; bench peak RSS {rss0:.0f} -> {rss1:.0f} MB",
        flush=True,
    )


def print_ratios(args, results: list[dict], baseline: dict[tuple[int, int, str], float]) -> None:
    walls = {(run["workers"], run["scenarios"], run["path"]): run["wall_s"] for run in results}
    pairs = [(w, run["scenarios"]) for w in args.workers for run in results if run["workers"] == w]
    for n_workers, n in dict.fromkeys(pairs):  # once each (the old and the new run share a pair)
        key = (n_workers, n)
        if (*key, "old") in walls and (*key, "new") in walls:
            ratio = walls[(*key, "old")] / walls[(*key, "new")]
            print(f"  ratio old/new sub-batches, {n_workers} worker(s), {n:,} scenarios: {ratio:.2f}x wall")
    for (n_workers, n, path), wall in sorted(baseline.items()):
        if (n_workers, n, path) in walls:
            ratio = wall / walls[(n_workers, n, path)]
            print(
                f"  ratio baseline/this checkout, {path}, {n_workers} worker(s), {n:,} scenarios: "
                f"{wall:.2f} s / {walls[(n_workers, n, path)]:.2f} s = {ratio:.2f}x wall"
            )


TARGET_ROWS, TARGET_WORKERS, TARGET_S = 1_000_000, 2, 10.0  # issue 27: given-MFU sweep end to end


def print_target(results: list[dict], *, predicted: bool) -> None:
    """Issue 27's target against the new path's run of 1,000,000 given-MFU rows on 2 workers."""
    for run in results:
        if predicted or (run["scenarios"], run["workers"], run["path"]) != (
            TARGET_ROWS,
            TARGET_WORKERS,
            "new",
        ):
            continue
        met = "met" if run["wall_s"] < TARGET_S else "NOT met"
        print(
            f"  target (issue 27): {TARGET_ROWS:,} given-MFU rows on {TARGET_WORKERS} workers < {TARGET_S:.0f} s: "
            f"{run['wall_s']:.2f} s wall, {run['workers_cpu_s']:.2f} s worker CPU: {met}"
        )


if __name__ == "__main__":
    sys.exit(machine.run(main))
