"""IdempotencyMiddleware: the Idempotency-Key header on every POST and PUT under /api/
(integrations.idempotency has the rule). It runs before the view, so it identifies the caller the
way the API does (DRF's authentication classes): a token's user, a session's user, else the client address."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.views import APIView

from api.throttling import AnonRateThrottle, UserRateThrottle, client_ip

from . import idempotency

META_KEY = "HTTP_" + idempotency.HEADER.upper().replace("-", "_")
METHODS = frozenset({"POST", "PUT"})  # what may create or file something


def caller_scope(request: HttpRequest) -> Request | None:
    """The request as DRF sees it, authenticated; None when its credentials are refused (the view
    then answers 401/403 itself and nothing is created, so there is nothing to remember)."""
    drf_request = Request(request, authenticators=APIView().get_authenticators())
    try:
        drf_request.user  # noqa: B018 - authenticates
    except exceptions.APIException:
        return None
    return drf_request


def scope_of(drf_request: Request) -> str:
    user = drf_request.user
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"ip:{client_ip(drf_request)}"


def throttled(drf_request: Request) -> HttpResponse | None:
    """An answer given here (a repeat, a conflict) spends the API's rate limit like any request."""
    for throttle in (AnonRateThrottle(), UserRateThrottle()):
        if not throttle.allow_request(drf_request, None):  # type: ignore[arg-type]  # no view
            wait = int(throttle.wait() or 0) + 1
            response = idempotency.error(429, f"too many requests; try again in {wait} seconds")
            response["Retry-After"] = str(wait)
            return response
    return None


class IdempotencyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw = request.META.get(META_KEY)
        if raw is None or request.method not in METHODS or not request.path.startswith("/api/"):
            return self.get_response(request)
        request.body  # noqa: B018 - read (bounded by BodyLimitMiddleware) before anything parses it
        drf_request = caller_scope(request)
        if drf_request is None:
            return self.get_response(request)
        key = idempotency.parse_key(raw)
        if key is None:
            answer = idempotency.error(400, f"must be {idempotency.KEY_RULE}", idempotency.HEADER)
            return throttled(drf_request) or answer
        outcome = idempotency.claim(
            scope_of(drf_request), key, idempotency.fingerprint(request), request.path
        )
        if outcome.record is None:  # a repeat, or a conflict: answered here, without the view
            return throttled(drf_request) or outcome.response or idempotency.error(409, "conflict")
        return idempotency.run(outcome.record, request, self.get_response)
