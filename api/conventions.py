"""HTTP conventions of the API, in one place (docs/api-conventions.md), the way the anchors do them
(Stripe, GitHub):

- `RequestIdMiddleware` (every URL): `X-Request-Id` echoed when the client sent a usable one, else
  generated (32 hex digits); on every response, and in every log line of the request
  (`RequestIdLogFilter` adds `request_id` to each record; one access line per API request).
- `ApiResponseMiddleware` (under /api/ only):
  * every error answers the API's one error shape, JSON: an HTML page of Django (unknown route,
    a non-integer id, 405 outside DRF, CSRF, 500) is replaced by `{"errors": [...]}` with the
    status kept;
  * every 429 carries `Retry-After` (seconds);
  * the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-09): `RateLimit-Policy` and
    `RateLimit` for each rate this request spent, recorded by the throttles
    (`record_rate_limit`);
  * `Deprecation` (RFC 9745) / `Sunset` (RFC 8594) / `Link rel="deprecation"` when the response
    carries a deprecated field (api.deprecation).
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
import uuid
from dataclasses import dataclass
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse, JsonResponse

from . import deprecation

REQUEST_ID_HEADER = "X-Request-Id"
_REQUEST_ID_META = "HTTP_X_REQUEST_ID"
_USABLE_ID = re.compile(r"[A-Za-z0-9._:+/=-]{8,128}")  # a UUID, a ULID, a trace id; nothing to inject
_current_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
access_log = logging.getLogger("api.requests")


def current_request_id() -> str:
    """The id of the request being served ("-" outside one)."""
    return _current_id.get()


class RequestIdLogFilter(logging.Filter):
    """Adds `record.request_id` (settings.LOGGING formats it into every line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current_id.get()
        return True


def request_id_of(request: HttpRequest) -> str:
    sent = request.META.get(_REQUEST_ID_META, "").strip()
    return sent if _USABLE_ID.fullmatch(sent) else uuid.uuid4().hex


class RequestIdMiddleware:
    """Outermost, so that even a refused body (413) or a server error carries the id."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rid = request_id_of(request)
        request.request_id = rid  # type: ignore[attr-defined]  # read by views that log
        # Not reset on the way out: Django logs "Not Found" and server errors after the middleware
        # returned, and those lines must carry the id too; the next request sets its own.
        _current_id.set(rid)
        started = time.monotonic()
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = rid
        if request.path.startswith("/api/"):
            access_log.info(
                "%s %s %s %.0f ms",
                request.method,
                request.path,
                response.status_code,
                (time.monotonic() - started) * 1000,
            )
        return response


# ---- rate limits ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateState:
    """One rate the request spent: `quota` requests per `window_s`, `remaining` after this one,
    `reset_s` until the oldest counted request leaves the window."""

    policy: str
    quota: int
    window_s: int
    remaining: int
    reset_s: int


def record_rate_limit(request, state: RateState) -> None:
    """Called by the throttles (api.throttling) for each rate they apply to a request."""
    raw = getattr(request, "_request", request)  # DRF's Request wraps the HttpRequest
    states: dict[str, RateState] = getattr(raw, "_rate_limits", {})
    states[state.policy] = state
    raw._rate_limits = states


def _rate_limit_headers(request: HttpRequest, response: HttpResponse) -> None:
    states = list(getattr(request, "_rate_limits", {}).values())
    if not states:
        return
    response["RateLimit-Policy"] = ", ".join(f'"{s.policy}";q={s.quota};w={s.window_s}' for s in states)
    response["RateLimit"] = ", ".join(f'"{s.policy}";r={s.remaining};t={s.reset_s}' for s in states)
    if response.status_code == 429 and not response.has_header("Retry-After"):
        spent = [s.reset_s for s in states if s.remaining == 0]
        response["Retry-After"] = str(max(spent or [s.reset_s for s in states]) or 1)


# ---- errors -----------------------------------------------------------------------------------

# Responses of another kind on purpose: CSV of sweep results asked for with ?format=csv.
_KEPT_TYPES = ("application/json", "text/csv")


def _message(status: int) -> str:
    if status == 404:
        return "not found: no such resource or route under /api/v1/ (see /api/v1/schema)"
    try:
        return HTTPStatus(status).phrase.lower()
    except ValueError:
        return "error"


def as_api_error(response: HttpResponse) -> HttpResponse:
    """A non-JSON error page replaced by the API's one error shape, status and headers kept."""
    content_type = response.get("Content-Type", "")
    if response.status_code < 400 or response.streaming or content_type.startswith(_KEPT_TYPES):
        return response
    replaced = JsonResponse({"errors": [{"field": "", "message": _message(response.status_code)}]})
    replaced.status_code = response.status_code
    for name, value in response.items():
        if name.lower() not in ("content-type", "content-length"):
            replaced[name] = value
    return replaced


class ApiResponseMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith("/api/"):
            return response
        response = as_api_error(response)
        _rate_limit_headers(request, response)
        if response.status_code == 429 and not response.has_header("Retry-After"):
            response["Retry-After"] = "1"
        deprecation.announce(request, response)
        return response
