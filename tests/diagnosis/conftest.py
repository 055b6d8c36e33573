"""The web tests' plain-HTTP settings (tests/web/conftest.py) and fresh cache (tests/fresh_cache.py)."""

from tests.fresh_cache import fresh_cache
from tests.integrations.conftest import eager_celery
from tests.web.conftest import _plain_http

__all__ = ["_plain_http", "eager_celery", "fresh_cache"]
