#!/usr/bin/env python3
"""Quote one training cluster from several vendors in one request, open the side-by-side
comparison and save it as Excel: the worked example of docs/procurement.md.

Standard library only (urllib), so it runs on any Python 3.11+ without installing anything:

    CLUSTERPLAN_TOKEN=... python3 docs/examples/procurement_quotes.py \\
        --base-url https://plan.example.com --quotes quotes.json --out comparison.xlsx

Without --quotes it sends three example quotes (below). Each POST carries an Idempotency-Key, so a
request that timed out is simply sent again with the same key: the server answers the first
response instead of planning the batch twice.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

# The plan every vendor quotes for: a 70B dense model, 500 billion tokens, in 30 days.
PLAN: dict[str, Any] = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "cluster": {"target_days": 30},
}

# What each vendor offered: the accelerator and server, and the negotiated prices (USD).
EXAMPLE_QUOTES: list[dict[str, Any]] = [
    {
        "vendor": "Vendor A",
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cost": {"server_price": 310_000, "switch_price": 25_000, "transceiver_price": 900},
    },
    {
        "vendor": "Vendor B",
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "cost": {"server_price": 285_000, "switch_price": 28_000, "transceiver_price": 1_100},
    },
    {
        "vendor": "Vendor C",
        "hardware": {"accelerator": "ascend-910b2", "server": "atlas-800t-a2"},
        "cost": {"server_price": 190_000, "switch_price": 18_000, "transceiver_price": 600},
    },
]

RETRIES = 4  # for timeouts, 429 and 5xx; the Idempotency-Key makes a retry safe


def scenarios(quotes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One scenario per quote: the shared plan, with the vendor's hardware and prices."""
    out = []
    for quote in quotes:
        scenario = json.loads(json.dumps(PLAN))  # a deep copy
        scenario["name"] = quote["vendor"]
        scenario["hardware"] = quote["hardware"]
        scenario["cost"] = {**scenario.get("cost", {}), **quote.get("cost", {})}
        out.append(scenario)
    return out


def request(url: str, token: str | None, body: Any = None, key: str | None = None) -> tuple[int, bytes]:
    """One HTTP request, retried with the same Idempotency-Key on a timeout, 429 or 5xx."""
    headers = {"Accept": "application/json"}
    data = None
    if token:
        headers["Authorization"] = f"Token {token}"
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if key:
        headers["Idempotency-Key"] = key
    for attempt in range(RETRIES + 1):
        req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
        try:
            with urllib.request.urlopen(req, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            if (exc.code not in (409, 429) and exc.code < 500) or attempt == RETRIES:
                return exc.code, exc.read()
            wait = float(exc.headers.get("Retry-After") or 2**attempt)
        except (urllib.error.URLError, TimeoutError):
            if attempt == RETRIES:
                raise
            wait = 2**attempt
        time.sleep(min(wait, 30))
    raise RuntimeError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("CLUSTERPLAN_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("CLUSTERPLAN_TOKEN"), help="API token (optional)")
    parser.add_argument("--quotes", type=Path, help="JSON list of quotes like EXAMPLE_QUOTES")
    parser.add_argument("--name", default="RFQ: 70B, 500B tokens, 30 days")
    parser.add_argument("--out", type=Path, default=Path("comparison.xlsx"))
    args = parser.parse_args(argv)
    base = args.base_url.rstrip("/")
    quotes = json.loads(args.quotes.read_text(encoding="utf-8")) if args.quotes else EXAMPLE_QUOTES

    # 1. The batch: every quote planned in one request, answered in order.
    status, raw = request(
        f"{base}/api/v1/estimates/batch",
        args.token,
        {"name": args.name, "scenarios": scenarios(quotes)},
        key=str(uuid.uuid4()),
    )
    batch = json.loads(raw)
    if status != 201:
        for error in batch.get("errors", []):
            print(f"refused: {error['field'] or 'request'}: {error['message']}", file=sys.stderr)
        return 1
    for item in batch["results"]:
        vendor = quotes[item["index"]]["vendor"]
        if item["status"] == 201:
            result = item["estimate"]["result"]
            print(
                f"{vendor}: {result['compute']['cards']} cards, {result['compute']['wall_clock_days']:.1f} days, "
                f"capex {result['cost']['capex']['total']:,.0f} {result['cost'].get('currency', '')}"
            )
        else:
            for error in item["error"]["errors"]:
                print(f"{vendor}: not planned: {error['field']}: {error['message']}")

    # 2. The comparison page (share it: its address is the link) and its Excel file.
    if batch["planned"] == 0:
        return 1
    status, _page = request(batch["compare_url"], None)
    if status != 200:
        print(f"comparison page answered {status}", file=sys.stderr)
        return 1
    status, xlsx = request(batch["xlsx_url"], None)
    if status != 200:
        print(f"Excel download answered {status}", file=sys.stderr)
        return 1
    args.out.write_bytes(xlsx)
    print(f"comparison: {batch['compare_url']}\nExcel: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
