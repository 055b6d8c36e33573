"""Shared fixtures: API clients and users. Generic on purpose (web, sweeps and any later app)."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing(request):
    """Django's PBKDF2 (a million iterations) costs about half a second per password on an idle
    core, several seconds on a loaded one, paid by every user a test makes and every sign-in by
    password; the tests check who may do what, not the hash, so they hash with MD5. (Through
    override_settings, whose signal empties the hashers' cache; worker subprocesses keep PBKDF2.)"""
    if not request.config.pluginmanager.hasplugin("django"):
        yield  # `make test-core` runs without Django
        return
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True, scope="session")
def _private_cache_redis(request):
    """Where the settings put the cache on Redis (REDIS_URL or CACHE_URL, as under CI), the tests'
    cache lives on a redis-server of the session's own on a free port instead: the tests clear the
    cache between them (throttle counters), and clearing is a FLUSHDB that must never reach the
    Redis the machine shares. Worker subprocesses inherit it through CACHE_URL."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield  # `make test-core` runs without Django
        return
    import os

    from django.conf import settings
    from django.test import override_settings

    cache = dict(settings.CACHES["default"])
    if "RedisCache" not in cache["BACKEND"]:
        yield  # the database cache lives in the test database
        return
    from scripts.own_redis import OwnRedis

    server = OwnRedis().start()
    before = os.environ.get("CACHE_URL")
    os.environ["CACHE_URL"] = server.url
    try:
        with override_settings(CACHES={"default": {**cache, "LOCATION": server.url}}):
            yield
    finally:
        if before is None:
            os.environ.pop("CACHE_URL", None)
        else:
            os.environ["CACHE_URL"] = before
        server.close()


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password-1")


def _token_client(user):
    from rest_framework.test import APIClient

    from accounts.services import issue_token

    _, secret = issue_token(user=user, name="test client")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def user_client(user):
    """An API client authenticated with `user`'s token."""
    return _token_client(user)


@pytest.fixture
def other_client(other_user):
    """An API client authenticated with `other_user`'s token."""
    return _token_client(other_user)


@pytest.fixture(autouse=True)
def _fresh_rate_limits(request):
    """Throttle counters live in a cache shared by processes (Redis when REDIS_URL is set), so they
    would carry from one test to the next: every test starts with none. The database cache lives in
    the test database and needs no clearing; an unreachable Redis (a test stopping it) is ignored."""
    import contextlib

    if not request.config.pluginmanager.hasplugin("django"):
        return  # `make test-core` runs the core's tests without Django
    from django.conf import settings
    from django.core.cache import cache

    if "DatabaseCache" not in settings.CACHES["default"]["BACKEND"]:
        with contextlib.suppress(Exception):
            cache.clear()
    return
