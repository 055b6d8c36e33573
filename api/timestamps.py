"""The API's one timestamp format: RFC 3339 in UTC with `Z` ("2026-12-02T00:52:03.123456Z"), the
same as DRF's DateTimeField gives under TIME_ZONE = "UTC". Bodies built by hand (webhook events,
batch and sweep payloads) format their datetimes here, never with `.isoformat()` ("+00:00")."""

from __future__ import annotations

import datetime as dt


def rfc3339(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("a naive datetime has no place in the API: USE_TZ is on")
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
