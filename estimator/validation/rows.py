"""Row shape of every validation suite and the reference data the suites read."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

REFERENCE_DIR = Path(__file__).resolve().parent.parent / "reference_data"


def read_csv(name: str) -> list[dict[str, str]]:
    """Rows of a reference CSV under reference_data/ (lines starting with # are its provenance)."""
    with (REFERENCE_DIR / name).open(newline="") as fh:
        lines = [line for line in fh if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def row(
    suite: str, case: str, metric: str, published: float, predicted: float, source: str
) -> dict[str, Any]:
    err = (predicted - published) / published * 100.0 if published else 0.0
    return {
        "suite": suite,
        "case": case,
        "metric": metric,
        "published": float(published),
        "predicted": float(predicted),
        "error_pct": float(err),
        "source": source,
    }


def normalize(rows: list[dict[str, Any]], suite: str, source: str) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        out.append(
            row(
                suite,
                str(r["case"]),
                str(r.get("metric", "")),
                r["published"],
                r["predicted"],
                r.get("source", source),
            )
        )
    return out
