#!/usr/bin/env python
"""Server time of the report page (GET /r/<share token>) of the stored Llama 3.1 405B deadline plan
(15T tokens in 60 days on H100, layout searched), in process through Django's test client (the
whole view, template and middleware; no HTTP). The figures and the formatted tables are built fresh
on every request on the old path (reports.pages.build_figures, build_derived) and read from the
cache on the new one (reports.pages.report_figures, report_derived, keyed by share token, engine
version and language); both are timed in the same run, in English and in Chinese, with the first
(cold) request and the median of the rest.

Then the first request of a new web worker (--workers N new processes per path, alternating): a
process starts as the server starts it, then asks for the report page of a stored estimate whose
figures another process cached, then for one nobody has viewed yet. On the old path it starts as
`get_wsgi_application()` alone; on the new one by importing config.wsgi, which warms the worker
up before it serves (config.warmup: URLconf, templates, translations, Plotly, the contract's
validators). Printed: the start-up, the first request, the median of the next ones, and the
first request of the never-viewed report. Requests go through the application's own handler
(its middleware loaded at start, as WSGIHandler does).

    .venv/bin/python bench/report_page.py [-n 30] [--workers 3]

Runs on a temporary SQLite database with its database cache (CACHE_URL and REDIS_URL unset).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines
from scenarios import LLAMA_405B_60_DAYS as SCENARIO  # bench/scenarios.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup(tmp: Path) -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CLUSTERPLAN_VAR_DIR": str(tmp),
            "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
            "REDIS_URL": "",
            "CACHE_URL": "",
            "SECURE_HTTPS": "0",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def worker_child(path: str, cached: str, fresh: str, n: int) -> None:
    """In a new process: start as the server does (old: get_wsgi_application(); new: config.wsgi,
    its warm-up included), then time GETs through the application's handler; prints JSON."""
    t0 = time.perf_counter()
    if path == "new":
        from config.wsgi import application
    else:
        from django.core.wsgi import get_wsgi_application

        application = get_wsgi_application()
    start = time.perf_counter() - t0
    from django.test import RequestFactory

    factory = RequestFactory()

    def get(token: str) -> float:
        t = time.perf_counter()
        resp = application.get_response(factory.get(f"/r/{token}/"))
        assert resp.status_code == 200, resp.status_code
        return time.perf_counter() - t

    first = get(cached)
    rest = [get(cached) for _ in range(n)]
    print(json.dumps({"start": start, "first": first, "rest": rest, "fresh": get(fresh)}))


def worker_starts(client, workers: int, n: int) -> None:
    """The first requests of new worker processes, old path and new alternating (worker_child)."""
    from reports import services

    cached = services.create_estimate(data=SCENARIO).share_token
    assert client.get(f"/r/{cached}/").status_code == 200  # its figures and tables cached
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    n = min(n, 10)  # requests after the first, per process
    for _ in range(workers):
        for path in ("old", "new"):
            fresh = services.create_estimate(data=SCENARIO).share_token
            # one "--child=..." argument: a share token may start with "-", which argparse would
            # take for an option as a separate argument (the bench then stopped with exit code 2)
            cmd = [sys.executable, __file__, f"--child={path}:{cached}:{fresh}", "-n", str(n)]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ)
            runs[path].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"first request of a new worker (en; {workers} processes per path, {n} requests after the first)")
    for path, got in runs.items():
        med = {k: statistics.median(r[k] for r in got) * 1e3 for k in ("start", "first", "fresh")}
        rest = statistics.median(x for r in got for x in r["rest"]) * 1e3
        print(
            f"  {path}: start {med['start']:6.0f} ms, first request {med['first']:6.1f} ms, then median "
            f"{rest:6.1f} ms; first request of a report nobody viewed {med['fresh']:6.1f} ms"
        )
    ratio = statistics.median(r["first"] for r in runs["old"]) / statistics.median(
        r["first"] for r in runs["new"]
    )
    print(f"  ratio old/new first request: {ratio:.1f}x")


def timed_gets(client, url: str, n: int) -> tuple[float, list[float]]:
    """Seconds of the first GET and of the n after it (each must answer 200)."""
    times = []
    for _ in range(n + 1):
        t0 = time.perf_counter()
        resp = client.get(url)
        times.append(time.perf_counter() - t0)
        assert resp.status_code == 200, resp.status_code
    return times[0], times[1:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30, help="timed requests per path and language")
    ap.add_argument("--workers", type=int, default=3, help="new worker processes per path (0: none)")
    ap.add_argument("--child", metavar="PATH:CACHED:FRESH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one new worker (worker_starts): the environment is the parent's
        path, cached, fresh = args.child.split(":")
        worker_child(path, cached, fresh, n=args.n)
        return 0
    setup(Path(tempfile.mkdtemp(prefix="clusterplan-bench-")))
    from django.test import Client

    from reports import count_points, pages, services

    client = Client()
    cached = pages.report_figures, pages.report_derived

    def uncached_figures(estimate):  # the cards chart's planned points too (reports.count_points)
        counts = count_points.points(estimate.input, estimate.price_book, estimate.result)
        return pages.build_figures(estimate.result, counts)

    def uncached_derived(estimate):
        return pages.build_derived(estimate.scenario, estimate.result)

    uncached = uncached_figures, uncached_derived

    print("report page, Llama 3.1 405B 60-day deadline plan, server time in process")
    medians = {}
    for path in ("old", "new"):
        pages.report_figures, pages.report_derived = uncached if path == "old" else cached  # type: ignore[assignment]
        for language in ("en", "zh-hans"):
            estimate = services.create_estimate(data=SCENARIO)  # a fresh token: nothing cached
            url = ("" if language == "en" else f"/{language}") + f"/r/{estimate.share_token}/"
            first, rest = timed_gets(client, url, args.n)
            medians[(path, language)] = statistics.median(rest)
            print(
                f"  {path} {language:8}: first {first * 1e3:6.1f} ms, median {statistics.median(rest) * 1e3:6.1f} ms, "
                f"min {min(rest) * 1e3:6.1f} ms ({len(rest)} requests)"
            )
    for language in ("en", "zh-hans"):
        ratio = medians[("old", language)] / medians[("new", language)]
        print(f"  ratio old/new median ({language}): {ratio:.1f}x")
    pages.report_figures, pages.report_derived = cached  # type: ignore[assignment]
    if args.workers:
        worker_starts(client, args.workers, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main() if any(a.startswith("--child=") for a in sys.argv) else machine.run(main))
