#!/usr/bin/env python
"""Where a cold POST /api/v1/estimates spends its time outside the core's plan (issue 27).

N distinct Llama 3.1 405B deadline scenarios (bench/api_estimate.py's distinct_scenario: each a cold
plan) are posted in process to config.wsgi's application, the one gunicorn serves (its warm-up and
heap freeze, every middleware, the throttles, the INSERT), on a temporary SQLite database with its
database cache, as api_estimate.py's server runs. No HTTP: api_estimate.py measures that.

Prints the medians of the whole request, of the plan (estimator.plan.compose.estimate) and of the
web layer's parts: the throttles, the body's parsing, the work-budget check, the INSERT, the
serializer, the JSON rendering, and the rest (middleware, handler, the core's to_jsonable, ...);
then the garbage collector's passes per generation and their time. --profile N then prints the N
functions of highest cumulative time outside the plan (cProfile paused inside it, after the timed
requests). --compare DIR first runs the same on another checkout (the code before a change) in a
child process: before and after in one run, under the same load.

    .venv/bin/python bench/api_profile.py [-n 30] [--profile 40] [--compare DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import machine  # bench/machine.py: the load-average lines
from api_estimate import NOT_SQLITE, SCENARIO, distinct_scenario, server_settings

HERE = Path(__file__).resolve()
PARTS = ("throttles", "parse", "work budget", "plan", "INSERT", "serializer", "render")


class Clock:
    """Seconds spent in each wrapped callable, per request; the plan's can pause a profiler."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.profiler: cProfile.Profile | None = None

    def wrap(self, owner: Any, name: str, part: str) -> None:
        real = getattr(owner, name)

        def timed(*args, **kwargs):
            paused = part == "plan" and self.profiler is not None
            if paused:
                self.profiler.disable()  # type: ignore[union-attr]
            t0 = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.spent[part] += time.perf_counter() - t0
                if paused:
                    self.profiler.enable()  # type: ignore[union-attr]

        setattr(owner, name, timed)


class GcClock:
    """Passes of the garbage collector per generation and their seconds (gc.callbacks)."""

    def __init__(self) -> None:
        self.passes, self.seconds, self._t0 = [0, 0, 0], [0.0, 0.0, 0.0], 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        self.passes[info["generation"]] += 1
        self.seconds[info["generation"]] += time.perf_counter() - self._t0


def server_environment(var_dir: str) -> None:
    """api_estimate.py's server settings (api_estimate.server_settings) in this process's environment."""
    os.environ.update(server_settings(var_dir))
    for name in NOT_SQLITE:
        os.environ.pop(name, None)


def poster(application: Callable) -> Callable[[bytes], tuple[str, bytes]]:
    """POST a body to the WSGI application as gunicorn would; (status line, response body)."""

    def post(body: bytes) -> tuple[str, bytes]:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/v1/estimates",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
        }
        status: list[str] = []
        chunks = application(environ, lambda line, headers, exc_info=None: status.append(line))
        try:
            return status[0], b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()

    return post


def instrument(clock: Clock) -> None:
    from rest_framework import renderers, request, views

    from reports import services
    from reports.api import serializers
    from reports.models import Estimate

    clock.wrap(views.APIView, "check_throttles", "throttles")
    clock.wrap(request.Request, "_parse", "parse")
    clock.wrap(services, "check_work_budget", "work budget")
    clock.wrap(services, "core_estimate", "plan")
    clock.wrap(Estimate, "save", "INSERT")
    clock.wrap(serializers.EstimateSerializer, "to_representation", "serializer")
    clock.wrap(renderers.JSONRenderer, "render", "render")


def measure(root: Path, n: int, top: int) -> None:
    with tempfile.TemporaryDirectory(prefix="clusterplan-profile-") as var_dir:
        server_environment(var_dir)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=root, check=True)
        sys.path.insert(0, str(root))
        os.chdir(root)
        from config.wsgi import application  # warm-up (and, where the checkout has it, the freeze)

        post, clock, gcs = poster(application), Clock(), GcClock()
        instrument(clock)
        for _ in range(3):  # the URLconf's and the connection's first use
            post(json.dumps(SCENARIO).encode())
        rows = [timed_request(post, clock, distinct_scenario(i)) for i in range(1, n + 1)]
        report(root, rows, gcs)
        if top:
            profile_requests(post, clock, top, first=n + 1)


def timed_request(post: Callable, clock: Clock, scenario: dict) -> dict[str, float]:
    clock.spent.clear()
    t0 = time.perf_counter()
    status, body = post(json.dumps(scenario).encode())
    total = time.perf_counter() - t0
    if not status.startswith("201"):
        raise SystemExit(f"POST failed with {status}: {body[:500]!r}")
    row = {part: clock.spent.get(part, 0.0) for part in PARTS}
    return {**row, "rest": total - sum(row.values()), "request": total}


def report(root: Path, rows: list[dict[str, float]], gcs: GcClock) -> None:
    def median_ms(key: str) -> float:
        return statistics.median(r[key] for r in rows) * 1e3

    web = statistics.median(r["request"] - r["plan"] for r in rows) * 1e3
    print(f"{root}: {len(rows)} cold 405B POSTs in process (config.wsgi, SQLite, database cache)")
    print(
        f"  request median {median_ms('request'):.1f} ms: plan {median_ms('plan'):.1f} ms, the rest {web:.2f} ms"
    )
    print(
        "  "
        + ", ".join(f"{part} {median_ms(part):.2f}" for part in (*PARTS[:3], *PARTS[4:], "rest"))
        + " (ms)"
    )
    passes = ", ".join(f"gen {g}: {gcs.passes[g]} ({gcs.seconds[g] * 1e3:.1f} ms)" for g in range(3))
    print(f"  garbage collector passes during the timed requests: {passes}; frozen {gc.get_freeze_count():,}")


def profile_requests(post: Callable, clock: Clock, top: int, first: int, count: int = 10) -> None:
    profiler = cProfile.Profile()
    clock.profiler = profiler
    for i in range(first, first + count):
        body = json.dumps(distinct_scenario(i)).encode()
        profiler.enable()
        post(body)
        profiler.disable()
    print(f"profile of {count} cold POSTs outside the plan (cProfile, cumulative; it inflates the times)")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def main() -> int | None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=30, help="timed cold POSTs (default 30)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="then the top N functions")
    parser.add_argument("--compare", metavar="DIR", help="first the same on this checkout (before a change)")
    parser.add_argument("--root", default=str(HERE.parent.parent), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare:
        cmd = [sys.executable, str(HERE), "-n", str(args.n), "--root", str(Path(args.compare).resolve())]
        subprocess.run(cmd, check=True)
    measure(Path(args.root).resolve(), args.n, args.profile)
    return None


if __name__ == "__main__":
    sys.exit(machine.run(main))
