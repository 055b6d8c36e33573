"""Who a client is, and how often it may ask: the one rule for rate limits, sweep limits and login
attempt limits.

Client identity is the TCP peer (REMOTE_ADDR) unless settings.TRUSTED_PROXIES says how many
reverse proxies in front of the app append to X-Forwarded-For; then it is the address the
outermost trusted proxy saw. A client can prepend anything to X-Forwarded-For, so only the
entries the trusted proxies wrote are read (never the leftmost).

Counters live in Django's default cache, which settings make shared by every process (Redis when
REDIS_URL is set, the database otherwise), so the limit does not multiply by the number of
gunicorn workers. DRF's own classes copy DEFAULT_THROTTLE_RATES once at import, so changed
settings (and tests' override_settings) would not reach them; these look the rate up on every
request.
"""

from __future__ import annotations

import ipaddress
import logging

from django.conf import settings
from rest_framework import throttling
from rest_framework.settings import api_settings

from .conventions import RateState, record_rate_limit

log = logging.getLogger(__name__)


def client_ip(request) -> str:
    """The client's IP address (see the module docstring); "0.0.0.0" when none is usable."""
    meta = getattr(request, "META", {})
    proxies = int(getattr(settings, "TRUSTED_PROXIES", 0) or 0)
    candidate = meta.get("REMOTE_ADDR", "")
    if proxies > 0:
        hops = [h.strip() for h in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        # each trusted proxy appends the peer it saw; the last `proxies` entries are theirs
        if len(hops) >= proxies:
            candidate = hops[-proxies]
    try:
        return str(ipaddress.ip_address(candidate.strip()))
    except ValueError:
        return "0.0.0.0"


class _LiveRate(throttling.SimpleRateThrottle):
    scope: str | None

    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or "")
        return None if rate is None else str(rate)

    def get_ident(self, request) -> str:
        return client_ip(request)

    def allow_request(self, request, view) -> bool:
        """An unreachable cache (Redis restarting) lets requests through and logs it: the work
        budget per request still bounds each one, and the product stays up."""
        try:
            allowed = super().allow_request(request, view)
        except Exception as exc:  # redis.ConnectionError, database errors of the DB cache
            log.warning("rate limit %s not applied: cache unavailable (%s)", self.scope, exc)
            return True
        self._record(request, allowed)
        return allowed

    def _record(self, request, allowed: bool) -> None:
        """What this rate leaves the caller, for the RateLimit headers (api.conventions)."""
        quota, window = getattr(self, "num_requests", None), getattr(self, "duration", None)
        history = getattr(self, "history", None)
        if quota is None or window is None or history is None:
            return  # no rate for this scope, or not a counted request (a GET of sweeps)
        quota += getattr(self, "weight", 1) - 1  # a batch's throttle lowered it by its weight
        oldest_left = window - (self.now - history[-1]) if history else window
        record_rate_limit(
            request,
            RateState(
                policy=self.scope or "default",
                quota=int(quota),
                window_s=int(window),
                remaining=max(0, int(quota) - len(history)) if allowed else 0,
                reset_s=max(1, int(oldest_left + 0.999)),
            ),
        )


class AnonRateThrottle(_LiveRate, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(_LiveRate, throttling.UserRateThrottle):
    pass


class _ClientScoped(_LiveRate, throttling.SimpleRateThrottle):
    """Per user when signed in, else per client address."""

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        ident = user.pk if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


class SweepCreateThrottle(_ClientScoped):
    """Sweep requests, refused ones included (validation itself costs work)."""

    scope = "sweeps"

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)


class PageWriteThrottle(_ClientScoped):
    """State-changing page requests (form posts, sweep pages, login, language switch)."""

    scope = "pages"
