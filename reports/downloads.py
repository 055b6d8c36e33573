"""What a report's downloads are called and how their numbers read: a file named after the report
(clusterplan-70b-dense-1t-tokens-3f9a2c1d.csv, not clusterplan-1.csv) and numbers without binary
floating-point noise (0.576, not 0.5760000000000001)."""

from __future__ import annotations

import math
from typing import Any

from django.utils.http import content_disposition_header
from django.utils.text import slugify

SIGNIFICANT = 12  # digits kept: every figure of the product is far coarser; float64 noise is in the 16th
NAME_CHARS = 60


def attachment(name: str, token: str, ext: str) -> str:
    """The Content-Disposition of a download: the report's name (any language, RFC 6266 filename*)
    and the start of its share token, so two reports of the same name do not collide."""
    slug = slugify(name or "", allow_unicode=True)[:NAME_CHARS].strip("-")
    stem = "-".join(p for p in ("clusterplan", slug, (token or "")[:8]) if p)
    return content_disposition_header(True, f"{stem}.{ext}") or f'attachment; filename="{stem}.{ext}"'


def tidy(value: Any) -> Any:
    """A float to SIGNIFICANT digits (0.5760000000000001 -> 0.576); anything else as it is."""
    if isinstance(value, float) and math.isfinite(value) and value != 0.0:
        return float(f"{value:.{SIGNIFICANT}g}")
    return value
