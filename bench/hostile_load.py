#!/usr/bin/env python
"""Hostile load on loopback: 20 anonymous clients send the issue-12 worst-case estimate (a custom
MoE with 10,000 layers and 100,000 experts on 8.6 M cards with 1 M Monte Carlo samples) as fast as
they can, while another client plans a normal scenario once a second. Prints the status codes and
latencies of both; exits 1 unless every hostile request got 400 or 429 quickly (p95 under 1 s)
and the normal client's median stayed under 1 s with no failure.

    .venv/bin/python bench/hostile_load.py                 # 30 s, SQLite in a temp dir
    .venv/bin/python bench/hostile_load.py --seconds 20 --clients 20 --database-url postgres://...

The server is the production one (gunicorn with config/gunicorn.py, 2 workers) bound to
127.0.0.1 only. Clients are told apart the way a reverse proxy would (TRUSTED_PROXIES=1 and an
X-Forwarded-For per client), so each has its own rate budget; the cache holding the counters is a
private redis-server on a free port (bench/sweep_workers.start_redis; the database's cache where
redis-server is not installed), or an empty Redis database given with --redis-url: the bench never
flushes a Redis it did not start (the shared one at 127.0.0.1:6379 holds others' queues and caches).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
from scenarios import NORMAL  # bench/scenarios.py
from sweep_workers import given_redis, start_redis  # bench/sweep_workers.py: private or empty Redis

ROOT = Path(__file__).resolve().parent.parent

WORST = {  # issue 12: 21 s of a web worker before the work budget
    "name": "worst case",
    "model": {
        "num_hidden_layers": 10_000,
        "hidden_size": 16384,
        "num_attention_heads": 128,
        "vocab_size": 262144,
        "intermediate_size": 53248,
        "num_experts": 100_000,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 4096,
    },
    "training": {"tokens": 1e17, "seq_len": 1_048_576},
    "hardware": {"accelerator": "h100-sxm"},
    "cluster": {"cards": 8_648_640},
    "network": {"switch_ports": 4096},
    "uncertainty": {"samples": 1_000_000},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_up(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def post(port: int, body: bytes, client: str) -> tuple[int, float]:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST",
            "/api/v1/estimates",
            body,
            {"Content-Type": "application/json", "X-Forwarded-For": client},
        )
        status = conn.getresponse().status
        return status, time.perf_counter() - t0
    except OSError:
        return 0, time.perf_counter() - t0
    finally:
        conn.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--database-url", default="")
    ap.add_argument(
        "--redis-url", default="", help="an empty Redis database for the throttle counters (never flushed)"
    )
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-hostile-"))
    port = free_port()
    env = dict(os.environ)
    env.update(
        CLUSTERPLAN_VAR_DIR=str(tmp),
        DATABASE_URL=args.database_url or f"sqlite:///{tmp / 'db.sqlite3'}",
        SECURE_HTTPS="0",
        DJANGO_DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1",
        TRUSTED_PROXIES="1",
        WEB_WORKERS="2",
        GUNICORN_BIND=f"127.0.0.1:{port}",
        LOG_LEVEL="ERROR",
        GUNICORN_ACCESS_LOG="",
    )
    env.pop("REDIS_URL", None)
    own_redis = None
    if args.redis_url:
        given_redis(args.redis_url)  # refused unless empty: never flushed
    elif shutil.which("redis-server"):
        own_redis, args.redis_url = start_redis()
    env["CACHE_URL"] = args.redis_url if args.redis_url and redis_up(args.redis_url) else ""
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while post(port, json.dumps(NORMAL).encode(), "10.9.9.9")[0] != 201:
            if time.monotonic() > deadline or server.poll() is not None:
                print("the server did not start")
                return 1
            time.sleep(0.3)

        stop = threading.Event()
        hostile: list[tuple[int, float]] = []
        normal: list[tuple[int, float]] = []
        worst, usual = json.dumps(WORST).encode(), json.dumps(NORMAL).encode()

        def attacker(i: int) -> None:
            while not stop.is_set():
                hostile.append(post(port, worst, f"10.0.{i // 250}.{i % 250 + 1}"))

        def user() -> None:
            while not stop.is_set():
                normal.append(post(port, usual, "10.1.0.1"))
                stop.wait(1.0)

        threads = [threading.Thread(target=attacker, args=(i,)) for i in range(args.clients)]
        threads.append(threading.Thread(target=user))
        t0 = time.monotonic()
        for t in threads:
            t.start()
        stop.wait(args.seconds)
        stop.set()
        for t in threads:
            t.join(40)
        elapsed = time.monotonic() - t0
    finally:
        server.terminate()
        if own_redis is not None:
            own_redis.terminate()
        server.wait(20)

    codes = Counter(s for s, _ in hostile)
    h_lat = [t for _, t in hostile]
    n_lat = [t for s, t in normal if s == 201]
    n_bad = [s for s, _ in normal if s != 201]
    print(
        f"{args.clients} hostile clients, {elapsed:.1f} s, cache: {'Redis' if env['CACHE_URL'] else 'database'}"
    )
    print(f"hostile requests: {len(hostile)} ({len(hostile) / elapsed:.0f}/s), status codes {dict(codes)}")
    print(f"hostile latency: median {statistics.median(h_lat):.3f} s, p95 {pct(h_lat, 0.95):.3f} s")
    print(
        f"normal estimates: {len(normal)}, failed {len(n_bad)} {n_bad[:5]}; latency median "
        f"{statistics.median(n_lat) if n_lat else float('nan'):.3f} s, p95 {pct(n_lat, 0.95):.3f} s, "
        f"max {max(n_lat, default=float('nan')):.3f} s"
    )
    ok = (
        set(codes) <= {400, 429}
        and pct(h_lat, 0.95) < 1.0
        and not n_bad
        and n_lat
        and statistics.median(n_lat) < 1.0
    )
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(machine.run(main))
