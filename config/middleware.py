"""Request guards that apply to every URL, before any view reads the body or does work.

- BodyLimitMiddleware: a body over limits.MAX_BODY_BYTES answers 413 and a chunked body (no
  Content-Length, so Django would silently read it as empty) answers 411, in the API's error shape
  under /api/ and as a short plain-text page elsewhere.
- PageThrottleMiddleware: every state-changing page request (POST/PUT/PATCH/DELETE outside /api/,
  whose views DRF throttles) spends the client's "pages" budget; 429 with Retry-After when spent.
"""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render

from api.throttling import PageWriteThrottle
from estimator import limits

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _refuse(request, status: int, message: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"errors": [{"field": "", "message": message}]}, status=status)
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        if "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
            return _refuse(
                request, 411, "send the body with a Content-Length header (chunked bodies are not read)"
            )
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _refuse(request, 400, "the Content-Length header is not a number")
        if length > limits.MAX_BODY_BYTES:
            return _refuse(
                request, 413, f"the body is {length:,} bytes; the limit is {limits.MAX_BODY_BYTES:,} bytes"
            )
        return self.get_response(request)


class PageThrottleMiddleware:
    """After authentication (per user when signed in, else per client address)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in WRITE_METHODS and not request.path.startswith("/api/"):
            throttle = PageWriteThrottle()
            if not throttle.allow_request(request, None):
                wait = int(throttle.wait() or 0) + 1
                response = render(request, "reports/throttled.html", {"wait": wait}, status=429)
                response["Retry-After"] = str(wait)
                return response
        return self.get_response(request)
