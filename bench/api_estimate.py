"""Latency of POST /api/v1/estimates for a Llama-3.1-405B plan with layout search (no parallelism
fixed), measured over N sequential requests against a running server.

    .venv/bin/python bench/api_estimate.py                 # starts gunicorn on SQLite in a temp dir
    .venv/bin/python bench/api_estimate.py --url http://127.0.0.1:8000 --token KEY   # targets a server
    .venv/bin/python bench/api_estimate.py -n 30 --distinct  # and N cold plans, both medians

Prints the median and p90 (and min/mean/max) wall-clock time per request, client-side, including
HTTP, JSON, the core's planning and the database write.

The same scenario posted N times measures a plan asked again: the server's process remembers the
best layouts of every layout problem it searched (estimator.layout.answers), so from the second
request on no search runs. --distinct also posts N different scenarios, each a cold plan, in the
same run and prints both medians side by side: request i asks a global batch of 2048 + i sequences
(of 8,192 tokens) instead of 2048, a field of every layout problem of the plan, so no answer,
enumeration or memory of an earlier request applies (the token count or the deadline would not do:
they move the cluster sizes the deadline scan visits, and most of those sizes' layout problems stay
the same, remembered).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
from scenarios import LLAMA_405B_60_DAYS as SCENARIO  # bench/scenarios.py

ROOT = Path(__file__).resolve().parents[1]


def distinct_scenario(i: int) -> dict:
    """The bench scenario with a global batch of 2048 + i sequences: every layout problem differs
    from those of scenarios j != i (a cold plan; see the module docstring)."""
    training = {**SCENARIO["training"], "global_batch_tokens": (2048 + i) * SCENARIO["training"]["seq_len"]}
    return {**SCENARIO, "name": f"{SCENARIO['name']} (batch {2048 + i})", "training": training}


def timed_posts(url: str, bodies: list[bytes], token: str | None) -> tuple[list[float], dict]:
    """Seconds per POST of each body, in order (SystemExit on a failed one), and the last answer."""
    times, payload = [], {}
    for body in bodies:
        status, elapsed, payload = post(url, body, token)
        if status != 201:
            raise SystemExit(f"POST failed with {status}: {json.dumps(payload)[:500]}")
        times.append(elapsed)
    return times, payload


def summary(times: list[float]) -> str:
    """median, p90, min, mean and max of the times (ms)."""
    times = sorted(times)
    p90 = times[max(0, round(0.9 * len(times)) - 1)]
    return (
        f"median {statistics.median(times) * 1000:.1f} ms   p90 {p90 * 1000:.1f} ms   "
        f"min {times[0] * 1000:.1f} ms   mean {statistics.fmean(times) * 1000:.1f} ms   max {times[-1] * 1000:.1f} ms"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: bytes, token: str | None) -> tuple[int, float, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    request = urllib.request.Request(f"{url}/api/v1/estimates", data=body, headers=headers, method="POST")
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            payload = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        payload, status = exc.read(), exc.code
    elapsed = time.perf_counter() - start
    return status, elapsed, json.loads(payload or b"{}")


# what would point the benched server away from SQLite and its database cache in the temporary
# directory (bench/api_profile.py sets up its in-process application the same way)
NOT_SQLITE = ("DATABASE_URL", "CACHE_URL", "REDIS_URL")


def server_settings(var_dir: str) -> dict[str, str]:
    """The benched server's environment: SQLite and its database cache in `var_dir`, no debug, no
    HTTPS redirect, a fresh secret, rate limits far above what the bench posts."""
    return {
        "CLUSTERPLAN_VAR_DIR": var_dir,
        "DJANGO_DEBUG": "0",
        "SECURE_HTTPS": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "THROTTLE_ANON": "1000000/minute",
        "THROTTLE_USER": "1000000/minute",
    }


def start_server(var_dir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in NOT_SQLITE} | server_settings(var_dir)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        "1",
        "--timeout",
        "120",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{url}/api/v1/catalog", timeout=30)  # a loaded machine: seconds
            return proc, url
        except (urllib.error.URLError, OSError):  # refused while starting, or timed out
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument(
        "--token", help="API token (a running server's anonymous throttle may be lower than N/minute)"
    )
    parser.add_argument("-n", type=int, default=100, help="timed requests (default 100)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--distinct", action="store_true", help="also post N different scenarios (cold plans), see above"
    )
    args = parser.parse_args()

    proc = None
    tmp = tempfile.TemporaryDirectory(prefix="clusterplan-bench-")
    url = args.url.rstrip("/") if args.url else None
    if url is None:
        proc, url = start_server(tmp.name)
    try:
        body = json.dumps(SCENARIO).encode()
        timed_posts(url, [body] * args.warmup, args.token)
        times, payload = timed_posts(url, [body] * args.n, args.token)
        result = payload["result"]
        par = result.get("parallelism") or {}
        layout = result.get("layout") or {}
        print(f"POST /api/v1/estimates, Llama-3.1-405B with layout search, {args.n} requests against {url}")
        print(
            f"  plan: {result['compute']['cards']} cards, TP={par.get('tp')} PP={par.get('pp')} DP={par.get('dp')}, "
            f"{layout.get('evaluated', '?')} layouts evaluated, engine {payload['engine_version']}"
        )
        print(f"  the same scenario (asked again): {summary(times)}")
        if args.distinct:
            bodies = [json.dumps(distinct_scenario(i)).encode() for i in range(1, args.n + 1)]
            cold, _ = timed_posts(url, bodies, args.token)
            print(
                f"  {args.n} distinct scenarios (cold plans, global batch 2049..{2048 + args.n} seqs): {summary(cold)}"
            )
            print(f"  median distinct / same: {statistics.median(cold) / statistics.median(times):.1f}x")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(machine.run(main))
