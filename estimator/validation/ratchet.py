"""The ratchet over every published row: each validation row's accepted error band, in the data.

reference_data/accepted_errors.toml holds, for every row of `validation_rows()` (every suite, the known
gaps included), the band its signed error (predicted - published) / published, in percent, is accepted
in. tests/estimator/test_ratchet.py asserts every row against its band, so no row moves silently: a
change that moves a row past its band fails until the file is rewritten, and the diff of the file shows
which rows moved and by how much.

    python -m estimator.validation.ratchet            # rows outside their band, or "all rows inside"
    python -m estimator.validation.ratchet --update   # accept today's errors (+- MARGIN_PCT)

The margin is what a row may drift without notice (floating point, a tie between layouts): 2
percentage points.
"""

from __future__ import annotations

import argparse
import tomllib
from typing import Any

from estimator.validation import validation_rows
from estimator.validation.rows import REFERENCE_DIR

ACCEPTED_FILE = REFERENCE_DIR / "accepted_errors.toml"
MARGIN_PCT = 2.0


def row_id(row: dict[str, Any]) -> str:
    """suite/case, with the metric where a case has several rows (total and active parameters)."""
    metric = str(row.get("metric") or "")
    return f"{row['suite']}/{row['case']}" + (f" [{metric}]" if metric else "")


def accepted() -> dict[str, tuple[float, float]]:
    """Row id -> (low, high) accepted signed error in percent."""
    with ACCEPTED_FILE.open("rb") as fh:
        data = tomllib.load(fh)
    return {str(k): (float(v[0]), float(v[1])) for k, v in data["accepted_error_pct"].items()}


def violations(
    rows: list[dict[str, Any]], bands: dict[str, tuple[float, float]]
) -> list[tuple[str, float, tuple[float, float] | None]]:
    """(row id, error %, its band or None when it has none) for every row outside its band."""
    out: list[tuple[str, float, tuple[float, float] | None]] = []
    for row in rows:
        band = bands.get(row_id(row))
        err = float(row["error_pct"])
        if band is None or not band[0] <= err <= band[1]:
            out.append((row_id(row), err, band))
    return out


def render(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Accepted signed error, percent, of every validation row: (predicted - published) / published.",
        "# Written by `python -m estimator.validation.ratchet --update` (today's error +- 2 points);",
        "# tests/estimator/test_ratchet.py asserts every row inside its band. Widen a band only with a reason",
        "# in CHANGELOG.md.",
        "",
        "[accepted_error_pct]",
    ]
    for row in rows:
        err = float(row["error_pct"])
        low, high = round(err - MARGIN_PCT, 1), round(err + MARGIN_PCT, 1)
        name = row_id(row).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'"{name}" = [{low}, {high}]')
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m estimator.validation.ratchet")
    parser.add_argument("--update", action="store_true", help="accept today's errors")
    args = parser.parse_args(argv)
    rows = validation_rows()
    if args.update:
        ACCEPTED_FILE.write_text(render(rows), encoding="utf-8")
        print(f"wrote {ACCEPTED_FILE} ({len(rows)} rows)")
        return 0
    bad = violations(rows, accepted())
    for rid, err, band in bad:
        print(f"{rid}: {err:+.1f}% outside {band}")
    print("all rows inside their bands" if not bad else f"{len(bad)} rows outside their bands")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
