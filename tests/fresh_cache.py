"""The cache emptied before and after each test of the web apps' packages (tests/web, accounts,
teams, integrations), so that throttle counters never leak from one test into another. Their
conftest.py imports `fresh_cache`, autouse there; tests/conftest.py's `_fresh_rate_limits` empties
a shared (Redis) cache before every Django test as well."""

import contextlib

import pytest


@pytest.fixture(autouse=True)
def fresh_cache():
    """The cache is Redis when REDIS_URL is set (shared throttle counters); a test that stops Redis
    must not fail the next one here (the throttles let requests through while it is down)."""
    from django.core.cache import cache

    with contextlib.suppress(Exception):
        cache.clear()
    yield
    with contextlib.suppress(Exception):
        cache.clear()
