"""What a report's downloads are called and how their numbers read: a file named after the report
and its date (clusterplan-70b-dense-1t-tokens-2026-12-06.csv, never a piece of its share token, the
read key a forwarded file would leak) and numbers without binary floating-point noise (0.576, not
0.5760000000000001)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from django.utils.http import content_disposition_header
from django.utils.text import slugify

SIGNIFICANT = 15  # digits kept, as a spreadsheet keeps them: float64 noise is in the 16th and 17th
NAME_CHARS = 60


def attachment(name: str, day: dt.date | dt.datetime, ext: str) -> str:
    """The Content-Disposition of a download: the report's name slugged (letters of any language,
    digits, hyphens; RFC 6266 filename* of RFC 5987 for a non-ASCII one) and its date, ISO 8601.
    Never the share token, whole or in part: it is the report's read key."""
    slug = slugify(name or "", allow_unicode=True)[:NAME_CHARS].strip("-")
    date = (day.date() if isinstance(day, dt.datetime) else day).isoformat()
    stem = "-".join(p for p in ("clusterplan", slug, date) if p)
    return content_disposition_header(True, f"{stem}.{ext}") or f'attachment; filename="{stem}.{ext}"'


def tidy(value: Any) -> Any:
    """A float to SIGNIFICANT digits (0.5760000000000001 -> 0.576); anything else as it is."""
    if isinstance(value, float) and math.isfinite(value) and value != 0.0:
        return float(f"{value:.{SIGNIFICANT}g}")
    return value
