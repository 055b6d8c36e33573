"""Deprecated fields of API v1, the one list (the policy: docs/api-versioning.md).

A response that carries a deprecated field says so in its headers, so a client notices before the
field goes: `Deprecation` (RFC 9745: the date it was deprecated, `@<unix seconds>`), `Sunset`
(RFC 8594: the HTTP-date after which it may be removed, at least DEPRECATION_MIN_DAYS later) and
`Link: <...>; rel="deprecation"` (where the replacement is described). The OpenAPI document marks
the field `deprecated: true` and its description names the replacement.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from email.utils import format_datetime

from django.http import HttpRequest, HttpResponse

DEPRECATION_MIN_DAYS = 180  # the policy: a deprecated field stays at least six months


@dataclass(frozen=True)
class Deprecated:
    field: str  # where in the body, for people ("results[].headline.capex")
    method: str
    path: re.Pattern[str]  # the request paths whose responses carry it
    since: dt.date
    sunset: dt.date
    replacement: str

    def __post_init__(self) -> None:
        if (self.sunset - self.since).days < DEPRECATION_MIN_DAYS:
            raise ValueError(f"{self.field}: sunset sooner than {DEPRECATION_MIN_DAYS} days")


DEPRECATED: tuple[Deprecated, ...] = (
    Deprecated(
        field="results[].headline.capex",
        method="GET",
        path=re.compile(r"/api/v1/estimates/?"),
        since=dt.date(2026, 12, 2),
        sunset=dt.date(2027, 6, 30),
        replacement="results[].headline.capex_amount (a decimal string with its currency)",
    ),
)


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def headers_for(entry: Deprecated) -> dict[str, str]:
    return {
        "Deprecation": f"@{int(_midnight(entry.since).timestamp())}",
        "Sunset": format_datetime(_midnight(entry.sunset), usegmt=True),
        "Link": '</api/v1/redoc>; rel="deprecation"; type="text/html"',
    }


def announce(request: HttpRequest, response: HttpResponse) -> None:
    """Add the headers when a successful response carries a deprecated field."""
    if response.status_code >= 400:
        return
    for entry in DEPRECATED:
        if request.method == entry.method and entry.path.fullmatch(request.path):
            for name, value in headers_for(entry).items():
                response[name] = value
            return
