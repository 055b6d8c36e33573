#!/usr/bin/env python
"""Server time of the report page (GET /r/<share token>) of the stored Llama 3.1 405B deadline plan
(15T tokens in 60 days on H100, layout searched), in process through Django's test client (the
whole view, template and middleware; no HTTP). The figures and the formatted tables are built fresh
on every request on the old path (reports.pages.build_figures, build_derived) and read from the
cache on the new one (reports.pages.report_figures, report_derived, keyed by share token, engine
version and language); both are timed in the same run, in English and in Chinese, with the first
(cold) request and the median of the rest.

    .venv/bin/python bench/report_page.py [-n 30]

Runs on a temporary SQLite database with its database cache (CACHE_URL and REDIS_URL unset).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import machine  # bench/machine.py: the load-average lines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCENARIO = {
    "name": "bench: Llama 3.1 405B, 15T tokens, 60 days on H100",
    "model": {"preset": "llama-3.1-405b"},
    "training": {"tokens": 15e12, "seq_len": 8192, "global_batch_tokens": 16 * 1024 * 1024},
    "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
    "cluster": {"target_days": 60},
}


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
    args = ap.parse_args()
    setup(Path(tempfile.mkdtemp(prefix="clusterplan-bench-")))
    from django.test import Client

    from reports import pages, services

    client = Client()
    cached = pages.report_figures, pages.report_derived

    def uncached_figures(estimate):
        return pages.build_figures(estimate.result)

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
    return 0


if __name__ == "__main__":
    sys.exit(machine.run(main))
