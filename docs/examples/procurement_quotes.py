#!/usr/bin/env python3
"""Quote one training cluster from several vendors: file each vendor's price list as a price book
of your team, plan every quote in one request, open the side-by-side comparison and save it as
Excel: the worked example of docs/procurement.md.

Standard library only (urllib), so it runs on any Python 3.11+ without installing anything:

    CLUSTERPLAN_TOKEN=... python3 docs/examples/procurement_quotes.py \\
        --base-url https://plan.example.com --team procurement --quotes quotes.json --out comparison.xlsx

Without --quotes it sends three example quotes (below); without --team it uses your only team.
A vendor's book is created on the first run and gets a new version when its prices change, so a
report keeps the version it was planned with. Each POST carries an Idempotency-Key, so a request
that timed out is simply sent again with the same key: the server answers the first response
instead of doing the work twice.
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
from decimal import Decimal
from pathlib import Path
from typing import Any

# The plan every vendor quotes for: a 70B dense model, 500 billion tokens, in 30 days.
PLAN: dict[str, Any] = {
    "model": {"preset": "llama-3.1-70b"},
    "training": {"tokens": 5e11},
    "cluster": {"target_days": 30},
}

# What each vendor offered: the accelerator and server, and its negotiated price list (a price book:
# catalog ids, USD; a server is priced as its chassis plus 8 cards, as in the catalog).
EXAMPLE_QUOTES: list[dict[str, Any]] = [
    {
        "vendor": "Vendor A",
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "price_date": "2026-11-20",
        "prices": {
            "accelerators": {"h100-sxm": 25_000},
            "servers": {"dgx-h100": 110_000},
            "switches": {"qm9700": 25_000},
            "transceivers": {"osfp-400g": 900},
        },
    },
    {
        "vendor": "Vendor B",
        "hardware": {"accelerator": "h100-sxm", "server": "dgx-h100"},
        "price_date": "2026-11-24",
        "prices": {
            "accelerators": {"h100-sxm": 23_000},
            "servers": {"dgx-h100": 101_000},
            "switches": {"qm9700": 28_000},
            "transceivers": {"osfp-400g": 1_100},
        },
    },
    {
        "vendor": "Vendor C",
        "hardware": {"accelerator": "ascend-910b2", "server": "atlas-800t-a2"},
        "price_date": "2026-11-25",
        "prices": {
            "accelerators": {"ascend-910b2": 12_000},
            "servers": {"atlas-800t-a2": 94_000},
            "switches": {"huawei-ce8851-32cq8dq": 18_000},
            "transceivers": {"qsfp56-200g": 600},
        },
    },
]

RETRIES = 4  # for timeouts, 429 and 5xx; the Idempotency-Key makes a retry safe


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:50]


def scenarios(quotes: list[dict[str, Any]], books: dict[str, str]) -> list[dict[str, Any]]:
    """One scenario per quote: the shared plan, with the vendor's hardware and its price book
    (`books`: vendor -> pinned reference "<team>/<book>@<version>")."""
    out = []
    for quote in quotes:
        scenario = json.loads(json.dumps(PLAN))  # a deep copy
        scenario["name"] = quote["vendor"]
        scenario["hardware"] = quote["hardware"]
        scenario["cost"] = {**scenario.get("cost", {}), "price_book": books[quote["vendor"]]}
        out.append(scenario)
    return out


def request(
    url: str, token: str | None, body: Any = None, key: str | None = None, method: str | None = None
) -> tuple[int, bytes]:
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
        req = urllib.request.Request(
            url, data=data, headers=headers, method=method or ("POST" if data else "GET")
        )
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


def team_slug(base: str, token: str | None, wanted: str | None) -> str:
    """The team whose books and estimates these are: --team (created, with you as its admin, when
    you are in no team of that name: a fresh install has none), else your only team."""
    status, raw = request(f"{base}/api/v1/teams", token)
    if status != 200:
        raise SystemExit(f"teams: {status} {raw[:200]!r}")
    slugs = [team["slug"] for team in json.loads(raw)]
    if wanted:
        if wanted not in slugs:
            body = {"name": wanted.replace("-", " ").capitalize(), "slug": wanted}
            status, raw = request(f"{base}/api/v1/teams", token, body, key=str(uuid.uuid4()))
            if status != 201:
                raise SystemExit(f"team '{wanted}': {status} {raw[:200]!r}")
        return wanted
    if len(slugs) != 1:
        raise SystemExit(f"name one of your teams with --team: {', '.join(slugs) or 'none'}")
    return slugs[0]


def file_price_books(base: str, token: str | None, team: str, quotes: list[dict[str, Any]]) -> dict[str, str]:
    """Each vendor's price list as a book of the team: created on the first run, a new version when
    the prices changed, left as it is otherwise. Returns vendor -> the pinned reference."""
    status, raw = request(f"{base}/api/v1/price-books", token)
    if status != 200:
        raise SystemExit(f"price books: {status} {raw[:200]!r}")
    existing = {(b["team"], b["slug"]): b for b in json.loads(raw)}
    refs = {}
    for quote in quotes:
        body = {"currency": "USD", "price_date": quote["price_date"], "prices": quote["prices"]}
        book = existing.get((team, slug(quote["vendor"])))
        if book is None:
            status, raw = request(
                f"{base}/api/v1/price-books",
                token,
                {**body, "team": team, "name": quote["vendor"], "slug": slug(quote["vendor"])},
                key=str(uuid.uuid4()),
            )
            book = json.loads(raw)
        else:
            latest = book["latest"] or {}
            same = latest.get("prices") == quote["prices"] and latest.get("price_date") == quote["price_date"]
            if not same:
                status, raw = request(f"{base}/api/v1/price-books/{book['id']}", token, body, method="PUT")
                book = json.loads(raw)
        if status not in (200, 201):
            raise SystemExit(f"{quote['vendor']}: price book refused: {book}")
        refs[quote["vendor"]] = f"{book['reference']}@{book['latest']['version']}"
    return refs


def wait_done(url: str, token: str, timeout_s: float = 600) -> dict:
    """GET the batch until every item is planned (once a second, at most `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status, raw = request(url, token)
        batch = json.loads(raw)
        if status == 200 and batch["status"] == "done":
            return batch
        if time.monotonic() > deadline:
            raise SystemExit(f"the batch is still {batch.get('status')} after {timeout_s:g} s: {url}")
        time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("CLUSTERPLAN_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("CLUSTERPLAN_TOKEN"), help="API token")
    parser.add_argument("--team", help="slug of the team that owns the books and the quotes")
    parser.add_argument("--quotes", type=Path, help="JSON list of quotes like EXAMPLE_QUOTES")
    parser.add_argument("--name", default="RFQ: 70B, 500B tokens, 30 days")
    parser.add_argument("--out", type=Path, default=Path("comparison.xlsx"))
    args = parser.parse_args(argv)
    base = args.base_url.rstrip("/")
    quotes = json.loads(args.quotes.read_text(encoding="utf-8")) if args.quotes else EXAMPLE_QUOTES

    # 1. The price books: each vendor's negotiated prices, versioned, owned by the team.
    team = team_slug(base, args.token, args.team)
    books = file_price_books(base, args.token, team, quotes)

    # 2. The batch: every quote in one request, filed under the team; accepted at once (202), planned
    #    by the service's workers, read again at its url until it is done (or use a callback).
    status, raw = request(
        f"{base}/api/v1/estimates/batch?team={team}",
        args.token,
        {"name": args.name, "scenarios": scenarios(quotes, books)},
        key=str(uuid.uuid4()),
    )
    batch = json.loads(raw)
    if status != 202:
        for error in batch.get("errors", []):
            print(f"refused: {error['field'] or 'request'}: {error['message']}", file=sys.stderr)
        return 1
    batch = wait_done(batch["url"], args.token)
    for item in batch["results"]:
        vendor = quotes[item["index"]]["vendor"]
        if item["status"] == 201:
            estimate = item["estimate"]
            compute = estimate["result"]["compute"]
            capex = estimate["amounts"]["cost.capex.total"]  # a decimal string and its currency
            print(
                f"{vendor}: {compute['cards']} cards, {compute['wall_clock_days']:.1f} days, "
                f"capex {Decimal(capex['amount']):,} {capex['currency']} (price book {books[vendor]})"
            )
        else:
            for error in item["error"]["errors"]:
                print(f"{vendor}: not planned: {error['field']}: {error['message']}")

    # 3. The comparison page (share it: its address is the link) and its Excel file.
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
