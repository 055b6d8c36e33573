"""Web tests run over plain HTTP (production settings force HTTPS) with a fresh cache per test, so
throttle counters never leak from one test into another."""

import pytest
from django.test import override_settings

from tests.fresh_cache import fresh_cache  # noqa: F401 - autouse: an empty cache around each test


@pytest.fixture(scope="session", autouse=True)
def _plain_http():
    """Session-wide, so that it is in force before live_server builds its middleware."""
    with override_settings(SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False):
        yield


@pytest.fixture
def scenario():
    """A small plan that the core answers quickly: Llama 3.1 8B on 64 Ascend 910B2 cards."""
    return {
        "name": "8B test plan",
        "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 2e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"cards": 64},
    }


@pytest.fixture
def deadline_scenario():
    """The source article's example (errata applied): 70B dense, 5e11 tokens, 30 days."""
    return {
        "name": "70B dense, 500B tokens, 30 days",
        "model": {"preset": "llama-3.1-70b"},
        "training": {"tokens": 5e11},
        "hardware": {"accelerator": "ascend-910b2"},
        "cluster": {"target_days": 30},
    }


@pytest.fixture
def make_estimate(scenario):
    """Store an estimate through the service (owner optional)."""
    from reports.services import create_estimate

    def make(owner=None, data=None):
        return create_estimate(data=data or scenario, owner=owner)

    return make
