"""Accounts tests run over plain HTTP like the web tests, with a fresh cache (throttle counters)."""

import pytest
from django.test import override_settings

from tests.fresh_cache import fresh_cache  # noqa: F401 - autouse: an empty cache around each test


@pytest.fixture(scope="session", autouse=True)
def _plain_http():
    with override_settings(SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False):
        yield


@pytest.fixture
def issue(db):
    """Issue a token through the service: issue(user, name="...", expires_at=None) -> (token, secret)."""
    from accounts.services import issue_token

    def make(user, name="script", expires_at=None):
        return issue_token(user=user, name=name, expires_at=expires_at)

    return make


@pytest.fixture
def scenario():
    """A small plan the core answers quickly (as in tests/web): Llama 3.1 8B on 64 Ascend 910B2 cards."""
    return {
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"cards": 64},
    }


# headless Chromium, shared with the web tests (skipped where the browser is missing, unless CI)
from tests.web.test_browser import browser as chromium  # noqa: E402, F401
