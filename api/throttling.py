"""DRF's anonymous and per-user throttles, reading their rates from settings at request time.

DRF's own classes copy DEFAULT_THROTTLE_RATES once at import, so changed settings (and tests'
override_settings) would not reach them; these look the rate up on every request."""

from rest_framework import throttling
from rest_framework.settings import api_settings


class _LiveRate:
    scope: str | None

    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or "")
        return None if rate is None else str(rate)


class AnonRateThrottle(_LiveRate, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(_LiveRate, throttling.UserRateThrottle):
    pass
