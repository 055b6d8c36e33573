"""The processes of the sweep bench (bench/sweep.py): its throw-away redis-server (or a given empty
Redis database, its keys deleted at the end, never flushed), the Celery workers it starts, pings
and stops, and what they used (CPU seconds and resident memory, read from /proc). Units: seconds, MB."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


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


# The keys a bench run leaves in its Redis: Celery's queues and their bindings (kombu), the unacked
# messages of acks_late tasks, and the Django cache (config/settings.py: KEY_PREFIX "clusterplan").
BENCH_KEY_PATTERNS = ("celery", "celery\x06*", "_kombu.*", "unacked*", "clusterplan:*")


def given_redis(url: str) -> None:
    """Refuse a Redis database given with --redis-url unless it is empty: the bench never flushes
    a Redis it did not start (others' queues and caches may live there, e.g. the shared server at
    127.0.0.1:6379), and workers of others on a non-empty one could take its tasks or it theirs."""
    import redis

    keys = redis.Redis.from_url(url).dbsize()
    if keys:
        raise SystemExit(
            f"{url} holds {keys:,} keys: the bench needs an empty Redis database (it never flushes one it "
            "did not start); pass an empty database, e.g. another /N, or omit --redis-url for a private server"
        )


def clear_bench_keys(url: str) -> int:
    """Delete what a bench run left in a given Redis (BENCH_KEY_PATTERNS only, never a flush), so
    a second run (--compare) finds it empty again; the keys deleted."""
    import redis

    r = redis.Redis.from_url(url)
    keys = {k for pattern in BENCH_KEY_PATTERNS for k in r.scan_iter(match=pattern)}
    return r.delete(*keys) if keys else 0


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


def start_workers(
    n_workers: int, path: str, n: int, tmp: Path, env: dict, profile: str | None = None, *, root: Path
) -> tuple[list, list]:
    """n_workers `celery worker -P solo` processes, each logging to a file in tmp; with `profile`,
    each under cProfile, its statistics written to profile/worker-<rows>-<path>-<i>.prof when it stops;
    run in `root` (the checkout benched)."""
    procs, logs = [], []
    for i in range(n_workers):
        name = f"bench{i}-{path}-{n}@{socket.gethostname()}"
        log = (tmp / f"worker-{n}-{n_workers}-{path}-{i}.log").open("wb")
        logs.append(log)
        argv = [sys.executable]
        if profile:
            Path(profile).mkdir(parents=True, exist_ok=True)
            argv += ["-m", "cProfile", "-o", str(Path(profile).resolve() / f"worker-{n}-{path}-{i}.prof")]
        argv += ["-m", "celery", "-A", "config", "worker", "-P", "solo", "-l", "warning"]
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat", "-n", name]
        procs.append((name, subprocess.Popen(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)))
    return procs, logs


def stop_workers(procs: list[subprocess.Popen], logs: list) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    for log in logs:
        log.close()


def cpu_seconds(pid: int) -> float:
    """A live process's user + system CPU seconds (/proc/<pid>/stat, fields 14 and 15); 0 if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    """A live process's peak resident memory (VmHWM in /proc/<pid>/status), in MB; 0 if unknown."""
    return _status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    """A live process's resident memory now (VmRSS in /proc/<pid>/status), in MB; 0 if unknown."""
    return _status_mb(pid, "VmRSS")


def _status_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
