"""The web tests' plain-HTTP settings and fresh cache (tests/web/conftest.py)."""

from tests.integrations.conftest import eager_celery
from tests.web.conftest import _fresh_cache, _plain_http

__all__ = ["_fresh_cache", "_plain_http", "eager_celery"]
